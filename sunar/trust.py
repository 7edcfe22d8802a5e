"""Whether the product stands behind an answer: the signals of :mod:`sunar.signals` combined into
one score (the probability that the answer is right), and, with a calibration fitted by
``sunar calibrate``, a threshold below which the answer is given only as a best guess.

A calibration file records the LLM it was fitted for and the data (corpus and questions) it was
fitted on, the combination (standardised signals with equal weights, or a weight fitted per
signal, made a probability by an L2-regularised logistic regression) and the threshold with its promise: among the answers given, at most ``alpha`` wrong with
probability 1 - ``delta``, for questions like the ones it was fitted on.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from sunar.errors import SunarError

#: Every signal of trust an eval report rates, each oriented so that higher means more trust.
FEATURES: tuple[str, ...] = (
    "agreement", "semantic_entropy", "sets", "hop_agreement", "evidence_top", "evidence_margin",
    "answer_in_evidence", "chain_agrees", "chain_broken", "unknown", "fallback", "answer_logprob",
)
#: The signals the combined score uses: the final samples' agreement and semantic entropy, the
#: weakest hop's agreement and whether the chain stalled. The others are measured beside them in
#: every eval report, but on the dev data each is near chance alone and adding them makes the
#: cross-validated combination worse (benchmarks/RESULTS.md, "Confidence and calibration").
COMBINED: tuple[str, ...] = ("agreement", "semantic_entropy", "hop_agreement", "chain_broken")
#: Signals where a higher value means less trust (negated).
DISTRUST = frozenset({"semantic_entropy", "sets", "chain_broken", "unknown", "fallback"})
#: What a signal that pulls the score down says to a user.
REASONS = {
    "agreement": "the sampled answers disagree with it",
    "semantic_entropy": "the sampled answers mean different things",
    "sets": "the sampled answers mean different things",
    "hop_agreement": "a hop's sampled answers disagree",
    "evidence_top": "the best evidence is a weak match for the question",
    "evidence_margin": "no piece of evidence stands out",
    "answer_in_evidence": "the answer is not in the cited evidence",
    "chain_agrees": "the reasoning chain's own answer differs",
    "chain_broken": "a hop only repeated its question or an earlier answer",
    "unknown": "no answer was found",
    "fallback": "the final reasoning broke its format",
    "answer_logprob": "the model finds the answer unlikely given its evidence",
}
#: Shipped calibrations (fitted on the shared multi-hop dev data), by file name.
SHIPPED = Path(__file__).parent / "data" / "calibration"


def oriented(name: str, value: Any) -> float | None:
    """A signal's value with higher meaning more trust (None stays None)."""
    if value is None:
        return None
    return -float(value) if name in DISTRUST else float(value)


def signal_matrix(records: Any, features: Any = FEATURES) -> np.ndarray:
    """Records (each with ``signals``) x features, oriented; a missing signal is NaN."""
    return np.array(
        [[np.nan if (v := oriented(f, (r.get("signals") or {}).get(f))) is None else v for f in features] for r in records], dtype=float
    ).reshape(len(records), len(features))


def _standardised(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, scale, z): each feature's mean and spread, and the features standardised with a
    missing value at the feature's mean (z = 0)."""
    seen = ~np.isnan(x)
    mean = np.array([x[seen[:, j], j].mean() if seen[:, j].any() else 0.0 for j in range(x.shape[1])])
    filled = np.where(seen, x, mean)
    scale = filled.std(axis=0)
    scale[scale == 0] = 1.0
    return mean, scale, (filled - mean) / scale


def _newton(z: np.ndarray, y: np.ndarray, l2: float, iterations: int = 50) -> np.ndarray:
    """Weights [intercept, *coef] of an L2-regularised logistic regression on z, by Newton's method."""
    z = np.hstack([np.ones((len(z), 1)), z])
    w = np.zeros(z.shape[1])
    penalty = np.diag([0.0] + [l2] * (z.shape[1] - 1))
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-z @ w))
        step = np.linalg.solve(z.T @ (z * (p * (1 - p))[:, None]) + penalty + 1e-9 * np.eye(len(w)), z.T @ (p - y) + penalty @ w)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> dict[str, Any]:
    """An L2-regularised logistic regression on standardised features, a weight per feature; the
    model as plain lists, for a JSON file."""
    mean, scale, z = _standardised(x)
    w = _newton(z, y, l2)
    return {"mean": mean.tolist(), "scale": scale.tolist(), "intercept": float(w[0]), "coef": w[1:].tolist()}


