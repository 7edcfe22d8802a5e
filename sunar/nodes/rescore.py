"""Rescoring: evidence that leaves the LLM uncertain sinks.

``paper``:    score_i / s, where s is the number of semantic sets of the batch's answers.
``official``: after the official code: score_i divided by half the number of answer pairs that NLI
              finds contradictory, never by less than 1 (so no batch is boosted and a batch whose
              answers never contradict keeps its scores).
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.usage import node


def divisor(batch: dict[str, Any], formula: str) -> float:
    if formula == "official":
        return max(1.0, batch.get("contradictions", 0) / 2.0)
    return float(max(1, len(batch.get("sets") or [])))


def rescored(scores: list[float], by: float) -> list[float]:
    """Divide positive scores by ``by``; negative scores (logits) are multiplied, so that more
    uncertainty always means a lower score whatever the scorer's range."""
    return [s / by if s >= 0 else s * by for s in scores]


@node("rescore")
def rescore(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    cfg = Configuration.from_runnable_config(config)
    batch = dict(state["batch"])
    batch["rescored"] = rescored(batch["scores"], divisor(batch, cfg.rescoring))
    return {"batch": batch}
