"""First-stage retrieval R for the sub-question; starts NAR afresh (R+ = {}, N = {}, C = R).

When an uncertain hop is retrieved again (``requery``), R is the first stage of the sub-question with
its candidate answers appended, without the documents scored already; the first round's R+ and
batches wait in ``prior`` for ``answer_hop``."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.resources import resources
from sunar.usage import node


@node("retrieve")
def retrieve(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    cfg = Configuration.from_runnable_config(config)
    query = state.get("requery") or state["sub_question"]
    ranking = resources(config).index.first_stage(query, cfg.first_stage_depth, cfg.first_stage)
    update: dict[str, Any] = {}
    if state.get("requery"):
        before = state.get("scored") or {}
        update["prior"] = {"scored": before, "batches": state.get("batches") or []}
        ranking = [(doc_id, score) for doc_id, score in ranking if doc_id not in before]
    notes = [] if ranking else [f"first stage found nothing for {query!r}"]
    return {
        **update,
        "ranking": [(doc_id, float(score)) for doc_id, score in ranking],
        "frontier": [],
        "scored": {},
        "pool": "ranking",
        "batches": [],
        "notes": notes,
    }