def fit_equal_weights(x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> dict[str, Any]:
    """One weight for all the standardised signals (each oriented so that higher means more
    trust): their mean, turned into a probability by a logistic fit of two numbers. With tens of
    labelled answers, weights fitted per signal follow noise and can turn a signal against its
    sense; equal weights cannot (and a slope below 0 is cut to 0: no signal then counts). The same
    model format as :func:`fit_logistic`."""
    mean, scale, z = _standardised(x)
    w = _newton(z.mean(axis=1, keepdims=True), y, l2)
    if w[1] <= 0:  # the signals point the wrong way on these answers: the base rate alone
        w = np.array([_newton(np.zeros((len(y), 0)), y, l2)[0], 0.0])
    return {"mean": mean.tolist(), "scale": scale.tolist(), "intercept": float(w[0]), "coef": [float(w[1]) / x.shape[1]] * x.shape[1]}


#: How a combination's weights are found: one per signal, or equal for all (the default).
WEIGHTS = {"fitted": fit_logistic, "equal": fit_equal_weights}


def contributions(model: dict[str, Any], x: np.ndarray) -> np.ndarray:
    """Each feature's pull on the log-odds (rows x features)."""
    mean, scale = np.asarray(model["mean"]), np.asarray(model["scale"])
    return (np.where(np.isnan(x), mean, x) - mean) / scale * np.asarray(model["coef"])


def predict(model: dict[str, Any], x: np.ndarray) -> np.ndarray:
    """The probability that each answer is right under a :func:`fit_logistic` model."""
    return 1 / (1 + np.exp(-(model["intercept"] + contributions(model, x).sum(axis=1))))


@functools.lru_cache(maxsize=16)
def _read(path: str, modified: float) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
        data["threshold"] = float(data["threshold"])
        if len(data["features"]) != len(data["model"]["coef"]):
            raise ValueError("features and coefficients differ in number")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SunarError(f"{path} is not a calibration file ({exc}); fit one with: sunar calibrate --run DIR") from None
    return data


def load(spec: str, llm: str) -> dict[str, Any] | None:
    """The calibration to use: ``spec`` "" or "off" none, "auto" the shipped one fitted for
    ``llm`` (if any), else the file it names (which must be fitted for ``llm``)."""
    if spec in ("", "off"):
        return None
    if spec == "auto":
        shipped = sorted(SHIPPED.glob("*.json")) if SHIPPED.is_dir() else []
        for path in shipped:
            data = _read(str(path), path.stat().st_mtime)
            if data.get("llm") == llm:
                return {**data, "path": str(path)}
        return None
    path = Path(spec).expanduser()
    if not path.is_file():
        raise SunarError(f"calibration file not found: {path}; fit one with: sunar calibrate --run DIR --out {path}")
    data = _read(str(path), path.stat().st_mtime)
    if data.get("llm") != llm:
        raise SunarError(f"{path} was fitted for {data.get('llm')}, not {llm}; fit one for this model with: sunar calibrate")
    return {**data, "path": str(path)}


def judge(signals: dict[str, Any], calibration: dict[str, Any]) -> dict[str, Any]:
    """The combined score of an answer's signals, whether it clears the calibration's threshold,
    and, when it does not, what pulls it down most (in words)."""
    features, model = tuple(calibration["features"]), calibration["model"]
    x = signal_matrix([{"signals": signals}], features)
    pulls = contributions(model, x)[0]
    trust = float(1 / (1 + np.exp(-(model["intercept"] + pulls.sum()))))
    if trust >= calibration["threshold"]:
        return {"trust": round(trust, 4), "abstained": False, "why": ""}
    # the two strongest pulls down, each reason once (entropy and sets say the same thing); a
    # signal is named only when it is itself on the side of distrust (below its usual value): a
    # fit may weigh one against its sense, and "the samples disagree" must not be said when they agree
    low = np.nan_to_num(x[0] - np.asarray(model["mean"]), nan=0.0) < 0
    reasons = dict.fromkeys(REASONS.get(features[i], features[i]) for i in np.argsort(pulls) if pulls[i] < 0 and low[i])
    why = "; ".join(list(reasons)[:2]) or "the signals together are too weak"
    threshold = calibration["threshold"]
    if math.isinf(threshold):  # no threshold kept the promise on the calibration questions
        alpha = calibration.get("alpha")
        promise = f"at most {alpha:.0%} wrong" if isinstance(alpha, float | int) else "its error rate"
        why += f"; on the questions it was calibrated on, none of this model's answers could promise {promise}"
        return {"trust": round(trust, 4), "abstained": True, "why": f"{why} (trust {trust:.0%})"}
    return {"trust": round(trust, 4), "abstained": True, "why": f"{why} (trust {trust:.0%}, needed {threshold:.0%})"}
