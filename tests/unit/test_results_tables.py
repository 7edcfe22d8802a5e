"""The tables of benchmarks/RESULTS.md (benchmarks/results_tables.py and the modules it assembles) on
a tiny synthetic run: recomputed answer and evidence metrics, the two kinds of seconds, the sign test
against a base variant, where the time goes, the tables read from stored outputs, each part of S
without it and with it, and the check that RESULTS.md (and, when asked, README.md) holds them."""

from __future__ import annotations

import gzip
import json
import subprocess

import pytest

from benchmarks.results_render import answers_table, headline_table, node_table
from benchmarks.results_runs import read_records, run_date, summarise
from benchmarks.results_stored import first_stage_table, rescoring_table
from benchmarks.results_tables import check, main

GOLD = {
    "q1": ("musique", ["Paris"], ["a", "b"]),
    "q2": ("musique", ["1875"], ["c", "d"]),
    "q3": ("2wiki", ["John Smith"], ["e", "f"]),
    "q4": ("2wiki", ["Rome"], ["g", "h"]),
}
# (answer, evidence ids, confidence) per question
SELF_ASK = {"q1": ("Paris", ["a", "x"], 0.9), "q2": ("1876", [], 0.2), "q3": ("Smith", [], 0.5), "q4": ("Milan", [], 0.1)}
SUNAR = {"q1": ("Paris, France", ["a", "b"], 0.8), "q2": ("1875", ["c"], 0.7), "q3": ("John Smith", ["e", "f"], 0.6), "q4": ("Milan", [], 0.3)}


def record(qid: str, variant: str, answer: str, evidence: list[str], confidence: float, wall: float, total: float, calls: int, cached: int) -> dict:
    dataset, gold, supporting = GOLD[qid]
    return {
        "id": qid, "dataset": dataset, "variant": variant, "question": f"question {qid}", "gold": gold, "answer": answer,
        "confidence": confidence, "signals": {"agreement": confidence, "semantic_entropy": 1 - confidence},
        "evidence_ids": evidence, "supporting_ids": supporting, "llm_calls": calls, "loglik_calls": 0, "cached_calls": cached,
        "wall_seconds": wall, "time": {"total": total, "llm": total - 1.0, "nli": 0.5, "scoring": 0.5, "rest": 0.0},
        "node_seconds": {"decompose": wall * 0.6, "select_batch": wall * 0.4 - 0.01, "tiny": 0.01},
        # stored metrics that disagree on purpose: the tables must recompute them
        "metrics": {"cover_em": 1.0, "em": 1.0, "f1": 1.0, "recall@10": 1.0},
    }


@pytest.fixture
def records(tmp_path):
    rows = [record(q, "self_ask", *SELF_ASK[q], wall=2.0, total=4.0, calls=4, cached=2) for q in GOLD]
    rows += [record(q, "sunar", *SUNAR[q], wall=10.0, total=12.0, calls=10, cached=1) for q in GOLD]
    run = tmp_path / "dev4-run"
    run.mkdir()
    with gzip.open(run / "predictions.jsonl.gz", "wt") as f:
        f.write("\n".join(json.dumps(r) for r in rows) + "\n")
    return run


def test_read_records_prefers_the_working_copy_unless_asked_for_the_committed_file(records):
    assert len(read_records(records)) == 8
    (records / "predictions.jsonl").write_text(json.dumps(read_records(records)[0]) + "\n")
    assert len(read_records(records)) == 1
    # a run being resumed beside its committed file does not change what RESULTS.md reports
    assert len(read_records(records, committed=True)) == 8
    (records / "predictions.jsonl.gz").unlink()
    assert len(read_records(records, committed=True)) == 1


def test_read_records_keeps_one_record_per_question_and_variant_the_last(records):
    rows = read_records(records)
    again = {**rows[0], "answer": "Lyon"}  # the same question answered again by a resumed run
    (records / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [*rows, again]))
    kept = read_records(records)
    assert len(kept) == 8
    assert [r["answer"] for r in kept if (r["id"], r["variant"]) == (again["id"], again["variant"])] == ["Lyon"]


