"""The calibration measures, the combined score and the conformal threshold, on hand-made cases
whose answers are worked out by hand."""

import math

import numpy as np
import pytest

from sunar.evals import calibration as cal
from sunar.trust import fit_equal_weights, fit_logistic, predict


def test_auroc_counts_right_above_wrong_with_ties_as_half():
    assert cal.auroc([0.9, 0.8, 0.2, 0.1], [1, 1, 0, 0]) == 1.0
    assert cal.auroc([0.1, 0.2, 0.8, 0.9], [1, 1, 0, 0]) == 0.0
    assert cal.auroc([0.5, 0.5, 0.5], [1, 0, 0]) == 0.5
    assert cal.auroc([0.9, 0.4, 0.6, 0.1], [1, 1, 0, 0]) == 0.75  # 3 of the 4 right-wrong pairs in order
    assert cal.auroc([0.3, 0.4], [1, 1]) is None


def test_ece_and_accuracy_at_coverage():
    assert cal.ece([1.0, 1.0, 0.0, 0.0], [1, 1, 0, 0]) == 0.0
    assert cal.ece([1.0, 1.0], [0, 1]) == pytest.approx(0.5)
    scores, right = [0.9, 0.8, 0.7, 0.1], [1, 0, 1, 0]
    assert cal.accuracy_at(scores, right, 0.25) == 1.0 and cal.accuracy_at(scores, right, 0.5) == 0.5
    assert cal.accuracy_at(scores, right, 0.75) == pytest.approx(2 / 3)
    assert cal.risk_coverage(scores, right) == [(0.25, 1.0), (0.5, 0.5), (0.75, pytest.approx(2 / 3)), (1.0, 0.5)]


def test_distrust_signals_are_negated_and_missing_ones_are_nan():
    records = [{"signals": {"agreement": 1.0, "semantic_entropy": 0.5, "hop_agreement": None}}]
    x = cal.signal_matrix(records, ("agreement", "semantic_entropy", "hop_agreement"))
    assert x[0, 0] == 1.0 and x[0, 1] == -0.5 and math.isnan(x[0, 2])


def test_logistic_combination_learns_the_informative_signal_and_is_reported_out_of_fold():
    rng = np.random.default_rng(0)
    right = rng.integers(0, 2, 200)
    records = [
        {"signals": {"agreement": float(r) * 0.6 + rng.random() * 0.4, "evidence_top": rng.random(), "hop_agreement": None}}
        for r in right
    ]
    features = ("agreement", "evidence_top", "hop_agreement")
    scores = cal.cross_validated(records, right, features=features, weights="fitted")
    assert cal.auroc(scores, right) > 0.95
    model = fit_logistic(cal.signal_matrix(records, features), right.astype(float))
    coef = dict(zip(features, model["coef"], strict=True))
    assert coef["agreement"] > 1.0 and abs(coef["evidence_top"]) < coef["agreement"] / 3
    # equal weights cannot learn that evidence_top is noise: it dilutes the informative signal
    assert 0.75 < cal.auroc(cal.cross_validated(records, right, features=features), right) < 0.95


def test_equal_weights_share_one_slope_and_never_turn_a_signal_against_its_sense():
    x = np.array([[1.0, 0.9], [0.8, 1.0], [0.1, 0.0], [0.0, 0.2], [0.9, 0.7], [0.2, 0.1]])
    y = np.array([1.0, 1.0, 0.0, 0.0, 1.0, 0.0])
    model = fit_equal_weights(x, y)
    assert model["coef"][0] == model["coef"][1] > 0
    p = predict(model, x)
    assert (p[y == 1] > 0.5).all() and (p[y == 0] < 0.5).all()
    # signals that point the wrong way on the answers: no signal counts, the trust is the base rate
    backwards = fit_equal_weights(x, 1 - y)
    assert backwards["coef"] == [0.0, 0.0] and np.allclose(predict(backwards, x), 0.5, atol=0.05)
    # the same answers with a weight per signal: the fit weighs the second against its sense
    collinear = np.array([[1.0, 1.0], [0.9, 0.8], [0.1, 0.2], [0.0, 0.1], [0.6, 0.9], [0.5, 0.2]])
    assert min(fit_logistic(collinear, np.array([1.0, 1.0, 0.0, 0.0, 0.0, 1.0]), l2=0.01)["coef"]) < 0
    assert min(fit_equal_weights(collinear, np.array([1.0, 1.0, 0.0, 0.0, 0.0, 1.0]))["coef"]) >= 0


def test_clopper_pearson_bound():
    assert cal.error_bound(0, 0, 0.95) == 1.0 and cal.error_bound(5, 5, 0.95) == 1.0
    assert cal.error_bound(0, 10, 0.95) == pytest.approx(1 - 0.05 ** (1 / 10))  # (1 - b)^10 = 0.05


