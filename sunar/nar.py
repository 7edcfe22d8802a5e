"""The NAR loop of Algorithm 1 as rules on the state: which pool C the next batch comes from, how
much room the budget c leaves, and when the loop ends (and why).

    while |R+| < c and (R or N) not empty [and not stalled]:
        B = score top-b of C; ... ; R+ = R+ ∪ B; C alternates between R and N

The graph's edges ask :func:`nar_goes_on`; ``answer_hop`` asks :func:`stop_reason` to say why the
loop ended, so the rule lives here alone.
"""

from __future__ import annotations

from typing import Any, Literal

from sunar.configuration import Configuration
from sunar.state import Pool

Stop = Literal["exhausted", "budget", "stalled"]


def top(scored: dict[str, float], n: int) -> list[str]:
    """Ids of the n best-scored documents (ties keep insertion order)."""
    return [doc_id for doc_id, _ in sorted(scored.items(), key=lambda kv: -kv[1])[:n]]


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


def stop_reason(state: dict[str, Any], cfg: Configuration) -> Stop | None:
    """Why the NAR loop must end now (None: it goes on): no candidate left in R or N, the budget
    c spent, or (early stop) stalled."""
    if not next_pool(state):
        return "exhausted"
    if batch_room(state, cfg) <= 0:
        return "budget"
    if stalled(state, cfg):
        return "stalled"
    return None


def stall_note(state: dict[str, Any], cfg: Configuration) -> list[str]:
    """The note that NAR stopped early for the sub-question (``nar_patience``), or none."""
    if stop_reason(state, cfg) != "stalled":
        return []
    return [f"NAR stopped early for {state['sub_question']!r} after {len(state.get('scored') or {})} of {cfg.budget} documents: "
            f"the last {cfg.nar_patience} batch(es) added nothing to the top {cfg.evidence}"]


def outranked(state: dict[str, Any], cfg: Configuration) -> bool:
    """Whether answer sampling can be skipped for the batch just scored: with ``asu_skip_outranked``,
    its best score is no higher than the l-th best of R+ already. Rescoring only lowers scores and
    ties keep the earlier document, so none of the batch can reach the top l (the sub-question's
    evidence) whatever its answers; only the priority its neighbours get in N can differ."""
    scored = state.get("scored") or {}
    if not cfg.asu_skip_outranked or len(scored) < cfg.evidence:
        return False
    floor = sorted(scored.values(), reverse=True)[cfg.evidence - 1]
    return max(state["batch"]["scores"], default=floor) <= floor


def nar_goes_on(state: dict[str, Any], cfg: Configuration) -> bool:
    """Algorithm 1's loop condition."""
    return stop_reason(state, cfg) is None
