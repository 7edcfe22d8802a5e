"""Answer and retrieval metrics on hand-made cases."""

import math

import pytest

from sunar.evals.metrics import answer_metrics, cover_em, exact_match, retrieval_metrics, token_f1


@pytest.mark.parametrize(
    ("prediction", "answers", "cover", "em"),
    [
        ("Missoula, Montana", ["Missoula, Montana", "Missoula"], 1.0, 1.0),
        ("He was born in Missoula, Montana.", ["Missoula, Montana"], 1.0, 0.0),
        ("the Missoula", ["Missoula"], 1.0, 1.0),  # articles and case are normalised away
        ("Montana", ["Missoula, Montana"], 0.0, 0.0),  # a part of the answer is not covering it
        ("", ["Missoula"], 0.0, 0.0),
        ("anything", [""], 0.0, 0.0),  # an empty gold alias never matches
        ("Sun", ["below the Sun", "Sun"], 1.0, 1.0),  # best over aliases
    ],
)
def test_cover_em_and_em(prediction, answers, cover, em):
    assert cover_em(prediction, answers) == cover
    assert exact_match(prediction, answers) == em


def test_token_f1():
    assert token_f1("Missoula Montana", ["Missoula, Montana"]) == 1.0
    # pred {born, in, missoula}, gold {missoula, montana}: p = 1/3, r = 1/2
    assert token_f1("born in Missoula", ["Missoula, Montana"]) == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))
    assert token_f1("Helena", ["Missoula, Montana", "Missoula"]) == 0.0
    assert token_f1("Missoula", ["Missoula, Montana", "Missoula"]) == 1.0  # max over aliases
    assert answer_metrics("the Sun", ["Sun"]) == {"cover_em": 1.0, "em": 1.0, "f1": 1.0}


def test_recall_and_ndcg_follow_rank_order():
    m = retrieval_metrics(["x", "a", "y", "b"], ["a", "b"])
    assert (m["recall@1"], m["recall@2"], m["recall@3"], m["recall@4"], m["recall@10"]) == (0.0, 0.5, 0.5, 1.0, 1.0)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    assert m["ndcg@10"] == pytest.approx(dcg / (1 + 1 / math.log2(3)))


def test_perfect_empty_and_duplicate_rankings():
    assert retrieval_metrics(["b", "a"], ["a", "b"])["ndcg@10"] == pytest.approx(1.0)
    assert retrieval_metrics([], ["a", "b"]) == {**{f"recall@{k}": 0.0 for k in range(1, 11)}, "ndcg@10": 0.0}
    # a repeated id keeps its first rank and does not count twice
    assert retrieval_metrics(["a", "a", "b"], ["a", "b"])["recall@2"] == 1.0
    # beyond rank 10 nothing counts
    assert retrieval_metrics([f"x{i}" for i in range(10)] + ["a"], ["a"])["recall@10"] == 0.0
    assert retrieval_metrics(["a"], []) == {}