def test_threshold_keeps_the_lowest_tested_threshold_whose_bound_passes():
    # 60 answers: the best 30 right, the rest wrong one in two
    scores = list(range(60, 0, -1))
    right = [1] * 30 + [1, 0] * 15
    got = cal.conformal_threshold(scores, right, alpha=0.3, delta=0.1)
    kept = [r for s, r in zip(scores, right, strict=True) if s >= got["threshold"]]
    steps = math.ceil(math.log2(60))
    assert cal.error_bound(len(kept) - sum(kept), len(kept), 1 - 0.1 / steps) <= 0.3
    assert got["coverage"] == len(kept) / 60 and got["accuracy_answered"] == sum(kept) / len(kept)
    assert len(kept) >= 30  # at least every sure answer is given


def test_conformal_threshold_answers_nothing_when_no_threshold_is_safe():
    got = cal.conformal_threshold([0.9, 0.8, 0.7], [0, 1, 0], alpha=0.1)
    assert got["threshold"] == math.inf and got["coverage"] == 0.0 and got["accuracy_answered"] is None


def test_the_level_without_a_promise_is_the_most_answered_point_at_most_alpha_wrong():
    # best first: right, wrong, right, right, wrong, right, wrong, wrong
    scores, right = [8, 7, 6, 5, 4, 3, 2, 1], [1, 0, 1, 1, 0, 1, 0, 0]
    got = cal.risk_level(scores, right, alpha=0.35)  # 2 wrong of 6 (0.33) is the last point under 0.35
    assert got == {"level": 3, "level_coverage": 0.75, "level_accuracy": 4 / 6}
    tied = cal.risk_level([2, 2, 2, 1], [1, 1, 0, 0], alpha=0.3)  # a tie is answered together: 1 wrong of 3 is too many
    assert tied == {"level": math.inf, "level_coverage": 0.0, "level_accuracy": None}
    # a hundred answers too few for the promise still have a level, which is what it answered
    scores, right = list(range(100, 0, -1)), [1, 1, 0] * 10 + [0] * 70
    assert cal.conformal_threshold(scores, right, alpha=0.3)["threshold"] == math.inf
    assert cal.risk_level(scores, right, alpha=0.35)["level_coverage"] == 0.3


def test_the_eval_summary_rates_each_signal_and_the_combination():
    """A signal that tells right from wrong gets AUROC 1, a missing value ranks below the others,
    a signal no answer kept is no figure at all (not chance), and the combination is out of fold."""
    records = []
    for i in range(40):
        right = float(i % 2)
        signals = {"agreement": right, "semantic_entropy": 0.0, "hop_agreement": None if i % 4 == 0 else right, "chain_broken": 0.0}
        records.append({"metrics": {"cover_em": right}, "confidence": 0.5 + right / 2, "signals": signals})
    got = cal.summary(records)
    assert got["n"] == 40 and got["auroc"] == 1.0 and got["ece"] == pytest.approx(0.25)
    assert got["signals"]["agreement"] == 1.0 and got["signals"]["answer_logprob"] is None and got["signals"]["semantic_entropy"] == 0.5
    assert got["signals"]["hop_agreement"] > 0.5 and got["combined_auroc_cv"] > 0.9


def test_folds_and_halves_hold_each_dataset_evenly_whatever_the_order():
    # an eval interleaves its datasets: by position alone, the even records would all be MuSiQue's
    records = [{"id": str(i), "dataset": "musique" if i % 2 == 0 else "2wiki"} for i in range(12)]
    assert cal.dealt(records, 2).tolist() == [0, 0, 1, 1] * 3
    assert cal.dealt(records, 5).tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 0, 0]
    assert cal.dealt([{"id": "a"}, {"id": "b"}, {"id": "c"}], 2).tolist() == [0, 1, 0]  # no dataset: one group
    # every fold holds each dataset's answers: here every MuSiQue answer is wrong, so a fold of
    # MuSiQue's alone could not be fitted on
    rows = [{**r, "signals": {"agreement": float(r["dataset"] == "2wiki")}, "metrics": {"cover_em": float(r["dataset"] == "2wiki")}} for r in records]
    fitted = cal.fit_calibration(rows, alpha=0.5)
    assert fitted["fitted_on"] == fitted["n"] == 12 and fitted["auroc_held_out"] == 1.0