def test_summarise_recomputes_the_metrics_from_the_answers(records):
    s = summarise(read_records(records), "sunar", base="self_ask")
    assert s["n"] == 4 and s["right"] == 3
    assert s["right_by_dataset"] == {"musique": 2, "2wiki": 1}
    assert s["cover_em"] == pytest.approx(0.75)
    assert s["em"] == pytest.approx(0.5)  # "Paris, France" covers Paris but is not an exact match
    assert s["f1"] == pytest.approx((2 / 3 + 1 + 1 + 0) / 4)
    assert s["recall@10"] == pytest.approx((1 + 0.5 + 1 + 0) / 4)
    assert s["recall@10_by_dataset"] == {"musique": pytest.approx(0.75), "2wiki": pytest.approx(0.5)}
    assert s["wall_seconds"] == pytest.approx(10.0) and s["recorded_seconds"] == pytest.approx(12.0)
    # against self_ask: right on q2 and q3 where it was wrong, never the reverse: p = 2 * 0.5^2
    assert (s["wins"], s["losses"], s["p"]) == (2, 0, pytest.approx(0.5))
    assert s["recorded_ratio"] == pytest.approx(3.0) and s["wall_ratio"] == pytest.approx(5.0)
    assert s["answers_differ"] == 3 and s["evidence_differ"] == 3

    base = summarise(read_records(records), "self_ask")
    assert (base["right"], base["em"], base["recall@10"]) == (1, 0.25, pytest.approx(0.125))
    assert base["f1"] == pytest.approx((1 + 0 + 2 / 3 + 0) / 4)
    assert "wins" not in base


def test_answers_table_rows(records):
    text = answers_table(read_records(records), ["sunar", "self_ask"], differ=True)
    lines = text.splitlines()
    assert "wall s / q" in lines[0] and "recorded s / q" in lines[0] and "likelihood calls" not in lines[0]
    assert lines[2] == "| `sunar` | 4 | 2 / 1 / **3** | 0.750 | 0.500 | 0.667 | 0.625 | 10.0 | 1.0 | 10.0 | 12.0 | 3.0x | 2 / 0 (p = 0.50) | 3 / 3 |"
    assert lines[3] == "| `self_ask` | 4 | 1 / 0 / **1** | 0.250 | 0.250 | 0.417 | 0.125 | 4.0 | 2.0 | 2.0 | 4.0 | 1.0x | - | - |"
    # without the base in the run, no comparison columns
    assert "sign test" not in answers_table(read_records(records), ["sunar"], base="rag")


def test_parse_fallbacks_get_a_column_only_where_there_are_some(records):
    rows = read_records(records)
    rows[4]["parse_fallbacks"] = 1  # sunar's q1
    lines = answers_table(rows, ["sunar", "self_ask"]).splitlines()
    assert lines[0].split(" | ")[8] == "parse fall-backs"
    assert lines[2].split(" | ")[8] == "0.25" and lines[3].split(" | ")[8] == "0.00"


def test_a_failed_question_counts_as_wrong_but_not_in_the_cost(records):
    rows = read_records(records)
    rows[4] |= {"error": "boom", "wall_seconds": 1000.0}  # sunar's q1
    s = summarise(rows, "sunar")
    assert (s["n"], s["errors"], s["right"], s["wall_seconds"]) == (4, 1, 2, pytest.approx(10.0))


def test_the_run_date_of_an_uncommitted_folder_and_the_command_line(records, tmp_path, capsys):
    assert run_date(records) == "not committed"
    assert main(["--results", str(tmp_path), "--run", records.name]) == 0
    out = capsys.readouterr().out
    assert "| `sunar` | 4 | 2 / 1 / **3** |" in out


def test_tables_of_stored_outputs(tmp_path):
    for name, rescoring, right, recall in (("free", None, 29, 0.74), ("official", "official", 29, 0.78)):
        run = tmp_path / name
        run.mkdir()
        (run / "run.json").write_text(json.dumps({"configuration": {"rescoring": rescoring} if rescoring else {}}))
        metrics = {"n": 100, "cover_em": right / 100, "em": 0.16, "recall@10": recall, "llm_calls": 21.8, "seconds": {"total": 166.4}}
        (run / "metrics.json").write_text(json.dumps({"all": {"sunar": metrics}}))
    lines = rescoring_table([tmp_path / "free", tmp_path / "official"]).splitlines()
    assert lines[2] == "| `free` | `paper` | 100 | 29 | 0.160 | 0.740 | 21.8 | 166 |"
    assert lines[3].startswith("| `official` | `official` | 100 | 29 | 0.160 | 0.780 |")

    output = tmp_path / "output.txt"
    output.write_text("## First stage\n| query set | retriever | queries | R@10 | R@100 |\n|---|---|---|---|---|\n"
                      "| Q | bm25 (1.5 ms/query) | 10 | 0.600 | 0.800 |\n| Q | fused (13.6 ms/query) | 10 | 0.700 | 0.900 |\n")
    lines = first_stage_table(output).splitlines()
    assert lines[0] == "| query set | bm25 R@10 / R@100 (ms / query) | fused R@10 / R@100 (ms / query) |"
    assert lines[2] == "| Q (10) | 0.600 / 0.800 (2 ms) | 0.700 / 0.900 (14 ms) |"


