"""First-stage retrieval R for the sub-question; starts NAR afresh (R+ = {}, N = {}, C = R)."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.resources import resources
from sunar.usage import node


@node("retrieve")
def retrieve(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    cfg = Configuration.from_runnable_config(config)
    query = state["sub_question"]
    ranking = resources(config).index.first_stage(query, cfg.first_stage_depth, cfg.first_stage)
    notes = [] if ranking else [f"first stage found nothing for {query!r}"]
    return {
        "ranking": [(doc_id, float(score)) for doc_id, score in ranking],
        "frontier": [],
        "scored": {},
        "pool": "ranking",
        "batches": [],
        "notes": notes,
    }
