"""A calibration read above each answer's chance floor (:mod:`sunar.choice`): the probability that an
answer is right is ``floor + (1 - floor) * q``, and ``q`` (the probability that the values it was
decided on are right) is the combination of signals of :mod:`sunar.trust` with one weight for all,
fitted by the likelihood of that mixture on every answer, whatever its shape. On an open question
(floor 0) it is :func:`sunar.trust.fit_equal_weights`'s model; a comparison answered by one of its
two options reads at least one half, so answers of a shape that is mostly right by its floor do not
raise the probability given to open questions with the same signals.

The model has :func:`sunar.trust.fit_equal_weights`'s format (:func:`sunar.trust.predict` gives ``q``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sunar.choice import floored
from sunar.trust import fit_equal_weights, predict


def _mixture(z: np.ndarray, y: np.ndarray, f: np.ndarray, l2: float, iterations: int = 200) -> np.ndarray:
    """[intercept, slope] maximising the L2-penalised likelihood of ``y`` under ``f + (1 - f) * sigmoid(a + b z)``
    (Newton's method on the two numbers, with step halving so the penalised likelihood never falls)."""

    def loss(w: np.ndarray) -> float:
        p = np.clip(floored(1 / (1 + np.exp(-(w[0] + w[1] * z))), f), 1e-12, 1 - 1e-12)
        return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).sum() + 0.5 * l2 * w[1] ** 2)

    w = np.zeros(2)
    design = np.stack([np.ones_like(z), z], axis=1)
    for _ in range(iterations):
        s = 1 / (1 + np.exp(-(w[0] + w[1] * z)))
        p = np.clip(floored(s, f), 1e-12, 1 - 1e-12)
        d = (1 - f) * s * (1 - s)  # dp / d(eta)
        g = y / p - (1 - y) / (1 - p)  # d loglik / dp
        grad = design.T @ (g * d) - np.array([0.0, l2 * w[1]])
        # Fisher information of the mixture: E[g^2] d^2 = d^2 / (p (1 - p))
        info = design.T @ (design * (d**2 / (p * (1 - p)))[:, None]) + np.diag([1e-9, l2])
        step = np.linalg.solve(info, grad)
        before, t = loss(w), 1.0
        while loss(w + t * step) > before + 1e-12 and t > 1e-6:
            t /= 2
        w = w + t * step
        if np.abs(t * step).max() < 1e-9:
            break
    return w


def fit_floored(x: np.ndarray, y: np.ndarray, floors: Sequence[float], l2: float = 1.0) -> dict[str, Any]:
    """The combination (equal weights on standardised signals, oriented) fitted above each answer's floor;
    a slope below 0 is cut to 0 (no signal then counts: the base rate above the floor alone)."""
    y, f = np.asarray(y, dtype=float), np.asarray(floors, dtype=float)
    model = fit_equal_weights(x, y, l2)  # its standardisation and format; its two numbers refitted
    mean, scale = np.asarray(model["mean"]), np.asarray(model["scale"])
    z = ((np.where(np.isnan(x), mean, x) - mean) / scale).mean(axis=1)
    w = _mixture(z, y, f, l2)
    if w[1] <= 0:
        w = np.array([_mixture(np.zeros_like(z), y, f, l2)[0], 0.0])
    return {**model, "intercept": float(w[0]), "coef": [float(w[1]) / x.shape[1]] * x.shape[1]}


def probability(model: dict[str, Any], x: np.ndarray, floors: Sequence[float]) -> np.ndarray:
    """The probability that each answer is right: ``q`` of :func:`sunar.trust.predict` above its floor."""
    return floored(predict(model, x), floors)
