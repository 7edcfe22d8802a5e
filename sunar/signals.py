"""Signals of whether an answer can be trusted, from what a run already produced: the semantic
sets of the final samples, the hops' own agreement, the evidence's scores, the chain.

Each is a number (higher: more reason to trust the answer, except ``semantic_entropy``, ``sets``,
``chain_broken``, ``unknown`` and ``fallback``) or None where a graph has no such thing. They are
kept with every answer (the state's ``signals``, each prediction of ``sunar eval``), so calibration
can be measured and refitted without the LLM.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from sunar.prompts.answer import UNKNOWN
from sunar.prompts.spans import DATE
from sunar.text import content_words, named_pages_of, normalize_answer, restates


def contains(text: str, answer: str) -> bool:
    """Whether ``text``'s normalised words hold ``answer``'s, whole words in a row (an empty answer: never)."""
    said = normalize_answer(answer)
    return bool(said) and f" {said} " in f" {normalize_answer(text)} "


def agrees(a: str, b: str) -> bool:
    """Cover-EM's test both ways: one answer's normalised words contain the other's."""
    return contains(b, a) or contains(a, b)


#: A sub-question asking for a place or a person, and an answer that is only a date or a year ("21 June
#: 1770", "June 21, 1770", "in 1770"): the one never answers the other.
_PLACE_OR_PERSON = re.compile(r"\s*(where|who|whom|whose)\b", re.IGNORECASE)
_BARE_DATE = re.compile(rf"\s*(?:(?:in|on) )?(?:{DATE.pattern})\.?\s*", re.IGNORECASE)


def fits_kind(question: str, answer: str) -> bool:
    """Whether ``answer`` can be of the kind ``question`` asks for: a bare date answers no where or who question."""
    return not (_PLACE_OR_PERSON.match(question) and _BARE_DATE.fullmatch(answer))


def known(answer: str) -> bool:
    """Whether an answer names something (not empty, not "unknown")."""
    return normalize_answer(answer) not in ("", UNKNOWN)


def semantic_entropy(sets: Sequence[Sequence[int]]) -> float:
    """Entropy (nats) of the semantic sets' shares (Farquhar et al. 2024, discrete form)."""
    total = sum(len(s) for s in sets)
    return -sum(len(s) / total * math.log(len(s) / total) for s in sets if s) if total else 0.0


def hop_agreement(hops: Sequence[dict[str, Any]]) -> float | None:
    """The weakest hop's agreement: per hop, the largest semantic set's share among the hop's own
    sampled answers, or else among those sampled from its best-agreeing batch; a chain is as weak as
    its weakest hop. None without ASU."""
    per_hop = []
    for hop in hops:
        if hop.get("candidates"):  # the hop's own samples (hop sampling)
            per_hop.append(max(c["share"] for c in hop["candidates"]))
            continue
        shares = [max(len(s) for s in b["sets"]) / len(b["answers"]) for b in hop.get("batches") or [] if b.get("answers") and b.get("sets")]
        if shares:
            per_hop.append(max(shares))
    return min(per_hop) if per_hop else None


def hop_support(hops: Sequence[dict[str, Any]]) -> float | None:
    """The weakest hop's support: P(its pages state its answer), as the LLM judged it
    (``hop_support``); None where no hop was judged."""
    judged = [float(h["support"]) for h in hops if h.get("support") is not None]
    return min(judged) if judged else None


def chain_support(hop: float | None, fits: float | None) -> float | None:
    """The chain's weakest link: the least of the weakest hop's support and the final answer's fit
    to the question (``answer_fits``); None where neither was judged."""
    judged = [p for p in (hop, fits) if p is not None]
    return min(judged) if judged else None


def chain_broken(hops: Sequence[dict[str, Any]]) -> float | None:
    """1.0 when a hop's answer only repeats words of its own sub-question ("Who is Clancy Brown?"
    "Clancy Brown") or an earlier hop's answer: the chain stalled instead of moving on. None
    without hops."""
    if not hops:
        return None
    seen: set[str] = set()
    for hop in hops:
        answer, words = normalize_answer(str(hop.get("answer") or "")), content_words(str(hop.get("answer") or ""))
        if (words and words <= content_words(str(hop.get("question") or ""))) or (answer and answer in seen):
            return 1.0
        seen.add(answer)
    return 0.0


def whole_chain(question: str, hops: Sequence[dict[str, Any]]) -> float | None:
    """0.0 when the chain is one hop whose sub-question asked only part of the question (it ended
    on the bridge it found, the hidden name, not on what was asked), 1.0 for a chain that went on
    or a hop that asked the whole question; None without hops."""
    if not hops:
        return None
    return float(len(hops) > 1 or restates(str(hops[0].get("question") or ""), question))


def with_trace_signals(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stored answers, each with :func:`from_trace`'s signals (those without signals as they are)."""
    return [{**r, "signals": from_trace(r)} if r.get("signals") else r for r in records]


def from_trace(record: dict[str, Any]) -> dict[str, Any]:
    """A stored answer's signals, with those its trace (question and ``reasoning_path``) gives
    filled in where the run predates them: older runs can be calibrated with newer signals."""
    found = dict(record.get("signals") or {})
    if "whole_chain" not in found and "reasoning_path" in record:
        found["whole_chain"] = whole_chain(str(record.get("question") or ""), record["reasoning_path"] or [])
    return found


def named_pages(hops: Sequence[dict[str, Any]]) -> float | None:
    """The share of hops whose sub-question names a page of their evidence
    (:func:`sunar.text.named_pages_of`): a hop about a named entity found that entity's page."""
    if not hops:
        return None
    named = [bool(named_pages_of(h["question"], h.get("evidence") or [])) for h in hops]
    return round(sum(named) / len(named), 4)


def signals(state: dict[str, Any], samples: Sequence[str], sets: Sequence[Sequence[int]], agreement: float | None) -> dict[str, Any]:
    """The signals of the state's final answer; ``sets`` cluster [answer, *samples] (none sampled:
    agreement None, and no sets)."""
    answer = str(state.get("answer") or "")
    hops = state.get("hops") or []
    scores = sorted((float(e["score"]) for e in state.get("evidence") or []), reverse=True)
    chain = state.get("draft_answer") or (hops[-1]["answer"] if hops else "")
    found = known(answer)
    return {
        "agreement": agreement,
        "semantic_entropy": round(semantic_entropy(sets), 6) + 0.0 if sets else None,  # + 0.0: no -0.0
        "sets": len(sets) or None,
        "hop_agreement": hop_agreement(hops),
        "hop_support": hop_support(hops),
        "evidence_top": scores[0] if scores else None,
        "evidence_margin": scores[0] - scores[1] if len(scores) > 1 else None,
        "answer_in_evidence": float(found and any(agrees(answer, e["text"]) for e in state.get("evidence") or [])),
        "chain_agrees": float(agrees(answer, chain)) if chain else None,
        "chain_broken": chain_broken(hops),
        "whole_chain": whole_chain(str(state.get("question") or ""), hops),
        "named_pages": named_pages(hops),
        "unknown": float(not found),
        "fallback": float(any("no usable final answer" in n for n in state.get("notes") or [])),
        "hops": len(hops),
        "samples": list(samples),
    }