def test_the_committed_predictions_are_those_of_the_head_commit(records):
    def git(*args):
        subprocess.run(["git", *args], cwd=records, check=True, capture_output=True)

    git("init", "-q")
    git("add", "predictions.jsonl.gz")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "run")
    rows = read_records(records)
    with gzip.open(records / "predictions.jsonl.gz", "wt") as f:  # a run going on rewrites the packed file
        f.write(json.dumps(rows[0]) + "\n")
    (records / "predictions.jsonl").write_text(json.dumps(rows[0]) + "\n")
    assert len(read_records(records, committed=True)) == 8
    assert len(read_records(records)) == 1


def test_chain_table_rates_the_answers_judge_and_the_weakest_link_beside_the_weakest_hop(records):
    from benchmarks.results_confidence import chain_table

    rows = [r for r in read_records(records) if r["variant"] == "sunar"]  # right: q1, q2, q3; wrong: q4
    judged = {"q1": (0.9, 0.4), "q2": (0.3, 0.9), "q3": (0.8, 0.7), "q4": (0.6, 0.3)}  # (weakest hop, answer fits)
    for r in rows:
        hop, fits = judged[r["id"]]
        r["signals"].update({"hop_support": hop, "answer_fits": fits, "chain_support": min(hop, fits)})
    lines = chain_table([("S", rows)]).splitlines()
    assert "| answers (right) | 4 (3) |" in lines
    assert "| AUROC alone: the weakest hop's support (`hop_support`) | 0.67 |" in lines  # 0.9, 0.3, 0.8 against 0.6
    assert "| AUROC alone: the final answer's fit to the question (`answer_fits`) | 1.00 |" in lines
    assert "| AUROC alone: **the least of the two (`chain_support`)** | **0.83** |" in lines  # 0.4, 0.3, 0.7 against 0.3: a tie counts half
    assert "| mean `answer_fits`: right / wrong answers | 0.67 / 0.30 |" in lines
    assert "| answers judged not to answer the question (`answer_fits` < 0.5): n (right) | 2 (1) |" in lines


def test_acted_table_counts_what_the_doubted_answers_became_by_the_checks_notes(records):
    from benchmarks.results_confidence import acted_table, doubted
    from sunar.nodes.check import chose_note
    from sunar.nodes.decompose import went_on_note

    rows = [r for r in read_records(records) if r["variant"] == "sunar"]  # right: q1, q2, q3; wrong: q4
    notes = {"q1": [chose_note("Lyon", 0.2, "Paris, France", 0.9)],  # the notes as the check writes them
             "q2": [went_on_note("1875 AD", "Who is X?") + "; asked ..."],
             "q4": [chose_note("Rome's", 0.1, "Milan", 0.6)]}
    for r in rows:
        r["notes"] = notes.get(r["id"], [])
        r["signals"]["answer_fits"] = 0.2 if r["id"] == "q3" else 0.9
    assert [doubted(r) for r in rows] == ["Lyon", "1875 AD", None, "Rome's"]
    lines = acted_table([("dev", rows), ("none", [])]).splitlines()
    assert lines[0] == "|  | dev | none |"
    assert "| answers (right) | 4 (3) | 0 (0) |" in lines
    assert "| another answer found replaced it (`choose`): n (right now; right before) | 2 (1; 1) | 0 (0; 0) |" in lines
    assert "| its chain of one hop went one step further (`go_on`): n (right now; right before) | 1 (1; 1) | 0 (0; 0) |" in lines
    assert "| acting against keeping the doubted answer: wins / losses (sign test p) | 1 / 1 (p = 1.00) | - |" in lines  # q1 won, q4 lost
    assert "| answers still judged not to answer the question: n (right) | 1 (1) | 0 (0) |" in lines


