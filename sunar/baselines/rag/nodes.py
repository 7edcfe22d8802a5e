"""Retrieve-then-read's own node. The pool and the reader are GenSco's
(:mod:`sunar.baselines.gensco.nodes`), so the two differ only in how passages are chosen.

    rank    the pool re-ranked by the scorer against the question, top ``evidence`` (l)
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.baselines.gensco.nodes import best_passages
from sunar.configuration import Configuration
from sunar.resources import resources
from sunar.usage import node


@node("rank")
def rank(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """The l best passages of the pool for the question, by the scorer (ties keep the pool's order)."""
    cfg = Configuration.from_runnable_config(config)
    passages = state.get("pool") or []
    if not passages:
        return {"evidence": []}
    return {"evidence": best_passages(resources(config), state["question"], passages, cfg.evidence)}
