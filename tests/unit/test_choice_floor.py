"""The chance floor of an answer (sunar.choice), the combination fitted above it (sunar.evals.floored),
and the trust level found per shape (sunar.evals.selective.shape_levels), on made-up answers."""

import numpy as np
import pytest

from sunar.choice import TWO_WAY, floor, floored
from sunar.evals.floored import fit_floored, probability
from sunar.evals.selective import conformal_threshold, shape_levels
from sunar.trust import fit_equal_weights, predict


@pytest.mark.parametrize(
    "question, answer, expected",
    [
        ("Who was born later, Meghan O'Leary or Engin Fırat?", "Meghan O'Leary", TWO_WAY),
        ("Who was born later, Meghan O'Leary or Engin Fırat?", "engin fırat", TWO_WAY),  # cover-EM's normalisation
        ("Who was born later, Meghan O'Leary or Engin Fırat?", "August 24, 1984", 0.0),  # what a side found, not a side
        ("Who was born later, Meghan O'Leary or Engin Fırat?", "Meghan O'Leary and Engin Fırat", 0.0),  # both sides: no choice made
        ("Are Chão Bom and Karam Bast located in the same country?", "No", TWO_WAY),
        ("Are Chão Bom and Karam Bast located in the same country?", "population", 0.0),
        ("Where was the director of film Oloibiri born?", "Lagos", 0.0),  # an open question has no floor
        ("Who is the paternal grandfather of Louis IV?", "Charles", 0.0),
    ],
)
def test_floor_is_one_half_for_one_of_two_options_and_nothing_for_an_open_question(question, answer, expected):
    assert floor(question, answer) == expected


def test_floored_reads_a_probability_above_its_floor():
    assert floored([0.0, 0.5, 1.0], [0.5, 0.5, 0.0]).tolist() == [0.5, 0.75, 1.0]


def mixture(n=400, seed=0):
    """Signals z; half the answers with a floor of one half; right with floor + (1 - floor) sigmoid(0.2 + 1.5 z)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    f = np.where(np.arange(n) % 2 == 0, 0.5, 0.0)
    y = (rng.random(n) < floored(1 / (1 + np.exp(-(0.2 + 1.5 * z))), f)).astype(float)
    return z[:, None], y, f


def test_without_floors_the_fit_is_the_equal_weights_model():
    x, y, _ = mixture()
    plain, fitted = fit_equal_weights(x, y), fit_floored(x, y, np.zeros(len(y)))
    assert fitted["intercept"] == pytest.approx(plain["intercept"], abs=1e-6) and fitted["coef"] == pytest.approx(plain["coef"], abs=1e-6)


def test_the_fit_above_floors_recovers_the_mixture_and_never_reads_below_a_floor():
    x, y, f = mixture(4000)
    model = fit_floored(x, y, f, l2=0.0)
    scale = model["scale"][0]  # the slope is on the standardised signal
    assert model["intercept"] + model["coef"][0] * (0 - model["mean"][0]) / scale == pytest.approx(0.2, abs=0.15)
    assert model["coef"][0] / scale == pytest.approx(1.5, abs=0.25)
    p = probability(model, x, f)
    assert (p[f == 0.5] >= 0.5).all() and np.allclose(p[f == 0], predict(model, x[f == 0]))
    naive = fit_equal_weights(x, y)  # the floor ignored: open answers read higher than they are right
    assert predict(naive, x[f == 0]).mean() > p[f == 0].mean() + 0.05
    assert abs(p[f == 0].mean() - y[f == 0].mean()) < 0.03


def test_a_signal_against_its_sense_gives_the_base_rate_above_the_floor():
    x, y, f = mixture()
    model = fit_floored(-x, y, f)
    assert model["coef"] == [0.0] and np.ptp(probability(model, -x, np.zeros(len(y)))) == 0


def test_each_shape_with_enough_answers_gets_its_own_level_and_the_others_none():
    rng = np.random.default_rng(1)
    scores = rng.random(120)
    right = (rng.random(120) < scores).astype(float)
    shapes = ["chain"] * 80 + ["comparison"] * 30 + ["inference"] * 10
    levels = shape_levels(scores, right, shapes, 0.3, 0.1, minimum=30)
    assert set(levels) == {"chain", "comparison"}  # inference: 10 labelled answers, no promise
    assert levels["chain"] == conformal_threshold(scores[:80], right[:80], 0.3, 0.1)["threshold"]
    assert levels["comparison"] == conformal_threshold(scores[80:110], right[80:110], 0.3, 0.1)["threshold"]
    assert shape_levels(np.zeros(40), np.zeros(40), ["chain"] * 40, 0.3) == {"chain": float("inf")}  # all wrong: nothing passes
