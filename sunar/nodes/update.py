"""NAR update (the end of one iteration of Algorithm 1's loop):

    R+ = R+ ∪ B;  R = R \\ B;  N = N \\ B
    N  = N ∪ (neighbours(B, G) \\ R+), prioritised by the score of the source document
    C  = N if C was R else R
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.resources import resources
from sunar.usage import node


def grow_frontier(
    frontier: list[tuple[str, float]],
    batch_scores: dict[str, float],
    scored: dict[str, float],
    neighbours_of: Any,
) -> list[tuple[str, float]]:
    """N ∪ neighbours of the batch not yet scored. A neighbour's priority is the best score among
    the batch documents it neighbours; ties keep the order they arrived in (stable sort)."""
    priority = dict(frontier)
    order = [doc_id for doc_id, _ in frontier]
    for source, score in sorted(batch_scores.items(), key=lambda kv: -kv[1]):
        for doc_id, _similarity in neighbours_of(source):
            if doc_id in scored:
                continue
            if doc_id not in priority:
                order.append(doc_id)
                priority[doc_id] = score
            else:
                priority[doc_id] = max(priority[doc_id], score)
    return sorted(((d, priority[d]) for d in order), key=lambda kv: -kv[1])


def make_update(use_graph: bool = True) -> Any:
    """The update node; without the graph (the Self-Ask baseline) N stays empty and C stays R."""

    @node("update")
    def update(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        batch = state["batch"]
        batch_scores = dict(zip(batch["ids"], batch["rescored"], strict=True))
        done = set(batch["ids"]) | set(batch.get("missing") or [])
        scored = {**(state.get("scored") or {}), **batch_scores}  # R+ = R+ ∪ B
        ranking = [(d, s) for d, s in state.get("ranking") or [] if d not in done]  # R \ B
        frontier = [(d, s) for d, s in state.get("frontier") or [] if d not in done]  # N \ B
        if use_graph:
            frontier = grow_frontier(frontier, batch_scores, scored, resources(config).index.neighbours)
        pool = "neighbours" if use_graph and state.get("pool") == "ranking" else "ranking"  # alternate C
        return {
            "scored": scored,
            "ranking": ranking,
            "frontier": frontier,
            "pool": pool,
            "batches": [*(state.get("batches") or []), batch],
        }

    return update
