"""The result of one question as a plain record: what ``sunar ask --json`` prints and what each
line of an evaluation's ``predictions.jsonl`` starts from."""

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
        "chains": [
            {"answer": c["answer"], "weight": c["weight"], "path": [{"question": h["question"], "answer": h["answer"]} for h in c["hops"]]}
            for c in out.get("chains") or []
            if c["status"] == "done"
        ],
        "chosen": out.get("chosen"),
        "evidence": [{"id": e["id"], "title": e["title"], "score": round(e["score"], 4), "text": e["text"]} for e in out.get("evidence") or []],
        "rationale": out.get("rationale") or "",
        "notes": out.get("notes") or [],
        "usage": out.get("usage") or {},
    }
