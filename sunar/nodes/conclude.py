"""The final answer without MER (SUNAR_R, Self-Ask): Self-Ask's own final answer, or, when
Self-Ask stopped without one (hop limit, repeated follow-up, broken format), one answer call on
the gathered evidence and the reasoning path."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.prompts.answer import answer_from, answer_messages, short_call
from sunar.resources import resources
from sunar.usage import node


@node("conclude")
def conclude(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    if state.get("draft_answer"):
        return {"answer": state["draft_answer"]}
    cfg = Configuration.from_runnable_config(config)
    path = "; ".join(f"{h['question']} -> {h['answer']}" for h in state.get("hops") or [])
    question = f"{state['question']} (known so far: {path})" if path else state["question"]
    evidence = state.get("evidence") or []
    reply = resources(config).llm.generate(
        answer_messages(question, evidence),
        temperature=0.0,
        config=config,
        **short_call(cfg),
    )
    return {"answer": answer_from(str(reply.content), question, evidence)}
