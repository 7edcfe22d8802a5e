"""Does the confidence tell right answers from wrong ones? The measures, a combined score, and a
threshold with a stated error rate.

- :func:`auroc`, :func:`ece`, :func:`risk_coverage`, :func:`accuracy_at`: how well a score ranks
  and calibrates answers against cover-EM.
- :func:`cross_validated`: the signals of :mod:`sunar.signals` combined as :mod:`sunar.trust`
  does (equal weights on standardised signals, or a weight fitted per signal, each turned into a
  probability by a logistic regression), reported only on folds it was not fitted on.
- :func:`fit_calibration`: what ``sunar calibrate`` writes: the combination fitted on one half of
  a run's answers and the threshold fitted on the other half.
- :func:`check_calibration`: a fitted calibration scored on answers it never saw (another run).
- :func:`conformal_threshold`, :func:`risk_level`: the trust levels (:mod:`sunar.evals.selective`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from sunar import shape_prior
from sunar.evals.selective import conformal_threshold, error_bound, given, risk_level
from sunar.trust import COMBINED, FEATURES, WEIGHTS, predict, probability, signal_matrix

COVERAGES = (0.25, 0.5, 0.75)


def right(record: dict[str, Any]) -> float:
    """Whether a prediction is right: its cover-EM (the paper's metric), 0 without metrics."""
    return float((record.get("metrics") or {}).get("cover_em", 0.0))


def auroc(scores: Sequence[float], correct: Sequence[float]) -> float | None:
    """Probability that a right answer scores above a wrong one (ties count half); None when the
    answers are all right or all wrong."""
    y = np.asarray(correct, dtype=bool)
    positives, negatives = int(y.sum()), int((~y).sum())
    if not positives or not negatives:
        return None
    from scipy.stats import rankdata  # here: scipy.stats takes 1.4 s to import

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


def dealt(records: Sequence[dict[str, Any]], parts: int) -> np.ndarray:
    """The part (0 .. parts - 1) of each record when each dataset's records are dealt out in turn,
    in their order: every part holds about as many of each dataset. (An eval interleaves its
    datasets, so dealing by position alone would give every even record to one dataset.)"""
    seen: dict[Any, int] = {}
    out = np.zeros(len(records), dtype=int)
    for i, r in enumerate(records):
        k = r.get("dataset")
        out[i], seen[k] = seen.get(k, 0) % parts, seen.get(k, 0) + 1
    return out


def fold_fits(
    records: Sequence[dict[str, Any]], x: np.ndarray, correct: Sequence[float], folds: int, weights: str,
) -> Iterator[tuple[np.ndarray, np.ndarray, dict[str, Any]]]:
    """Each fold's records (a mask), the other folds' (a mask), and the combination (``weights``)
    fitted on those others; each dataset's records are dealt out to the folds in turn
    (:func:`dealt`). A fold that is empty, or whose others are all right or all wrong, is left out."""
    y, fit = np.asarray(correct, dtype=float), WEIGHTS[weights]
    fold = dealt(records, max(2, folds))
    for k in range(max(2, folds)):
        test, train = fold == k, fold != k
        if test.any() and len(set(y[train])) == 2:
            yield test, train, fit(x[train], y[train])


def cross_validated(
    records: Sequence[dict[str, Any]], correct: Sequence[float], folds: int = 5, features: Sequence[str] = COMBINED, weights: str = "equal",
) -> np.ndarray:
    """The combined score of every record from a model fitted on the other folds
    (:func:`fold_fits`), never in-sample (0.5 where no fold's fit could score it)."""
    x = signal_matrix(records, features)
    out = np.full(len(records), 0.5)
    for test, _, model in fold_fits(records, x, correct, folds, weights):
        out[test] = predict(model, x[test])
    return out


def summary(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The calibration figures of one variant's answered records (cover-EM is "right")."""
    rows = [r for r in records if not r.get("error")]
    correct = [right(r) for r in rows]
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
        out["signals"] = {  # a missing value ranks below every present one; a signal never kept: None
            f: None if np.isnan(x[:, i]).all() else auroc(np.nan_to_num(x[:, i], nan=np.nanmin(x[:, i]) - 1), correct)
            for i, f in enumerate(FEATURES)
        }
        combined = cross_validated(rows, correct)
        out["combined_auroc_cv"] = auroc(combined, correct)
        out["combined_accuracy_at_cv"] = {str(c): accuracy_at(combined, correct, c) for c in COVERAGES}
        out["combined_fitted_auroc_cv"] = auroc(cross_validated(rows, correct, weights="fitted"), correct)
    return out


def isotonic(scores: np.ndarray, correct: np.ndarray) -> dict[str, Any]:
    """An isotonic map from a score to the share of right answers (pool-adjacent-violators), as
    the points :func:`numpy.interp` reads. Each level is its block's share with one right and one
    wrong answer added (a uniform prior), so a block of a few answers never reads 0% or 100%."""
    from sklearn.isotonic import IsotonicRegression

    correct = np.asarray(correct, dtype=float)
    fitted = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(scores, correct)
    levels = fitted.predict(scores)
    smoothed = [(correct[inside].sum() + 1) / (inside.sum() + 2) for inside in (np.isclose(levels, y) for y in fitted.y_thresholds_)]
    return {"kind": "isotonic", "x": fitted.X_thresholds_.tolist(), "y": np.maximum.accumulate(smoothed).tolist()}


def brier(probability: Sequence[float], correct: Sequence[float]) -> float:
    """Mean squared gap between the probability given and the answer's rightness (lower is better)."""
    return float(np.mean((np.asarray(probability, dtype=float) - np.asarray(correct, dtype=float)) ** 2))


def with_shape_prior(rows: Sequence[dict[str, Any]], priors: Sequence[float | None]) -> list[dict[str, Any]]:
    """The rows, each with its ``shape_prior`` signal (:mod:`sunar.shape_prior`)."""
    return [{**r, "signals": {**(r.get("signals") or {}), "shape_prior": p}} for r, p in zip(rows, priors, strict=True)]


def alone(signal: np.ndarray, correct: Sequence[float]) -> float | None:
    """One oriented signal's AUROC, an answer without it ranked below every other; None if none has it."""
    return None if np.isnan(signal).all() else auroc(np.nan_to_num(signal, nan=np.nanmin(signal) - 1), correct)


def selected(records: Sequence[dict[str, Any]], minimum: float, correct: Sequence[float] | None = None) -> tuple[str, ...]:
    """The recorded signals whose AUROC alone on these answers is at least ``minimum`` (how
    :data:`~sunar.trust.COMBINED` was chosen; ``correct``: the answers' rightness, if not stored)."""
    rows = [r for r in records if not r.get("error") and r.get("signals")] if correct is None else list(records)
    y = np.array([right(r) for r in rows] if correct is None else correct, dtype=float)
    x = signal_matrix(rows, FEATURES)
    scores = {f: alone(x[:, i], y) for i, f in enumerate(FEATURES) if f not in ("probe", "shape_prior")}  # those two are computed, not recorded
    return tuple(f for f, score in scores.items() if score is not None and score >= minimum)


def fit_calibration(
    records: Sequence[dict[str, Any]], alpha: float, delta: float = 0.1, weights: str = "equal", features: Sequence[str] = COMBINED,
    shapes: bool = False, mapping: str = "best",
) -> dict[str, Any]:
    """The combination of signals (``weights``: equal, or one fitted per signal) fitted on every
    answer; its map to a probability (Platt: the combination's own logistic, or isotonic on its
    scores), whichever gives the lower Brier score on answers it was not fitted on (cross-fitted:
    each answer scored by a fit on the other folds), or the one ``mapping`` names ("platt",
    "isotonic"; "best": that choice); and the trust level at which the answers
    given are at most ``alpha`` wrong with probability 1 - ``delta``, found on those cross-fitted
    probabilities (cross-conformal: the promise holds for questions like these, approximately),
    beside the level at which they were at most ``alpha`` wrong, with no guarantee (:func:`risk_level`).
    With ``shapes``, the answers' questions' shapes are kept and ``shape_prior`` joins the features."""
    rows = [r for r in records if not r.get("error") and r.get("signals")]
    if len(rows) < 4:
        raise ValueError(f"{len(rows)} answers with signals; calibration needs at least 4")
    correct = np.array([right(r) for r in rows])
    questions = [str(r.get("question", "")) for r in rows]
    if shapes:  # each row's prior from the others: its own label left out
        rows, features = with_shape_prior(rows, shape_prior.leave_one_out(questions, correct)), [*features, "shape_prior"]
    if len(set(correct)) < 2:
        raise ValueError("the answers are all right or all wrong; calibrate on more questions")
    x = signal_matrix(rows, features)
    platt = np.full(len(rows), float(correct.mean()))
    iso = platt.copy()
    # each fold scored by a combination and an isotonic map fitted on the others
    for test, train, fold_model in fold_fits(rows, x, correct, 5, weights):
        platt[test] = predict(fold_model, x[test])
        m = isotonic(predict(fold_model, x[train]), correct[train])
        iso[test] = np.interp(platt[test], m["x"], m["y"])
    model = WEIGHTS[weights](x, correct)
    scores = {"platt": brier(platt, correct), "isotonic": brier(iso, correct)}
    if mapping not in ("best", *scores):
        raise ValueError(f"mapping must be best, platt or isotonic (got {mapping})")
    kind = min(scores, key=lambda k: scores[k]) if mapping == "best" else mapping
    mapping = isotonic(predict(model, x), correct) if kind == "isotonic" else {"kind": "platt"}
    held = iso if kind == "isotonic" else platt
    return {
        "features": list(features),
        "weights": weights,
        "model": model,
        "mapping": mapping,
        "brier_cv": {k: round(v, 4) for k, v in scores.items()},
        **({"shapes": shape_prior.labelled(questions, correct), "shape_k": shape_prior.K} if shapes else {}),
        "ids": [str(r["id"]) for r in rows],
        "fitted_on": len(rows),
        "auroc_held_out": auroc(held, correct),
        "ece_held_out": ece(held, correct),
        **conformal_threshold(held, correct, alpha, delta),
        **risk_level(held, correct, alpha),
    }


def auroc_interval(scores: Sequence[float], correct: Sequence[float], draws: int = 2000, seed: int = 0) -> tuple[float, float] | None:
    """A 95% bootstrap interval of the AUROC (answers resampled with replacement)."""
    s, y = np.asarray(scores, dtype=float), np.asarray(correct, dtype=float)
    rng = np.random.default_rng(seed)
    values = [a for _ in range(draws) if (a := auroc(s[i := rng.integers(0, len(s), len(s))], y[i])) is not None]
    return (float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))) if values else None


