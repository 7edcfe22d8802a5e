"""NAR batch selection and scoring: B = the top b of the current pool C, scored by the scorer
(the paper's cross-encoder), never more than the budget c in all."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.config import Configuration
from sunar.nodes.text import top
from sunar.runtime import node, resources
from sunar.state import Batch, Pool


def next_pool(state: dict[str, Any]) -> Pool | None:
    """C, or the other pool when C is empty; None when both are (NAR must stop)."""
    pools: dict[Pool, list] = {"ranking": state.get("ranking") or [], "neighbours": state.get("frontier") or []}
    current: Pool = state.get("pool") or "ranking"
    other: Pool = "neighbours" if current == "ranking" else "ranking"
    if pools[current]:
        return current
    return other if pools[other] else None


def batch_room(state: dict[str, Any], cfg: Configuration) -> int:
    """How many documents the next batch may hold: b, or less when the budget c is nearly spent."""
    return max(0, min(cfg.batch_size, cfg.budget - len(state.get("scored") or {})))


def stalled(state: dict[str, Any], cfg: Configuration) -> bool:
    """NAR early stop: the last ``nar_patience`` batches hold none of the top l documents of R+,
    so the evidence the sub-question's answer uses has stopped changing."""
    if cfg.nar_patience <= 0:
        return False
    recent = (state.get("batches") or [])[-cfg.nar_patience :]
    if len(recent) < cfg.nar_patience:
        return False
    best = set(top(state.get("scored") or {}, max(1, cfg.evidence)))
    return not any(best.intersection(b["ids"]) for b in recent)


def nar_goes_on(state: dict[str, Any], cfg: Configuration) -> bool:
    """Algorithm 1's loop condition: candidates remain, |R+| < c, and (early stop) not stalled."""
    return bool(next_pool(state)) and batch_room(state, cfg) > 0 and not stalled(state, cfg)


@node("select_batch")
def select_batch(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    cfg = Configuration.from_runnable_config(config)
    res = resources(config)
    source = next_pool(state)
    if source is None:
        raise RuntimeError("select_batch called with both pools empty")  # the edge guards this
    candidates = state["ranking"] if source == "ranking" else state["frontier"]
    ids = [doc_id for doc_id, _ in candidates[: batch_room(state, cfg)]]
    docs = res.index.documents(ids)
    found = {d.id for d in docs}
    scores = res.scorer.score(state["sub_question"], docs)
    batch = Batch(source=source, ids=[d.id for d in docs], scores=scores, rescored=list(scores))
    missing = [i for i in ids if i not in found]
    if missing:  # ids the store cannot return leave the pools with the batch, unscored
        batch["missing"] = missing
    return {"batch": batch, "pool": source, "notes": [f"{len(missing)} ranked ids missing from the store"] if missing else []}