def test_the_map_to_a_probability_is_the_one_that_holds_out_better():
    # agreement 1 is right 9 times in 10, agreement 0 once in 10: the regularised logistic pulls
    # both toward one half, the isotonic map recovers 0.9 and 0.1 and is chosen on held-out Brier
    rows = [{"id": str(i), "metrics": {"cover_em": float(i % 20 != 1) if i % 2 else float(i % 20 == 2)}, "signals": {"agreement": float(i % 2)}}
            for i in range(80)]
    fitted = cal.fit_calibration(rows, alpha=0.3)
    assert fitted["mapping"]["kind"] == "isotonic" and fitted["brier_cv"]["isotonic"] < fitted["brier_cv"]["platt"]
    from sunar.trust import probability, signal_matrix

    p = probability(fitted, signal_matrix([{"signals": {"agreement": 1.0}}, {"signals": {"agreement": 0.0}}], fitted["features"]))
    assert p == pytest.approx([0.9, 0.1], abs=0.02)
    assert 0.4 <= fitted["coverage"] <= 0.6 and fitted["accuracy_answered"] == 0.9  # the trust level answers the agreeing half


def test_the_isotonic_map_never_reads_certainty_into_a_few_answers():
    # the lowest scores are 3 wrong answers, the highest 2 right ones: shares of 0 and 1, shown as 1/5 and 3/4
    mapping = cal.isotonic(np.array([0.1, 0.2, 0.3, 0.5, 0.6, 0.8, 0.9]), np.array([0, 0, 0, 1, 0, 1, 1]))
    assert mapping["y"] == pytest.approx([1 / 5, 1 / 5, 2 / 4, 2 / 4, 3 / 4, 3 / 4])
    assert mapping["y"] == sorted(mapping["y"])  # still a monotone map


def test_a_check_reports_the_auroc_with_its_interval_and_the_ece():
    rows = [{"id": str(i), "metrics": {"cover_em": float(i % 3 == 0)}, "signals": {"agreement": float(i % 3 == 0) if i % 5 else 0.5}} for i in range(60)]
    fitted = cal.fit_calibration(rows, alpha=0.3)
    checked = cal.check_calibration(fitted, rows)
    low, high = checked["auroc_95"]
    assert low < checked["auroc"] < high <= 1.0 and 0.0 <= checked["ece"] <= 1.0 and len(checked["scores"]) == 60
    assert cal.auroc_interval([0.1, 0.2], [1.0, 1.0]) is None  # all right: nothing to rank


def test_the_probe_reads_the_hidden_state_out_of_fold_and_scores_new_questions_with_the_fitted_probe():
    from scripted import ScriptedLLM
    from sunar.evals.probe import examples, probe_signals

    def hidden(text):  # the state's first coordinate knows; the second is noise
        right = "Answer: right" in text
        return [1.0 if right else -1.0, float(len(text) % 7)]

    train = [{"id": f"q{i}", "question": f"Q{i}?", "answer": "right" if i % 3 else "wrong", "metrics": {"cover_em": float(i % 3 != 0)}}
             for i in range(30)]
    train += [{**r, "variant": "self_ask"} for r in train[:10]]  # another graph's same answers: one example each
    assert len(examples(train)) == 30
    rows = [{**r, "signals": {"agreement": 1.0}} for r in train[:30]] + [{"id": "new", "question": "New?", "answer": "right", "signals": {}}]
    llm = ScriptedLLM(lambda prompt, i: "", hidden=hidden)
    probe, how = probe_signals(llm, train, rows)
    assert how["answers"] == 30 and how["questions"] == 30 and set(how["auroc_by_strength"]) == {"0.01", "0.1", "1.0", "10.0"}
    assert all((r["signals"]["probe"] > 0.5) == (r["answer"] == "right") for r in rows)
    assert rows[0]["signals"]["agreement"] == 1.0  # the other signals are kept
    assert llm.hidden_calls[0] == "Question: Q0?\nAnswer: wrong" and len(llm.hidden_calls) == 31  # each text read once


def test_fit_calibration_takes_the_mapping_named_or_the_best():
    rng = np.random.default_rng(1)
    right = rng.integers(0, 2, 60)
    records = [{"id": str(i), "dataset": "d", "metrics": {"cover_em": float(r)}, "signals": {"chain_support": float(r) * 0.3 + rng.random() * 0.7}}
               for i, r in enumerate(right)]
    best = cal.fit_calibration(records, 0.3, features=("chain_support",))
    assert best["mapping"]["kind"] == min(best["brier_cv"], key=best["brier_cv"].get)
    for kind in ("platt", "isotonic"):
        assert cal.fit_calibration(records, 0.3, features=("chain_support",), mapping=kind)["mapping"]["kind"] == kind
    with pytest.raises(ValueError, match="mapping must be"):
        cal.fit_calibration(records, 0.3, features=("chain_support",), mapping="beta")
