"""Evidence for the final answer: the evidence of every sub-question, re-scored against the
original question, top l (the official code re-ranks per-hop evidence against the question).

With ``keep_per_hop`` > 0, each sub-question's best documents are kept first: the document that
answers the last hop ("David Lynch was born in Missoula") seldom names the question's own entities
("the director of film Ronnie Rocket"), so a re-ranking against the question alone can drop it."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.resources import resources
from sunar.stores.corpus import Document
from sunar.usage import node


@node("gather")
def gather(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    cfg = Configuration.from_runnable_config(config)
    hops = state.get("hops") or []
    pooled: dict[str, dict] = {}
    for hop in hops:
        for item in hop["evidence"]:
            pooled.setdefault(item["id"], item)
    if not pooled:
        return {"evidence": []}
    docs = [Document(e["id"], e["title"], e["text"]) for e in pooled.values()]
    scores = dict(zip(pooled, resources(config).scorer.score(state["question"], docs), strict=True))
    # each hop's best, then each hop's second best, ...: a cut at l treats the hops alike
    kept = [hop["evidence"][rank]["id"] for rank in range(cfg.keep_per_hop) for hop in hops if rank < len(hop["evidence"])]
    by_score = sorted(pooled, key=lambda i: -scores[i])
    chosen = list(dict.fromkeys([*kept, *by_score]))[: cfg.evidence]
    return {"evidence": [{**pooled[i], "score": float(scores[i])} for i in sorted(chosen, key=lambda i: -scores[i])]}
