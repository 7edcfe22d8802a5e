"""The shipped S and Self-Ask calibrations refitted on today's dev 1-100 answers: the development runs'
answers with each later fix's rerun in place of those it changed, and nothing of the confirmation."""

from benchmarks import refit_calibrations as R
from benchmarks import results_tables as T


def answer(qid, variant, answer="A"):
    return {"id": qid, "variant": variant, "answer": answer}


def test_todays_answers_are_the_first_runs_with_each_fixs_rerun_over_them_and_name_the_runs_they_came_from(monkeypatch):
    runs = {
        "dev-a": [answer("q1", "v"), answer("q2", "v"), answer("q1", "other")],
        "dev-b": [answer("q2", "v", "later"), answer("q3", "v"), answer("q9", "v")],
        "fix-1-before": [], "fix-1": [answer("q3", "v", "fixed"), answer("q8", "v", "fixed")],  # q8: a confirmation question
        "fix-2-before": [], "fix-2": [answer("q1", "other", "fixed")],  # another graph's answer only
    }
    monkeypatch.setattr(T, "ALL_FIXES", ({"rule": ("fix-1-before", "fix-1")}, {"rule": ("fix-2-before", "fix-2")}))
    answers, names = T.todays_answers(runs.__getitem__, "v", ("dev-a", "dev-b"), {"q1", "q2", "q3"})
    assert [(a["id"], a["answer"]) for a in answers] == [("q1", "A"), ("q2", "A"), ("q3", "fixed")]
    assert names == ["dev-a", "dev-b", "fix-1"]


def test_the_shipped_calibrations_are_what_a_refit_on_todays_committed_answers_gives():
    assert R.main(["--check"]) == 0


def test_a_shipped_calibration_is_the_refit_to_the_last_digits_a_cpu_may_change():
    shipped = {"kind": "platt", "intercept": -0.6078575082632472, "coef": [1.29], "threshold": float("inf"), "n": 100}
    assert R.same(shipped, {**shipped, "intercept": -0.6078575082632471})  # fitted on another CPU
    assert not R.same(shipped, {**shipped, "intercept": -0.6079})
    assert not R.same(shipped, {**shipped, "coef": [1.29, 0.1]}) and not R.same(shipped, {**shipped, "n": 101})
    assert not R.same(shipped, {**shipped, "threshold": 0.5}) and not R.same(shipped, {**shipped, "kind": "isotonic"})
    assert not R.same(shipped, {k: v for k, v in shipped.items() if k != "n"})
    assert R.same({"ece": float("nan")}, {"ece": float("nan")}) and not R.same({"ece": float("nan")}, {"ece": 0.1})
