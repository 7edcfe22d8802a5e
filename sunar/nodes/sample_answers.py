"""Answer sampling (ASU): m answers from the LLM given the sub-question and the batch B."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.prompts.answer import answer_from, answer_messages, short_call
from sunar.resources import resources
from sunar.state import evidence_of
from sunar.usage import node


@node("sample_answers")
def sample_answers(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    cfg = Configuration.from_runnable_config(config)
    res = resources(config)
    batch = dict(state["batch"])
    evidence = evidence_of(res.index.documents(batch["ids"]), {})
    replies = res.llm.sample(
        answer_messages(state["sub_question"], evidence),
        cfg.samples,
        temperature=cfg.temperature,
        **short_call(cfg),
    )
    batch["answers"] = [answer_from(str(r.content), state["sub_question"], evidence) for r in replies]
    return {"batch": batch}
