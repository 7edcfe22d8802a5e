"""How often questions shaped like this one were answered right: the ``shape_prior`` signal.

A calibration fitted with it (``sunar calibrate --shape-prior``) keeps the shape of every question it
was fitted on (its words without names, titles and numbers: :func:`sunar.prompts.demonstrations.shape`)
and whether that answer was right. A question's prior is the share of right answers among the ``k``
labelled questions most alike in shape (Jaccard similarity of their words), each weighted by its
similarity. The small model answers some kinds of question far more reliably than others ("Where was
the director of film X born?" against a free-form one), which the answer's own signals do not see.
A question the calibration was fitted on never counts its own label (leave one out).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sunar.prompts.demonstrations import shape

#: Labelled questions a prior is read from (the most alike in shape).
K = 10


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard similarity of two shapes (0 when both are empty)."""
    return len(a & b) / len(a | b) if a | b else 0.0


def prior(question_shape: frozenset[str], labelled: Sequence[tuple[frozenset[str], float]], k: int = K) -> float | None:
    """The similarity-weighted share of right answers among the ``k`` labelled shapes most like
    ``question_shape`` (None without labelled questions). A small floor on each weight keeps a
    question alike to none at the plain share of its neighbours."""
    ranked = sorted(((similarity(question_shape, s), right) for s, right in labelled), key=lambda p: -p[0])[:k]
    if not ranked:
        return None
    weights = [sim + 1e-3 for sim, _ in ranked]
    return round(sum(w * right for w, (_, right) in zip(weights, ranked, strict=True)) / sum(weights), 6)


def labelled(questions: Sequence[str], correct: Sequence[float]) -> list[dict[str, Any]]:
    """What a calibration keeps: each fitted question's shape and whether its answer was right."""
    return [{"shape": sorted(shape(q)), "right": float(c)} for q, c in zip(questions, correct, strict=True)]


def leave_one_out(questions: Sequence[str], correct: Sequence[float], k: int = K) -> list[float | None]:
    """Each fitted question's prior from the others (its own label left out)."""
    shapes = [shape(q) for q in questions]
    pairs = list(zip(shapes, (float(c) for c in correct), strict=True))
    return [prior(s, pairs[:i] + pairs[i + 1 :], k) for i, s in enumerate(shapes)]


def signal(calibration: dict[str, Any], question: str) -> float | None:
    """The calibration's prior for ``question`` (None when it keeps no shapes)."""
    kept = calibration.get("shapes")
    if not kept:
        return None
    return prior(shape(question), [(frozenset(item["shape"]), float(item["right"])) for item in kept], int(calibration.get("shape_k", K)))
