"""A second decomposition when the first answer's weakest link is weak (``replan_below``).

The 1.5B's stepwise (Self-Ask) and planned decompositions fail on different questions, and the
judge's weakest link (``chain_support``: the least of its P(yes) that each hop's pages state its
answer and that the final answer answers the question) tells which of the two answers to keep
better than any other signal recorded (benchmarks/RESULTS.md, *A second decomposition for a weak answer*).
So the check, after judging the final answer, starts the question again, planned at once, when
that weakest link is below ``replan_below``; when the planned chain's answer has been judged in
turn, the answer with the stronger weakest link is kept, the first on a tie. The state's
``replanned`` says where this stands: "" (not started), "pending" (the check asked for it),
"planning" (decompose follows the plan), "done"; ``first_try`` holds the first answer meanwhile.
"""

from __future__ import annotations

from typing import Any

#: What the first try's outcome is, kept while the planned chain runs and put back if it stays.
OUTCOME = ("answer", "rationale", "judged", "hops", "evidence", "chains", "chosen", "draft_answer", "plan", "weight", "acted")

#: A fresh chain for the planned decomposition.
FRESH_CHAIN = {"hops": [], "chains": [], "chosen": None, "draft_answer": "", "plan": [], "weight": 1.0, "went_on": False, "sub_question": ""}


def weakest(outcome: dict[str, Any]) -> float | None:
    """An outcome's weakest link, as the check judged it (None: not judged)."""
    return (outcome.get("judged") or {}).get("chain_support")


def fmt(p: float | None) -> str:
    """A weakest link as the notes write it: three places, so that a close call shows which side won."""
    return "none" if p is None else f"{p:.3f}"


def replanned(state: dict[str, Any], update: dict[str, Any], below: float) -> dict[str, Any]:
    """The check's ``update``, with the second decomposition started or settled (see the module)."""
    if below <= 0 or update.get("sub_question") or state.get("replanned") in ("pending", "done"):
        return update  # off, the chain goes on first, or settled
    now = {**state, **update}
    notes = list(update.get("notes") or [])
    if state.get("replanned") == "planning":
        first, second = state.get("first_try") or {}, weakest(now)
        said = f"{first.get('answer')!r} (weakest link {fmt(weakest(first))}) against the planned chain's {now.get('answer')!r} ({fmt(second)})"
        if second is None or (weakest(first) is not None and weakest(first) >= second):
            return {**{k: first.get(k) for k in OUTCOME}, "replanned": "done", "notes": [*notes, f"kept the first answer: {said}"]}
        return {**update, "replanned": "done", "acted": "replanned", "notes": [*notes, f"took the planned chain's answer: {said}"]}
    link = weakest(now)
    if link is None or link >= below:
        return update
    note = f"the answer {now.get('answer')!r} has a weak link (p = {link:.2f} < {below:.2f}); the question is decomposed again, planned at once"
    return {**FRESH_CHAIN, "first_try": {k: now.get(k) for k in OUTCOME}, "replanned": "pending", "judged": {}, "notes": [*notes, note]}
