"""Answer and retrieval metrics on hand-made cases."""

import math

import pytest

from sunar.evals.metrics import (
    answer_metrics,
    cover_em,
    exact_match,
    paired_comparison,
    proportion_ci,
    retrieval_metrics,
    token_f1,
    word_cover_em,
)
from sunar.evals.report import aggregate, render, stage_lost


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


@pytest.mark.parametrize(
    ("prediction", "answers", "cover", "word"),
    [
        ("American", ["America"], 1.0, 0.0),  # dev101-200: right by cover-EM only through a sub-word
        ("Austrian", ["Austria"], 1.0, 0.0),
        ("Munich, Germany", ["Munich"], 1.0, 1.0),
        ("He was born in Missoula, Montana.", ["Missoula, Montana"], 1.0, 1.0),  # several words, in a row
        ("Montana, Missoula", ["Missoula, Montana"], 0.0, 0.0),
        ("Missoula (Montana)", ["Missoula Montana"], 1.0, 1.0),  # punctuation is normalised away first
        ("Anglo-American", ["American"], 1.0, 0.0),  # a hyphen joins the words
        ("the America", ["America"], 1.0, 1.0),
        ("Americas", ["American", "Americas"], 1.0, 1.0),  # best over aliases
        ("", ["America"], 0.0, 0.0),
        ("anything", [""], 0.0, 0.0),
    ],
)
def test_word_cover_em_needs_whole_words(prediction, answers, cover, word):
    assert (cover_em(prediction, answers), word_cover_em(prediction, answers)) == (cover, word)


def test_token_f1():
    assert token_f1("Missoula Montana", ["Missoula, Montana"]) == 1.0
    # pred {born, in, missoula}, gold {missoula, montana}: p = 1/3, r = 1/2
    assert token_f1("born in Missoula", ["Missoula, Montana"]) == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))
    assert token_f1("Helena", ["Missoula, Montana", "Missoula"]) == 0.0
    assert token_f1("Missoula", ["Missoula, Montana", "Missoula"]) == 1.0  # max over aliases
    assert answer_metrics("the Sun", ["Sun"]) == {"cover_em": 1.0, "word_cover_em": 1.0, "em": 1.0, "f1": 1.0}
    assert answer_metrics("Sunday", ["Sun"]) == {"cover_em": 1.0, "word_cover_em": 0.0, "em": 0.0, "f1": 0.0}


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


@pytest.mark.parametrize(
    ("variant", "base", "wins", "losses", "p"),
    [
        ([1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 0], 5, 0, 0.0625),  # 2 * (1/2)^5
        ([1, 0, 1, 1], [0, 1, 1, 0], 2, 1, 1.0),
        ([1, 0, 1], [1, 0, 1], 0, 0, 1.0),  # never differ
        ([0] * 10, [1] * 10, 0, 10, 2 / 1024),
    ],
)
def test_paired_comparison_is_the_exact_sign_test(variant, base, wins, losses, p):
    out = paired_comparison(variant, base)
    assert (out["n"], out["wins"], out["losses"]) == (len(variant), wins, losses)
    assert out["p"] == pytest.approx(p)


def test_paired_comparison_needs_the_same_questions():
    with pytest.raises(ValueError, match="differ in length"):
        paired_comparison([1, 0], [1])


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [(5, 10, 0.2366, 0.7634), (0, 10, 0.0, 0.2775), (10, 10, 0.7225, 1.0), (0, 0, 0.0, 1.0)],
)
def test_wilson_interval(k, n, low, high):
    assert proportion_ci(k, n) == pytest.approx((low, high), abs=1e-4)


def _record(qid, dataset, variant, cover):
    return {
        "id": qid, "dataset": dataset, "variant": variant, "metrics": {"cover_em": float(cover), "word_cover_em": float(cover)},
        "time": dict.fromkeys(("total", "llm", "nli", "scoring", "rest"), 1.0), "llm_calls": 2,
    }


def test_report_compares_each_variant_with_self_ask_question_by_question():
    right = {"self_ask": "q1", "sunar": "q1 q2 q3", "sunar_r": "q2"}
    records = [_record(q, "musique" if q != "q4" else "2wiki", v, q in right[v].split()) for v in right for q in ("q1", "q2", "q3", "q4")]
    records.append({**_record("q5", "2wiki", "sunar", 0), "error": "model server down"})  # no self_ask pair
    metrics = aggregate(records)
    assert "vs_self_ask" not in metrics["all"]["self_ask"]
    assert metrics["all"]["sunar"]["vs_self_ask"] == {"n": 4, "wins": 2, "losses": 0, "p": 0.5}
    assert metrics["all"]["sunar_r"]["vs_self_ask"] == {"n": 4, "wins": 1, "losses": 1, "p": 1.0}
    assert metrics["musique"]["sunar"]["vs_self_ask"]["n"] == 3
    assert metrics["all"]["sunar"]["n"] == 5 and metrics["all"]["sunar"]["cover_em"] == pytest.approx(3 / 5)
    assert metrics["all"]["sunar"]["cover_em_ci95"] == pytest.approx(list(proportion_ci(3, 5)))
    report = render(metrics, {})
    assert "| sunar | 5 | 0.600 [0.231, 0.882] | 0.600 | 2 | 0 | 0.500 |" in report
    assert "| self_ask | 4 | 0.250 [0.046, 0.699] | 0.250 | - | - | - |" in report


