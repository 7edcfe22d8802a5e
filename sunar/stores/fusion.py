"""Reciprocal rank fusion of first-stage rankings (the ``fused`` first stage: BM25 and dense)."""

from __future__ import annotations

from collections.abc import Sequence

#: Reciprocal rank fusion's constant (Cormack et al., 2009): a document's fused score is
#: sum over rankings of 1 / (RRF_K + rank), rank counted from 1.
RRF_K = 60


def fuse(rankings: Sequence[Sequence[tuple[str, float]]], depth: int) -> list[tuple[str, float]]:
    """Reciprocal rank fusion of rankings of (id, score): the top ``depth`` by fused score, ties
    broken by the first ranking's order."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, (doc_id, _) in enumerate(ranking, start=1):
            fused[doc_id] = fused.get(doc_id, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(fused.items(), key=lambda item: -item[1])[:depth]
