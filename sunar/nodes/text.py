"""Small text helpers shared by nodes: cleaning a model's short answer, evidence records."""

from __future__ import annotations

import re
from collections.abc import Sequence

from sunar.state import Evidence
from sunar.stores.corpus import Document

UNKNOWN = "unknown"
_LABEL = r"(short answer|answer|intermediate answer|final answer)"
#: A leading label: "Answer: X", or bracketed as MER is asked to write it, where small models
#: sometimes drop the colon ("[Final Answer] X").
_LEAD = re.compile(rf"^(\[{_LABEL}\]\s*:?|{_LABEL}\s*:)\s*", re.IGNORECASE)
_UNKNOWN = re.compile(r"^(unknown|i don'?t know|not (stated|mentioned|given)|no answer|none|n/?a)\b", re.IGNORECASE)


def clean_answer(text: str) -> str:
    """The first non-empty line of a reply, without labels, quotes and a trailing full stop.
    Empty or "I don't know"-like replies become ``unknown``."""
    line = next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")
    line = _LEAD.sub("", line).strip().rstrip(".").strip("*\"'` ").rstrip(".").strip()
    if not line or _UNKNOWN.match(line):
        return UNKNOWN
    return line[:300]


def evidence(docs: Sequence[Document], scores: dict[str, float]) -> list[Evidence]:
    return [Evidence(id=d.id, title=d.title, text=d.text, score=float(scores.get(d.id, 0.0))) for d in docs]


def top(scored: dict[str, float], n: int) -> list[str]:
    """Ids of the n best-scored documents (ties keep insertion order)."""
    return [doc_id for doc_id, _ in sorted(scored.items(), key=lambda kv: -kv[1])[:n]]
