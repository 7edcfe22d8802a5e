"""The report's accuracy by question type and by half of the run, and ``sunar report`` on a run
folder, on hand-made records."""

import gzip
import json

import pytest

from sunar.cli import main
from sunar.errors import SunarError
from sunar.evals.breakdown import breakdown, breakdowns, half, question_type
from sunar.evals.report import aggregate, render, report_run, write_report

TIME = dict.fromkeys(("total", "llm", "nli", "scoring", "rest"), 1.0)


def _record(qid, variant, cover, em=None, kind="3hop", dataset="musique"):
    metrics = {"cover_em": float(cover), "word_cover_em": float(cover), "em": float(cover if em is None else em), "f1": 0.0}
    return {"id": qid, "dataset": dataset, "type": kind, "variant": variant, "metrics": metrics, "time": TIME}


def _failed(qid, variant, kind="3hop", dataset="musique"):
    return {"id": qid, "dataset": dataset, "type": kind, "variant": variant, "error": "model server down"}


#: musique 3hop: sunar right twice where self_ask is wrong, never the other way; sunar_r runs there only.
#: 2wiki comparison: one win and one loss (a tie), one question both get right.
#: 2wiki inference: no self_ask, and a failed question.
RECORDS = [
    _record("m1", "self_ask", 0), _record("m1", "sunar", 1, em=0), _record("m1", "sunar_r", 1),
    _record("m2", "self_ask", 0), _record("m2", "sunar", 1), _record("m2", "sunar_r", 0),
    _record("m3", "self_ask", 1), _record("m3", "sunar", 1), _record("m3", "sunar_r", 0),
    _record("c1", "self_ask", 1, kind="comparison", dataset="2wiki"), _record("c1", "sunar", 0, kind="comparison", dataset="2wiki"),
    _record("c2", "self_ask", 0, kind="comparison", dataset="2wiki"), _record("c2", "sunar", 1, kind="comparison", dataset="2wiki"),
    _record("c3", "self_ask", 1, kind="comparison", dataset="2wiki"), _record("c3", "sunar", 1, kind="comparison", dataset="2wiki"),
    _record("i1", "sunar", 1, kind="inference", dataset="2wiki"), _failed("i2", "sunar", kind="inference", dataset="2wiki"),
]


def test_accuracy_by_question_type_per_variant_with_the_sign_test_against_self_ask():
    table = breakdown(RECORDS, question_type)
    assert list(table) == ["2wiki comparison", "2wiki inference", "musique 3hop", "all"]
    three = table["musique 3hop"]
    assert three["self_ask"] == {"n": 3, "right": 1, "cover_em": pytest.approx(1 / 3), "em": pytest.approx(1 / 3)}
    assert three["sunar"]["right"] == 3 and three["sunar"]["em"] == pytest.approx(2 / 3)
    assert three["sunar"]["vs_self_ask"] == {"n": 3, "wins": 2, "losses": 0, "p": 0.5}
    assert three["sunar_r"]["vs_self_ask"] == {"n": 3, "wins": 1, "losses": 1, "p": 1.0}
    # a tie: one win, one loss, p = 1
    assert table["2wiki comparison"]["sunar"]["vs_self_ask"] == {"n": 3, "wins": 1, "losses": 1, "p": 1.0}
    # a variant that ran on one type only is in that type's rows and the total, nowhere else
    assert "sunar_r" not in table["2wiki comparison"] and "sunar_r" not in table["2wiki inference"]
    assert table["all"]["sunar_r"]["n"] == 3
    # a type without self_ask: the variant's accuracy, no comparison; the failed question is wrong
    assert table["2wiki inference"] == {"sunar": {"n": 2, "right": 1, "cover_em": 0.5, "em": 0.5}}
    assert table["all"]["sunar"] == {"n": 8, "right": 6, "cover_em": 0.75, "em": 0.625, "vs_self_ask": {"n": 6, "wins": 3, "losses": 1, "p": 0.625}}


def test_a_group_where_the_variants_never_differ_has_p_one():
    records = [_record("q1", "self_ask", 1), _record("q1", "sunar", 1), _record("q2", "self_ask", 0), _record("q2", "sunar", 0)]
    assert breakdown(records, question_type)["musique 3hop"]["sunar"]["vs_self_ask"] == {"n": 2, "wins": 0, "losses": 0, "p": 1.0}


def test_the_question_type_comes_from_the_record_else_from_the_questions_file():
    assert question_type(_record("q1", "sunar", 1)) == "musique 3hop"
    assert question_type(_record("q1", "sunar", 1), {"q1": "compositional"}) == "musique 3hop"  # the record's own wins
    old = {k: v for k, v in _record("q1", "sunar", 1).items() if k != "type"}  # a record from before types were recorded
    assert question_type(old, {"q1": "compositional"}) == "musique compositional"
    assert question_type(old, {"q2": "compositional"}) == question_type(old) == "musique (type not recorded)"


def test_halves_number_the_questions_in_the_order_the_run_took_them():
    records = [_record(q, v, 1) for q in ("q3", "q1", "q2", "q5", "q4") for v in ("self_ask", "sunar")]
    of = half(records, 2)
    assert [of(r) for r in records[::2]] == ["questions 1-2", "questions 1-2", "questions 3-5", "questions 3-5", "questions 3-5"]
    assert half(records, 4)(records[-1]) == "question 5"  # a half of one question
    assert half(records, 1)(records[0]) == "question 1"


