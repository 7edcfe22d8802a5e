"""benchmarks/transfer_calibration.py on small made-up answers: pooling runs, the candidates, a
candidate fitted on all parts but one and scored on it (with parts all right, all wrong, or of one
answer), the worst part, the ranking, the table and the command."""

import json
import math

import numpy as np
import pytest

from benchmarks import transfer_calibration as tc


def answer(i, dataset, right, support, variant="sunar", kind="compositional", **signals):
    return {"id": f"q{i}", "dataset": dataset, "type": kind, "variant": variant, "question": f"Where was the director of film {i} born?",
            "metrics": {"cover_em": float(right)}, "signals": {"chain_support": support, "whole_chain": 1.0, "named_pages": 1.0, "hops": 2, **signals}}


def answers(n=40, seed=0):
    """Two datasets of ``n`` answers each, a right answer's chain_support higher; 2wiki mostly right."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(2 * n):
        dataset = "musique" if i % 2 else "2wiki"
        right = rng.random() < (0.35 if dataset == "musique" else 0.65)
        out.append(answer(i, dataset, right, round(float(0.5 + 0.3 * right + 0.2 * rng.random()), 3), kind="3hop" if i % 8 == 1 else "compositional"))
    return out


CHAIN = {"name": "c", "features": ["chain_support"], "weights": "equal", "mapping": "best", "shapes": False}


def test_pooled_takes_each_runs_first_variant_and_each_question_once():
    first = [answer(1, "2wiki", 1, 0.9, variant="sunar+x"), answer(2, "2wiki", 0, 0.4, variant="sunar+x"), answer(1, "2wiki", 0, 0.1, variant="self_ask"),
             {**answer(3, "musique", 1, 0.8, variant="sunar+x"), "error": "boom"}, {**answer(4, "musique", 1, 0.8, variant="sunar+x"), "signals": {}}]
    second = [answer(1, "2wiki", 0, 0.2), answer(5, "musique", 1, 0.7), answer(5, "musique", 0, 0.7, variant="sunar+x")]
    rows, taken = tc.pooled([first, second, [answer(6, "2wiki", 1, 0.5, variant="rag")]], ["sunar+x", "sunar"])
    assert taken == ["sunar+x", "sunar+x", ""]  # the first variant listed that the run holds; none: ""
    assert [(r["id"], r["signals"]["chain_support"]) for r in rows] == [("q1", 0.9), ("q2", 0.4), ("q5", 0.7)]  # no error, no empty signals, once


def test_part_of_names_a_missing_part():
    assert tc.part_of("dataset")({"dataset": "2wiki"}) == "2wiki"
    assert tc.part_of("type")({"type": None}) == "(none)"


def test_shapes_become_signals_and_missing_compare_gives_none(monkeypatch):
    rows = tc.with_shapes([answer(1, "2wiki", 1, 0.9)], lambda q: "comparison")
    assert rows[0]["shape"] == "comparison" and rows[0]["signals"]["shape_comparison"] == 1.0 and rows[0]["signals"]["shape_inference"] == 0.0
    import sys

    monkeypatch.setitem(sys.modules, "sunar.compare", None)  # an import of it fails
    assert tc.question_shape() is None


def test_candidates_start_with_the_shipped_way_and_add_each_group_once():
    shipped = {"features": ["chain_support", "whole_chain", "shape_prior"], "weights": "equal"}
    found = tc.candidates(["chain_support", "whole_chain"], shipped, shapes=False)
    assert found[0] == {"name": "shipped", "features": ["chain_support", "whole_chain"], "weights": "equal", "mapping": "best", "shapes": True}
    assert len(found[1 : 1 + len(tc.METHODS)]) == len(tc.METHODS) and all(c["features"] == ["chain_support", "whole_chain"] for c in found[1:7])
    names = [c["name"] for c in found]
    assert len(names) == len(set(names)) and "chain_support+whole_chain+whole_chain equal best" not in names  # a group the base holds adds nothing
    assert "chain_support+whole_chain+named_pages fitted best" in names and not any("shape_comparison" in n for n in names)
    with_shapes = tc.candidates(["chain_support"], None, shapes=True)
    assert with_shapes[0]["name"] == "chain_support equal best" and "chain_support+shape_comparison+shape_inference equal best" in [c["name"] for c in with_shapes]
    assert sum(c["shapes"] for c in with_shapes) == 2  # the shape prior, equal and fitted


def test_held_out_scores_the_part_left_out_and_its_level():
    rows = answers()
    train, test = [r for r in rows if r["dataset"] == "2wiki"], [r for r in rows if r["dataset"] == "musique"]
    found = tc.held_out(CHAIN, train, test, 0.3, 0.1)
    y = [r["metrics"]["cover_em"] for r in test]
    assert found["n"] == len(test) and found["right"] == pytest.approx(np.mean(y))
    assert found["auroc"] == 1.0 and 0 <= found["ece"] <= 1 and 0 <= found["brier"] <= 1 and found["mapping"] in ("platt", "isotonic")
    assert 0 <= found["mean_probability"] <= 1
    if math.isfinite(found["level"]):  # a level answers the part's most trusted, and it held when few of them were wrong
        assert found["level_answered"] > 0 and found["level_held"] == (found["level_risk"] <= 0.3)
    else:
        assert found["level_answered"] == 0 and found["level_risk"] is None and found["level_held"] is False


def test_held_out_on_parts_all_right_all_wrong_or_of_one_answer():
    rows = answers()
    all_right = [answer(100 + i, "x", 1, 0.9) for i in range(3)]
    found = tc.held_out(CHAIN, rows, all_right, 0.3, 0.1)
    assert found["auroc"] is None and found["right"] == 1.0 and found["ece"] >= 0
    all_wrong = tc.held_out(CHAIN, rows, [answer(200, "x", 0, 0.1)], 0.3, 0.1)
    assert all_wrong["n"] == 1 and all_wrong["auroc"] is None and all_wrong["right"] == 0.0
    if all_wrong["level_answered"]:  # one wrong answer given: the level did not hold there
        assert all_wrong["level_risk"] == 1.0 and not all_wrong["level_held"]


def test_held_out_says_why_a_fit_cannot_be_made():
    one_class = [answer(i, "2wiki", 1, 0.5 + i / 100) for i in range(6)]
    found = tc.held_out(CHAIN, one_class, [answer(9, "musique", 0, 0.3)], 0.3, 0.1)
    assert found == {"n": 1, "right": 0.0, "error": "the answers are all right or all wrong; calibrate on more questions"}
    assert "at least 4" in tc.held_out(CHAIN, one_class[:2], one_class[2:], 0.3, 0.1)["error"]


def test_worst_and_rank_key():
    parts = {"a": {"brier": 0.2, "ece": 0.05, "auroc": 0.8, "level_coverage": 0.3, "level_risk": 0.1, "level_held": True},
             "b": {"brier": 0.3, "ece": 0.15, "auroc": None, "level_coverage": 0.0, "level_risk": None, "level_held": False},
             "c": {"n": 1, "error": "too few"}}
    w = tc.worst(parts, 0.3)
    assert w == {"parts": 3, "fitted": 2, "brier": 0.3, "ece": 0.15, "auroc": 0.8, "level_coverage": 0.0, "level_risk": 0.1, "level_held": 1, "alpha": 0.3}
    nothing = tc.worst({"a": {"n": 0, "error": "x"}}, 0.3)
    assert nothing["brier"] is None and nothing["auroc"] is None and nothing["level_held"] == 0
    assert tc.rank_key(nothing) == (1, math.inf, math.inf)
    # every part fitted ranks first, then the lower worst Brier, then the lower worst ECE
    assert sorted([w, {**w, "fitted": 3}, {**w, "fitted": 3, "brier": 0.25}], key=tc.rank_key)[0]["brier"] == 0.25


def test_transfer_ranks_candidates_and_skips_a_kind_of_one_part():
    rows = answers()
    noise = {"name": "noise", "features": ["hops"], "weights": "equal", "mapping": "platt", "shapes": False}
    report = tc.transfer(rows, ["dataset", "shape", "type"], [noise, CHAIN])
    assert report["n"] == len(rows) and report["alpha"] == 0.3 and report["delta"] == 0.1
    by_dataset = report["kinds"]["dataset"]
    assert by_dataset["chosen"] == "c" and [c["name"] for c in by_dataset["candidates"]] == ["c", "noise"]  # the informative signal holds better
    assert set(by_dataset["candidates"][0]["parts"]) == {"2wiki", "musique"}
    assert report["kinds"]["shape"] == {"skipped": "one part only ((none)): nothing to leave out"}
    assert set(report["kinds"]["type"]["candidates"][0]["parts"]) == {"3hop", "compositional"}
    assert tc.transfer([], ["dataset"], [CHAIN])["kinds"]["dataset"]["skipped"].startswith("one part only (no answers)")


def test_markdown_shows_the_ranking_the_chosen_and_shipped_parts_and_failed_fits():
    rows = answers()
    tiny = [*rows, answer(999, "hotpot", 1, 0.9)]  # left out alone: a part of one answer
    report = tc.transfer(tiny, ["dataset", "shape"], [{**CHAIN, "name": "shipped"}, {**CHAIN, "name": "other", "mapping": "platt"}])
    report["kinds"]["dataset"]["candidates"][0]["parts"]["hotpot"] = {"n": 1, "right": 1.0, "error": "too few"}
    text = tc.markdown(report)
    assert "### Leave one dataset out" in text and "Skipped: one part only ((none)): nothing to leave out." in text
    assert "| hotpot | 1 | 1.00 | not fitted: too few |" in text
    chosen = report["kinds"]["dataset"]["chosen"]
    detail = {line.split(" | ")[0] for line in text.splitlines() if line.count("|") > 10 and " | 2wiki | " in line}
    assert detail == {"| shipped", f"| {chosen}"}  # each part of the chosen and of the shipped way, no other


def test_the_command_reads_runs_fills_types_and_writes_json_and_markdown(tmp_path, capsys):
    rows = answers()
    for r in rows:
        r["type"] = None
        r["answer"], r["gold"] = "x", ["x"]
    run = tmp_path / "run"
    run.mkdir()
    (run / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps({"id": r["id"], "question": r["question"], "answers": ["x"], "dataset": r["dataset"],
                                             "type": "comparison" if int(r["id"][1:]) % 4 == 0 else "compositional"}) + "\n" for r in rows))
    shipped = tmp_path / "shipped.json"
    shipped.write_text(json.dumps({"features": ["chain_support"], "weights": "equal"}))
    out = tmp_path / "out" / "t.json"
    assert tc.main(["--run", str(run), "--variant", "sunar", "--parts", "all", "--shipped", str(shipped), "--questions", str(questions), "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["variants"] == ["sunar"] and set(report["kinds"]) >= {"dataset", "type"}
    assert set(report["kinds"]["type"]["candidates"][0]["parts"]) == {"comparison", "compositional"}
    assert out.with_suffix(".md").read_text().startswith(f"{len(rows)} answers")
    assert "Leave one dataset out" in capsys.readouterr().out


def test_the_command_without_a_shape_function_leaves_the_shape_part_out(tmp_path, monkeypatch, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "predictions.jsonl").write_text("".join(json.dumps({**r, "answer": "x", "gold": ["x"]}) + "\n" for r in answers(10)))
    monkeypatch.setattr(tc, "question_shape", lambda: None)
    assert tc.main(["--run", str(run), "--variant", "sunar", "--parts", "shape", "--signals", "chain_support"]) == 0
    said = capsys.readouterr()
    assert "the shape part is left out" in said.err and "Leave one dataset out" not in said.out and "Leave one shape" not in said.out
