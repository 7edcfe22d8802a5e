"""NAR batch selection and scoring: B = the top b of the current pool C, scored by the scorer
(the paper's cross-encoder), never more than the budget c in all."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.nar import batch_room, next_pool
from sunar.resources import resources
from sunar.state import Batch
from sunar.usage import node


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