def test_the_report_has_a_table_per_breakdown_with_the_total_last():
    tables = breakdowns(RECORDS, halves=6)
    assert list(tables) == ["question type", "half of the run (its questions numbered from 1 in the order it took them)"]
    halves = tables["half of the run (its questions numbered from 1 in the order it took them)"]
    assert list(halves) == ["questions 1-6", "questions 7-8", "all"]
    assert halves["questions 1-6"]["sunar"]["vs_self_ask"] == {"n": 6, "wins": 3, "losses": 1, "p": 0.625}
    assert halves["questions 7-8"] == {"sunar": {"n": 2, "right": 1, "cover_em": 0.5, "em": 0.5}}
    report = render(aggregate(RECORDS), {}, tables)
    assert "## Accuracy by question type: cover-EM, EM, and against self_ask on the questions both answered" in report
    assert "| questions | variant | n | right (cover-EM) | cover-EM | EM | right where self_ask was wrong | wrong where self_ask was right | sign test p (two-sided) |" in report
    assert "| musique 3hop | sunar | 3 | 3 | 1.000 | 0.667 | 2 | 0 | 0.500 |" in report
    assert "| musique 3hop | self_ask | 3 | 1 | 0.333 | 0.333 | - | - | - |" in report
    assert "| 2wiki comparison | sunar | 3 | 2 | 0.667 | 0.667 | 1 | 1 | 1.000 |" in report
    assert "| 2wiki inference | sunar | 2 | 1 | 0.500 | 0.500 | - | - | - |" in report
    assert "| all | sunar | 8 | 6 | 0.750 | 0.625 | 3 | 1 | 0.625 |" in report
    assert "## Accuracy by half of the run (its questions numbered from 1 in the order it took them):" in report
    assert "| questions 7-8 | sunar | 2 | 1 | 0.500 | 0.500 | - | - | - |" in report
    assert "type not recorded" not in report


def test_a_report_of_records_without_types_says_how_to_give_them():
    records = [{k: v for k, v in r.items() if k != "type"} for r in RECORDS]
    report = render(aggregate(records), {}, breakdowns(records))
    assert "| musique (type not recorded) | sunar | 3 | 3 | 1.000 | 0.667 | 2 | 0 | 0.500 |" in report
    assert "give the questions file, sunar report DIR --questions FILE" in report
    assert "Accuracy by" not in render(aggregate(records), {})  # no tables asked for: none


def test_the_report_sunar_eval_writes_gives_the_accuracy_by_question_type(tmp_path):
    write_report(tmp_path, RECORDS, {})
    report = (tmp_path / "report.md").read_text()
    assert "| 2wiki comparison | sunar | 3 | 2 | 0.667 | 0.667 | 1 | 1 | 1.000 |" in report
    assert "Accuracy by half" not in report


def _run_folder(tmp_path, records, packed=False):
    run = tmp_path / "run"
    run.mkdir()
    lines = "".join(json.dumps(r) + "\n" for r in records)
    if packed:  # what the repository keeps
        with gzip.open(run / "predictions.jsonl.gz", "wt") as f:
            f.write(lines)
    else:
        (run / "predictions.jsonl").write_text(lines)
    (run / "run.json").write_text(json.dumps({"configuration": {"evidence": 2}, "variants": ["self_ask", "sunar"]}))
    return run


def _questions(tmp_path, ids):
    path = tmp_path / "questions.jsonl"
    rows = [{"id": q, "dataset": d, "type": t, "question": f"Who is {q}?", "answers": ["x"]} for q, d, t in ids]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_sunar_report_prints_the_report_of_a_run_folder_without_running_anything(tmp_path, capsys):
    old = [{k: v for k, v in r.items() if k != "type"} for r in RECORDS]  # recorded before the type was
    run = _run_folder(tmp_path, old, packed=True)
    kinds = {r["id"]: (r["dataset"], r["type"]) for r in RECORDS}
    questions = _questions(tmp_path, [(q, *kinds[q]) for q in kinds])
    assert main(["report", str(run), "--questions", str(questions), "--halves", "6"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Evaluation report")
    assert "| musique 3hop | sunar | 3 | 3 | 1.000 | 0.667 | 2 | 0 | 0.500 |" in out
    assert "| questions 7-8 | sunar | 2 | 1 | 0.500 | 0.500 | - | - | - |" in out
    assert sorted(p.name for p in run.iterdir()) == ["predictions.jsonl.gz", "run.json"]  # nothing written


def test_sunar_report_write_writes_the_report_again(tmp_path, capsys):
    run = _run_folder(tmp_path, RECORDS)
    assert main(["report", str(run), "--write"]) == 0
    assert "| 2wiki inference | sunar | 2 | 1 | 0.500 | 0.500 | - | - | - |" in (run / "report.md").read_text()
    assert json.loads((run / "metrics.json").read_text())["all"]["sunar"]["n"] == 8
    assert capsys.readouterr().out.strip() == (run / "report.md").read_text().strip()


def test_sunar_report_refuses_what_it_cannot_split_or_label(tmp_path, capsys):
    run = _run_folder(tmp_path, RECORDS)
    with pytest.raises(SunarError, match="the run has 8 questions; split them at 1 to 7"):
        report_run(run, halves=8)
    with pytest.raises(SunarError, match=r"2 question\(s\) of the run are not in .* \(the first: i1\)"):
        report_run(run, _questions(tmp_path, [(q, "musique", "3hop") for q in ("m1", "m2", "m3", "c1", "c2", "c3")]))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SunarError, match="holds no predictions"):
        report_run(empty)
    assert main(["report", str(tmp_path / "nowhere")]) == 1
    assert "run folder not found" in capsys.readouterr().err
