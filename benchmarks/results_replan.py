"""The second decomposition (``replan_below``, :mod:`sunar.replan`) composed from two runs of the same
questions: S's own answers, and a run of the planned chain, as the check would choose between them."""

from __future__ import annotations

from typing import Any

from benchmarks.results_runs import Records


def link(record: dict[str, Any]) -> float | None:
    """An answer's weakest link as the check recorded it (``chain_support``; None: not judged)."""
    return (record.get("signals") or {}).get("chain_support")


def composed(own: Records, planned: Records, below: float) -> tuple[Records, set[str], set[str]]:
    """``replan_below`` at ``below`` composed from two runs of the same questions, as :mod:`sunar.replan`
    decides (an unjudged answer is not weak, an unjudged planned one not taken): the answers (S's own,
    or the planned chain's where taken), and the ids where the planned chain was asked and where its
    answer was taken. Only questions both runs answered count."""
    second = {r["id"]: r for r in planned}
    mine = [r for r in own if r["id"] in second]
    asked = {r["id"] for r in mine if (x := link(r)) is not None and x < below}
    taken = {r["id"] for r in mine if r["id"] in asked and (y := link(second[r["id"]])) is not None and y > link(r)}
    return [second[r["id"]] if r["id"] in taken else r for r in mine], asked, taken