def check_calibration(calibration: dict[str, Any], records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A fitted calibration on answers it was not fitted on: how its probability ranks them (AUROC
    with a 95% interval), how far it is from their accuracy (ECE), the accuracy of the most
    trusted 25/50/75%, and what its trust level (fixed before these answers are seen) answers,
    with the Clopper-Pearson bound on the error rate of those answers at the calibration's delta."""
    rows = [r for r in records if not r.get("error") and r.get("signals")]
    if not rows:
        raise ValueError("no answers with signals to check the calibration on")
    if "shape_prior" in calibration["features"]:
        rows = with_shape_prior(rows, [shape_prior.signal(calibration, str(r.get("question", ""))) for r in rows])
    correct = np.array([right(r) for r in rows])
    scores = probability(calibration, signal_matrix(rows, calibration["features"]))
    answered, coverage, accuracy = given(scores, correct, float(calibration["threshold"]))
    errors = int((1 - correct[answered]).sum())
    level = float(calibration.get("level", math.inf))  # none (an older file, or no point kept alpha): inf
    at_level, level_coverage, level_accuracy = given(scores, correct, level)
    return {
        "n": len(rows),
        "accuracy": float(correct.mean()),
        "auroc": auroc(scores, correct),
        "auroc_95": auroc_interval(scores, correct),
        "ece": ece(scores, correct),
        "accuracy_at": {str(c): accuracy_at(scores, correct, c) for c in COVERAGES},
        "answered": int(answered.sum()),
        "coverage": coverage,
        "accuracy_answered": accuracy,
        "error_bound": error_bound(errors, int(answered.sum()), 1 - float(calibration.get("delta", 0.1))),
        "at_level": {"answered": int(at_level.sum()), "coverage": level_coverage, "accuracy": level_accuracy} if math.isfinite(level) else None,
        "scores": [round(float(v), 6) for v in scores],
    }
