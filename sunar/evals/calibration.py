"""Does the confidence tell right answers from wrong ones? The measures, a combined score, and a
threshold with a stated error rate.

- :func:`auroc`, :func:`ece`, :func:`risk_coverage`, :func:`accuracy_at`: how well a score ranks
  and calibrates answers against cover-EM.
- :func:`signal_matrix`, :func:`fit_logistic`, :func:`cross_validated`: the signals of
  :mod:`sunar.signals` combined by an L2-regularised logistic regression, reported only on folds
  it was not fitted on.
- :func:`conformal_threshold`: the lowest score threshold whose answered questions' error rate is
  at most alpha with probability at least 1 - delta (selection with guaranteed risk, Geifman and
  El-Yaniv 2017); the guarantee assumes the questions it is used on are exchangeable with the ones
  it was fitted on (same corpus, model and kind of question).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.stats import beta, rankdata

#: The signals the combined score uses, each oriented so that higher means more trust.
FEATURES: tuple[str, ...] = (
    "agreement", "semantic_entropy", "sets", "hop_agreement", "evidence_top", "evidence_margin",
    "answer_in_evidence", "chain_agrees", "unknown", "fallback",
)
#: Signals where a higher value means less trust (negated when measured alone).
DISTRUST = frozenset({"semantic_entropy", "sets", "unknown", "fallback"})
COVERAGES = (0.25, 0.5, 0.75)


def auroc(scores: Sequence[float], correct: Sequence[float]) -> float | None:
    """Probability that a right answer scores above a wrong one (ties count half); None when the
    answers are all right or all wrong."""
    y = np.asarray(correct, dtype=bool)
    positives, negatives = int(y.sum()), int((~y).sum())
    if not positives or not negatives:
        return None
    ranks = rankdata(np.asarray(scores, dtype=float))
    return float((ranks[y].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def ece(confidence: Sequence[float], correct: Sequence[float], bins: int = 10) -> float:
    """Expected calibration error: the answer-weighted gap between confidence and accuracy over
    equal-width bins."""
    conf, y = np.asarray(confidence, dtype=float), np.asarray(correct, dtype=float)
    if not len(conf):
        return 0.0
    which = np.minimum((conf * bins).astype(int), bins - 1)
    return float(sum(abs(conf[which == b].mean() - y[which == b].mean()) * (which == b).sum() for b in range(bins) if (which == b).any()) / len(conf))


def _order(scores: Sequence[float]) -> np.ndarray:
    return np.argsort(-np.asarray(scores, dtype=float), kind="stable")


def accuracy_at(scores: Sequence[float], correct: Sequence[float], coverage: float) -> float | None:
    """Accuracy of the answers kept when only the best-scored ``coverage`` share is answered."""
    if not len(scores):
        return None
    keep = max(1, math.ceil(coverage * len(scores)))
    return float(np.asarray(correct, dtype=float)[_order(scores)[:keep]].mean())


def risk_coverage(scores: Sequence[float], correct: Sequence[float]) -> list[tuple[float, float]]:
    """(coverage, accuracy of the answered) for every number of answered questions, best first."""
    y = np.asarray(correct, dtype=float)[_order(scores)]
    return [(k / len(y), float(y[:k].mean())) for k in range(1, len(y) + 1)]


def oriented(name: str, value: Any) -> float | None:
    """A signal's value with higher meaning more trust (None stays None)."""
    if value is None:
        return None
    return -float(value) if name in DISTRUST else float(value)


def signal_matrix(records: Sequence[dict[str, Any]], features: Sequence[str] = FEATURES) -> np.ndarray:
    """Records x features, oriented; a missing signal is NaN."""
    return np.array(
        [[np.nan if (v := oriented(f, (r.get("signals") or {}).get(f))) is None else v for f in features] for r in records], dtype=float
    ).reshape(len(records), len(features))


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, iterations: int = 50) -> dict[str, Any]:
    """An L2-regularised logistic regression by Newton's method on standardised features (a
    missing value is the feature's mean); the model as plain lists, for a JSON file."""
    mean = np.nanmean(np.where(np.isnan(x).all(axis=0), 0.0, x), axis=0) if len(x) else np.zeros(x.shape[1])
    mean = np.nan_to_num(mean)
    filled = np.where(np.isnan(x), mean, x)
    scale = filled.std(axis=0)
    scale[scale == 0] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (filled - mean) / scale])
    w = np.zeros(z.shape[1])
    penalty = np.diag([0.0] + [l2] * (z.shape[1] - 1))
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-z @ w))
        gradient = z.T @ (p - y) + penalty @ w
        hessian = z.T @ (z * (p * (1 - p))[:, None]) + penalty + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return {"mean": mean.tolist(), "scale": scale.tolist(), "intercept": float(w[0]), "coef": w[1:].tolist()}


def predict(model: dict[str, Any], x: np.ndarray) -> np.ndarray:
    """The probability that each answer is right under a :func:`fit_logistic` model."""
    mean, scale = np.asarray(model["mean"]), np.asarray(model["scale"])
    z = (np.where(np.isnan(x), mean, x) - mean) / scale
    return 1 / (1 + np.exp(-(model["intercept"] + z @ np.asarray(model["coef"]))))


def cross_validated(records: Sequence[dict[str, Any]], correct: Sequence[float], folds: int = 5) -> np.ndarray:
    """The combined score of every record from a model fitted on the other folds (by position:
    record i is in fold i mod ``folds``), never in-sample."""
    x, y = signal_matrix(records), np.asarray(correct, dtype=float)
    out = np.full(len(records), 0.5)
    fold = np.arange(len(records)) % max(2, folds)
    for k in range(max(2, folds)):
        test, train = fold == k, fold != k
        if test.any() and len(set(y[train])) == 2:
            out[test] = predict(fit_logistic(x[train], y[train]), x[test])
    return out


def error_bound(errors: int, answered: int, confidence: float) -> float:
    """Clopper-Pearson upper bound on the error rate of ``answered`` answers with ``errors``."""
    if answered == 0:
        return 1.0
    return 1.0 if errors >= answered else float(beta.ppf(confidence, errors + 1, answered - errors))


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
    answered = s >= chosen
    return {
        "threshold": chosen,
        "alpha": alpha,
        "delta": delta,
        "n": len(s),
        "coverage": float(answered.mean()) if len(s) else 0.0,
        "accuracy_answered": float(y[answered].mean()) if answered.any() else None,
    }


def summary(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The calibration figures of one variant's answered records (cover-EM is "right")."""
    rows = [r for r in records if not r.get("error")]
    correct = [float(r["metrics"].get("cover_em", 0.0)) for r in rows]
    confidence = [float(r.get("confidence") or 0.0) for r in rows]
    out: dict[str, Any] = {
        "n": len(rows),
        "auroc": auroc(confidence, correct),
        "ece": ece(confidence, correct),
        "accuracy_at": {str(c): accuracy_at(confidence, correct, c) for c in COVERAGES},
        "signals": {},
    }
    with_signals = [r for r in rows if r.get("signals")]
    if len(with_signals) == len(rows) and rows:
        x = signal_matrix(rows)
        out["signals"] = {
            f: auroc(np.nan_to_num(x[:, i], nan=np.nanmin(x[:, i]) - 1 if not np.isnan(x[:, i]).all() else 0.0), correct)
            for i, f in enumerate(FEATURES)
        }
        combined = cross_validated(rows, correct)
        out["combined_auroc_cv"] = auroc(combined, correct)
        out["combined_accuracy_at_cv"] = {str(c): accuracy_at(combined, correct, c) for c in COVERAGES}
    return out