def test_each_fix_takes_its_questions_from_the_run_after_it_a_later_fix_over_an_earlier():
    from benchmarks.results_tables import with_fixes

    def rec(qid, variant, answer):
        return {"id": qid, "variant": variant, "answer": answer}

    runs = {"a1": [rec("q1", "s", "after the first"), rec("q2", "s", "after the first")], "a2": [rec("q2", "s", "after the second")]}
    records = [rec("q1", "s", "first run"), rec("q2", "s", "first run"), rec("q3", "s", "first run"), rec("q1", "self_ask", "first run")]
    first, second = {"dev": ("b1", "a1")}, {"dev": ("b2", "a2")}
    fixed = with_fixes(records, runs.__getitem__, first, second)
    assert [r["answer"] for r in fixed] == ["after the first", "after the second", "first run", "first run"]  # the other graph's kept
    assert [r["answer"] for r in with_fixes(records, runs.__getitem__, first)] == ["after the first", "after the first", "first run", "first run"]


def test_a_sign_tests_p_is_written_to_two_places_three_below_one_in_a_hundred_and_never_as_zero():
    from benchmarks.results_render import fmt_p

    assert [fmt_p(p) for p in (1.0, 0.0213, 0.0042, 0.0006, 0.0004, 0.0)] == ["p = 1.00", "p = 0.02", "p = 0.004", "p = 0.001", "p < 0.001", "p < 0.001"]


def test_node_table_folds_the_small_nodes_into_one_row(records):
    nodes = node_table(read_records(records), "sunar").splitlines()
    assert nodes[2] == "| `decompose` | 6.00 | 60% |"
    assert nodes[3] == "| `select_batch` | 3.99 | 40% |"
    assert nodes[4] == "| other nodes | 0.01 | 0% |"
    assert nodes[5] == "| **all (wall)** | **10.00** | 100% |"


def test_headline_table_compares_two_variants_by_cover_em_and_em(records):
    rows = read_records(records)
    head = headline_table([("dev 1-4", rows, "self_ask", "sunar")]).splitlines()
    # cover-EM: self_ask right on q1, sunar on q1-q3; EM: self_ask exact on q1, sunar on q2 and q3
    assert head[2] == "| dev 1-4 | 1 / 3 | 1 / 2 | 4 | 3.0x | 2 / 0 (p = 0.50) | 2 / 1 (p = 1.00) |"
    apart = headline_table([("dev 1-4", rows, "self_ask", "sunar", False)], names=("without", "with it")).splitlines()  # two runs: no time ratio
    assert apart[0].startswith("| questions | right (cover-EM): without / with it |")
    assert apart[2] == "| dev 1-4 | 1 / 3 | 1 / 2 | 4 | - (apart) | 2 / 0 (p = 0.50) | 2 / 1 (p = 1.00) |"


def test_the_parts_by_dataset_give_each_datasets_right_answers_and_wins_and_losses(records):
    from benchmarks.results_render import by_dataset_table

    rows = read_records(records)
    lines = by_dataset_table([("dev 1-4", rows, "self_ask", "sunar"), ("2Wiki only", [r for r in rows if r["dataset"] == "2wiki"], "self_ask", "sunar")]).splitlines()
    assert lines[0] == ("| questions | MuSiQue: without / with it | MuSiQue: right / wrong where without was not | 2Wiki: without / with it | "
                        "2Wiki: right / wrong where without was not |")
    # MuSiQue: self_ask right on q1, sunar on q1 and q2; 2Wiki: sunar right on q3 only
    assert lines[2] == "| dev 1-4 | 1 / 2 | 1 / 0 | 0 / 1 | 1 / 0 |"
    assert lines[3] == "| 2Wiki only | - | - | 0 / 1 | 1 / 0 |"  # a dataset a comparison did not run on


def test_a_confirmation_run_is_compared_per_dataset_then_over_all(records):
    from benchmarks.results_tables import by_dataset

    rows = by_dataset(read_records(records), "dev2")
    assert [(label, base, variant) for label, _, base, variant in rows] == [
        ("dev2, MuSiQue (2)", "self_ask", "sunar"), ("dev2, 2Wiki (2)", "self_ask", "sunar"), ("dev2, all (4)", "self_ask", "sunar")]
    assert headline_table(rows).splitlines()[4].startswith("| dev2, all (4) | 1 / 3 | 1 / 2 | 4 |")