def test_report_shows_word_cover_em_beside_cover_em_also_for_runs_that_did_not_store_it():
    old = {"metrics": {"cover_em": 1.0, "em": 0.0, "f1": 0.0}, "answer": "American", "gold": ["America"]}  # before word cover-EM
    new = {"metrics": {"cover_em": 1.0, "word_cover_em": 1.0, "em": 1.0, "f1": 1.0}, "answer": "Munich", "gold": ["Munich"]}
    records = [{**_record("q1", "2wiki", "sunar", 1), **old}, {**_record("q2", "musique", "sunar", 1), **new}]
    metrics = aggregate(records)
    assert (metrics["2wiki"]["sunar"]["cover_em"], metrics["2wiki"]["sunar"]["word_cover_em"]) == (1.0, 0.0)
    assert (metrics["all"]["sunar"]["cover_em"], metrics["all"]["sunar"]["word_cover_em"], metrics["all"]["sunar"]["em"]) == (1.0, 0.5, 0.5)
    report = render(metrics, {})
    assert "## Answers (cover-EM / word cover-EM / EM / F1)" in report
    assert "| sunar | 1.000 / 0.000 / 0.000 / 0.000 | 1.000 / 1.000 / 1.000 / 1.000 | 1.000 / 0.500 / 0.500 / 0.500 |" in report
    assert "| variant | questions | cover-EM [95% Wilson CI] | word cover-EM |" in report
    assert "| sunar | 2 | 1.000 [0.342, 1.000] | 0.500 |" in report


TEXTS = {
    "lynch": "Ronnie Rocket\nRonnie Rocket is an unfinished film project written by David Lynch.",
    "born": "David Lynch\nDavid Lynch was born in Missoula, Montana.",
    "other": "Kyle MacLachlan\nKyle MacLachlan was born in Yakima, Washington.",
}


def _answered(answer, evidence, gold=("Missoula",), variant="sunar", qid="q1"):
    return {**_record(qid, "2wiki", variant, cover_em(answer, gold)), "answer": answer, "gold": list(gold), "evidence_ids": evidence}


@pytest.mark.parametrize(
    ("answer", "evidence", "stage"),
    [
        ("Missoula", ["lynch", "other"], None),  # right: not lost anywhere
        ("David Lynch", ["lynch", "born", "other"], "in_top"),  # MER read the answer and missed it
        ("David Lynch", ["lynch", "other", "born"], "lower"),  # retrieved, ranked below the first l
        ("Yakima", ["lynch", "other"], "not_retrieved"),
        ("Yakima", [], "not_retrieved"),
        ("Yakima", ["lynch", "unknown-id"], "not_retrieved"),  # an id missing from the corpus holds nothing
    ],
)
def test_stage_lost_finds_the_gold_answer_in_the_ranked_evidence(answer, evidence, stage):
    assert stage_lost(_answered(answer, evidence), TEXTS, top=2) == stage


def test_stage_lost_skips_failed_questions():
    assert stage_lost({"id": "q1", "variant": "sunar", "error": "model server down"}, TEXTS, top=2) is None


def test_report_counts_where_the_wrong_answers_were_lost():
    records = [
        _answered("Missoula", ["lynch", "born"], qid="q1"),
        _answered("David Lynch", ["lynch", "born"], qid="q2"),
        _answered("David Lynch", ["lynch", "other", "born"], qid="q3"),
        _answered("Yakima", ["other"], qid="q4"),
        _answered("Yakima", ["other"], qid="q1", variant="self_ask"),
    ]
    metrics = aggregate(records, TEXTS, top=2)
    assert metrics["all"]["sunar"]["wrong_answers"] == {"in_top": 1, "lower": 1, "not_retrieved": 1}
    assert metrics["all"]["self_ask"]["wrong_answers"] == {"in_top": 0, "lower": 0, "not_retrieved": 1}
    report = render(metrics, {"evidence": 2})
    assert "(l = 2; the MER variants read the first l)" in report
    assert "| sunar | 3 | 1 | 1 | 1 |" in report
    assert "Where the wrong answers" not in render(aggregate(records), {})  # without the corpus: no table
