"""A comparison decided in code (:mod:`sunar.compare`): when the question compares two named things
and its chain found a value for each, the answer is the side the values pick (or yes / no), written as
the question writes it, and no final LLM step is needed; otherwise nothing is set and the final step
answers as for any question."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.compare import decide
from sunar.usage import node


@node("compare")
def compare(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    decision = decide(state["question"], state.get("hops") or [])
    if decision is None:
        return {"compared": {}}
    return {"answer": decision.answer, "compared": {"answer": decision.answer, "values": list(decision.values)},
            "notes": [f"compared in code: {decision.note}"]}