def test_check_needs_every_table_in_the_page_and_the_headline_in_a_readme_only_when_given(tmp_path, capsys):
    found = [("Headline: run", "| a |"), ("Other: run", "| b |"), ("Skipped: no corpus", None)]
    page, readme = tmp_path / "RESULTS.md", tmp_path / "README.md"
    page.write_text("x\n| a |\n| b |\n")
    readme.write_text("| b |\n")
    assert check(found, page) == 0  # no README asked for
    assert "README" not in capsys.readouterr().out
    assert check(found, page, readme) == 1
    assert f"not in {readme}: Headline: run" in capsys.readouterr().err
    readme.write_text("| a |\n")
    assert check(found, page, readme) == 0
    page.write_text("| a |\n")
    assert check(found, page) == 1
    assert f"not in {page}: Other: run" in capsys.readouterr().err


def test_a_fix_is_one_row_per_graph_over_every_run_it_was_measured_in_and_each_question_once():
    from benchmarks.results_tables import DEMOS_LOOPS, S_UNFIT, fixes_rows

    def rows(answers: dict[str, str]) -> list[dict]:
        return [record(q, v, a, [], 0.5, 1.0, 2.0, 1, 0) for q, a in answers.items() for v in (DEMOS_LOOPS, S_UNFIT)]

    # two pairs of runs (before, after), each holding a question of dev 1-100 (q1, q3) and one of the second half (q2, q4)
    runs = {"b1": rows({"q1": "Paris and Rome", "q2": "1875"}), "a1": rows({"q1": "Paris", "q2": "1875"}),
            "b2": rows({"q3": "John Smith and Ann Lee", "q4": "Milan"}), "a2": rows({"q3": "John Smith", "q4": "Milan"})}
    got = fixes_rows("the list rule", {"lines 1-2": ("b1", "a1"), "lines 3-4": ("b2", "a2")}, runs.__getitem__)
    assert [label for label, *_ in got] == ["the list rule: Self-Ask, dev 1-217 (4 questions)", "the list rule: S, dev 1-217 (4 questions)"]
    lines = headline_table(got, names=("before", "after")).splitlines()
    # right by cover-EM before and after on q1, q2, q3; exact only after on q1 and q3; the two runs timed apart
    assert lines[2].split(" | ")[1:5] == ["3 / 3", "1 / 3", "4", "- (apart)"]
    runs["a2"] = rows({"q3": "John Smith", "q1": "Paris"})  # q1 run again after the second fix: counted once only, or not at all
    with pytest.raises(ValueError, match="run twice"):
        fixes_rows("the list rule", {"lines 1-2": ("b1", "a1"), "lines 3-4": ("b2", "a2")}, runs.__getitem__)


def test_before_after_names_the_run_before_a_change_apart_even_where_it_called_the_graph_otherwise():
    from benchmarks.results_tables import before_after

    before = [{"id": "q1", "variant": "sunar+replan_below=0.55", "answer": "A"}, {"id": "q1", "variant": "self_ask", "answer": "B"}]
    after = [{"id": "q1", "variant": "sunar", "answer": "C"}, {"id": "q1", "variant": "self_ask", "answer": "D"}]
    assert [(r["variant"], r["answer"]) for r in before_after(before, after, "sunar", "sunar+replan_below=0.55")] == [("sunar@before", "A"), ("sunar", "C")]
    assert [(r["variant"], r["answer"]) for r in before_after(before, after, "self_ask")] == [("self_ask@before", "B"), ("self_ask", "D")]


def test_replan_below_composed_takes_the_planned_answer_below_the_threshold_where_its_weakest_link_is_stronger():
    from benchmarks.results_replan import composed

    def rec(qid, answer, link):
        return {"id": qid, "answer": answer, "signals": {"chain_support": link} if link is not None else {}}

    own = [rec("weak", "Rome", 0.2), rec("middling", "Nice", 0.55), rec("strong", "Bern", 0.9), rec("tie", "Kiev", 0.3),
           rec("unjudged", "Lima", None), rec("alone", "Oslo", 0.1)]  # alone: no planned run of it, not counted
    planned = [rec("weak", "Oslo", 0.8), rec("middling", "Lima", 0.7), rec("strong", "Rome", 1.0), rec("tie", "Riga", 0.3), rec("unjudged", "Quito", 0.9)]
    answers, asked, taken = composed(own, planned, 0.6)
    assert [a["answer"] for a in answers] == ["Oslo", "Lima", "Bern", "Kiev", "Lima"]  # a tie keeps S's own; an unjudged answer is not weak
    assert asked == {"weak", "middling", "tie"} and taken == {"weak", "middling"}
    assert composed(own, planned, 0.5)[2] == {"weak"}
