"""Evidence for the final answer: the evidence of every sub-question, re-scored against the
original question, top l (the official code re-ranks per-hop evidence against the question)."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.config import Configuration
from sunar.runtime import node, resources
from sunar.stores.corpus import Document


@node("gather")
def gather(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    cfg = Configuration.from_runnable_config(config)
    pooled: dict[str, dict] = {}
    for hop in state.get("hops") or []:
        for item in hop["evidence"]:
            pooled.setdefault(item["id"], item)
    if not pooled:
        return {"evidence": []}
    docs = [Document(e["id"], e["title"], e["text"]) for e in pooled.values()]
    scores = resources(config).scorer.score(state["question"], docs)
    ranked = sorted(zip(pooled.values(), scores, strict=True), key=lambda pair: -pair[1])[: cfg.evidence]
    return {"evidence": [{**item, "score": float(score)} for item, score in ranked]}
