"""The answer's confidence from semantic uncertainty: m answers to the original question are
sampled from the same evidence, and the confidence is the share of them that NLI puts in the same
semantic set as the final answer."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar import prompts
from sunar.config import Configuration
from sunar.models.nli import semantic_sets
from sunar.nodes.text import clean_answer
from sunar.runtime import node, resources


@node("confidence")
def confidence(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    cfg = Configuration.from_runnable_config(config)
    res = resources(config)
    m = max(1, cfg.samples)
    replies = res.llm.sample(
        prompts.answer_messages(state["question"], state.get("evidence") or []), m, temperature=cfg.temperature, max_tokens=min(cfg.max_tokens, 48)
    )
    samples = [clean_answer(str(r.content)) for r in replies]
    sets = semantic_sets(state["question"], [state["answer"], *samples], res.nli)
    agreeing = len(next(s for s in sets if 0 in s)) - 1
    return {"confidence": round(agreeing / m, 4), "notes": [] if agreeing else ["no sampled answer agrees with the final answer"]}
