"""The sub-question's evidence (top l of R+) and the LLM's intermediate answer, which feeds the
next Self-Ask step."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.nar import stop_reason, top
from sunar.prompts.answer import SCHEMA, answer_messages, read_answer
from sunar.resources import resources
from sunar.state import Hop, evidence_of
from sunar.usage import node


@node("answer_hop")
def answer_hop(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    cfg = Configuration.from_runnable_config(config)
    res = resources(config)
    scored = state.get("scored") or {}
    docs = res.index.documents(top(scored, cfg.evidence))
    found = evidence_of(docs, scored)
    reply = res.llm.generate(
        answer_messages(state["sub_question"], found),
        temperature=0.0,
        max_tokens=min(cfg.max_tokens, 48),
        config=config,
        schema=cfg.reply_schema(SCHEMA),
    )
    notes = []
    if stop_reason(state, cfg) == "stalled":
        notes.append(
            f"NAR stopped early for {state['sub_question']!r} after {len(scored)} of {cfg.budget} documents: "
            f"the last {cfg.nar_patience} batch(es) added nothing to the top {cfg.evidence}"
        )
    hop = Hop(question=state["sub_question"], answer=read_answer(str(reply.content)), evidence=found, batches=state.get("batches") or [])
    return {"hops": [*(state.get("hops") or []), hop], "sub_question": "", "notes": notes}
