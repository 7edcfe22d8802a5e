"""The result of one question as a plain record (what ``sunar ask --json`` prints and what each
line of an evaluation's ``predictions.jsonl`` starts from), and its answer and confidence in words,
as the CLI and the chat reply say them."""

from __future__ import annotations

from typing import Any


def result_record(out: dict[str, Any], variant: str) -> dict[str, Any]:
    """The caller-facing fields of a graph's final state."""
    return {
        "question": out.get("question"),
        "variant": variant,
        "answer": str(out.get("answer") or ""),
        "confidence": out.get("confidence", 0.0),
        "confidence_basis": out.get("confidence_basis") or "",
        "trust": out.get("trust"),
        "abstained": bool(out.get("abstained")),
        "why": out.get("why") or "",
        "signals": out.get("signals") or {},
        "reasoning_path": out.get("reasoning_path") or [],
        "plan": out.get("plan") or [],
        "chains": [
            {"answer": c["answer"], "weight": c["weight"], "path": [{"question": h["question"], "answer": h["answer"]} for h in c["hops"]]}
            for c in out.get("chains") or []
            if c["status"] == "done"
        ],
        "chosen": out.get("chosen"),
        "evidence": [{"id": e["id"], "title": e["title"], "score": round(e["score"], 4), "text": e["text"]} for e in out.get("evidence") or []],
        # the reply's [n] list: the pages the reasoning used first (sunar.citations), then the rest of the evidence
        "cited": [{"id": c["id"], "title": c["title"], "used": c["used"], "steps": c["steps"], "final": c["final"]} for c in out.get("cited") or []],
        "rationale": out.get("rationale") or "",
        "notes": out.get("notes") or [],
        "usage": out.get("usage") or {},
    }


def confidence_lines(answer: str, confidence: float, trust: float | None, abstained: bool, why: str, basis: str) -> list[str]:
    """The answer and what to make of it, in words that never contradict each other: a calibrated
    probability that it is right (with what pulls it down, below one half), the samples' agreement
    named as such where no calibration applies, and "I don't know" with the best guess below the
    level the user asked for (``min_trust``)."""
    if abstained:
        level = f"{trust:.0%} likely right, below the level set to answer" if trust is not None else basis
        return ["I don't know.", f"Best guess: {answer} ({level}).", *([f"Why: {why}."] if why and trust is not None else [])]
    if trust is None:
        return [answer, "", f"Sampled answers agreeing with it: {confidence:.0%} (not a probability of being right; {basis})."]
    lines = [answer, "", f"Confidence: {trust:.0%} that this is right ({basis})."]
    return lines + ([f"Doubts: {why}."] if why else [])
