"""Selective answering: the trust level above which answers are given.

- :func:`conformal_threshold`: the lowest score threshold whose answered questions' error rate is
  at most alpha with probability at least 1 - delta (selection with guaranteed risk, Geifman and
  El-Yaniv 2017); the guarantee assumes the questions it is used on are exchangeable with the ones
  it was fitted on (same corpus, model and kind of question).
- :func:`risk_level`: the lowest score threshold whose answered questions were at most alpha wrong,
  with no guarantee (the point on the risk-coverage curve): where a hundred answers cannot carry
  the guarantee, it is the level a user can set, and what it did on other questions is measured.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def error_bound(errors: int, answered: int, confidence: float) -> float:
    """Clopper-Pearson upper bound on the error rate of ``answered`` answers with ``errors``."""
    if answered == 0 or errors >= answered:
        return 1.0
    from scipy.stats import beta  # here: scipy.stats takes 1.4 s to import

    return float(beta.ppf(confidence, errors + 1, answered - errors))


def given(scores: np.ndarray, correct: np.ndarray, threshold: float) -> tuple[np.ndarray, float, float | None]:
    """The answers given at ``threshold`` (a mask), their share of all, and the share of them right
    (None when none is given)."""
    answered = scores >= threshold
    return answered, float(answered.mean()) if len(scores) else 0.0, float(correct[answered].mean()) if answered.any() else None


def conformal_threshold(scores: Sequence[float], correct: Sequence[float], alpha: float, delta: float = 0.1) -> dict[str, Any]:
    """The threshold on the score above which answers are given, so that the answered questions'
    error rate is at most ``alpha`` with probability at least 1 - ``delta`` (Geifman and El-Yaniv's
    selection with guaranteed risk, 2017): a binary search over the calibration scores, each of its
    ceil(log2 n) steps testing a threshold by the Clopper-Pearson bound at level delta / steps; the
    lowest threshold that passed is kept. None passed: nothing is answered (threshold inf)."""
    s, y = np.asarray(scores, dtype=float), np.asarray(correct, dtype=float)
    candidates = sorted(set(s.tolist()))
    steps = max(1, math.ceil(math.log2(max(2, len(candidates)))))
    low, high, chosen = 0, len(candidates) - 1, math.inf
    for _ in range(steps):
        if low > high:
            break
        mid = (low + high + 1) // 2
        answered = s >= candidates[mid]
        bound = error_bound(int((1 - y[answered]).sum()), int(answered.sum()), 1 - delta / steps)
        if bound <= alpha:
            chosen, high = candidates[mid], mid - 1  # safe: try answering more
        else:
            low = mid + 1  # not safe: answer fewer
    _, coverage, accuracy = given(s, y, chosen)
    return {"threshold": chosen, "alpha": alpha, "delta": delta, "n": len(s), "coverage": coverage, "accuracy_answered": accuracy}


def risk_level(scores: Sequence[float], correct: Sequence[float], alpha: float) -> dict[str, Any]:
    """The lowest threshold on the score at which the answers given were at most ``alpha`` wrong
    (the most answered such point of the risk-coverage curve; ties answered together), as
    ``level``, with what it answered (``level_coverage``, ``level_accuracy``). No point is: inf."""
    s, y = np.asarray(scores, dtype=float), np.asarray(correct, dtype=float)
    kept = [t for t in sorted(set(s.tolist())) if (1 - y[s >= t]).mean() <= alpha]
    level = kept[0] if kept else math.inf
    _, coverage, accuracy = given(s, y, level)
    return {"level": level, "level_coverage": coverage, "level_accuracy": accuracy}


def shape_levels(scores: Sequence[float], correct: Sequence[float], shapes: Sequence[str], alpha: float, delta: float = 0.1,
                 minimum: int = 30) -> dict[str, float]:
    """The conformal threshold of :func:`conformal_threshold` found for each shape of question on its own
    answers, where it has at least ``minimum`` labelled ones: each promise (at most ``alpha`` wrong with
    probability 1 - ``delta``) is then about questions of that shape. A shape with fewer has no level
    (nothing promised: left out of the dict); a shape's level that nothing passed is inf."""
    s, y, kinds = np.asarray(scores, dtype=float), np.asarray(correct, dtype=float), np.asarray(shapes, dtype=object)
    levels = {}
    for kind in sorted(set(kinds.tolist())):
        mine = kinds == kind
        if mine.sum() >= minimum:
            levels[kind] = float(conformal_threshold(s[mine], y[mine], alpha, delta)["threshold"])
    return levels
