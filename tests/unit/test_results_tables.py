"""The tables of benchmarks/RESULTS.md (benchmarks/results_tables.py and the modules it assembles) on
a tiny synthetic run: recomputed answer and evidence metrics, the two kinds of seconds, the sign test
against a base variant, where the time goes, the tables read from stored outputs, and the check that
RESULTS.md and README.md hold them."""

from __future__ import annotations

import gzip
import json
import subprocess

import pytest

from benchmarks.results_confidence import signals_table
from benchmarks.results_render import answers_table, containment_table, headline_table, node_table, time_table
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


def test_time_and_node_tables(records):
    rows = read_records(records)
    assert time_table(rows, ["sunar"]).splitlines()[2] == "| `sunar` | 10.0 | 12.0 | 11.0 | 0.5 | 0.5 | 0.0 | 92% |"
    nodes = node_table(rows, "sunar").splitlines()
    assert nodes[2] == "| `decompose` | 6.00 | 60% |"
    assert nodes[3] == "| `select_batch` | 3.99 | 40% |"
    assert nodes[4] == "| other nodes | 0.01 | 0% |"
    assert nodes[5] == "| **all (wall)** | **10.00** | 100% |"


def test_signals_table_ranks_right_above_wrong(records):
    rows = [r for r in read_records(records) if r["variant"] == "sunar"]
    text = signals_table([("run", rows)], ["agreement", "semantic_entropy"], combined=False)
    # right answers have confidence 0.8, 0.7, 0.6 and the wrong one 0.3: AUROC 1
    assert "| answers (right) | 4 (3) |" in text
    assert "| the confidence shown (`agreement`) | 1.00 |" in text
    assert "| `semantic_entropy` | 1.00 |" in text


def test_the_run_date_of_an_uncommitted_folder_and_the_command_line(records, tmp_path, capsys):
    assert run_date(records) == "not committed"
    assert main(["--results", str(tmp_path), "--run", records.name]) == 0
    out = capsys.readouterr().out
    assert "| `sunar` | 4 | 2 / 1 / **3** |" in out


def test_containment_and_headline_tables(records):
    rows = read_records(records)
    rows[4]["answer"] = "Parisian"  # sunar's q1: right by cover-EM only within a word
    lines = containment_table(rows, ["sunar", "self_ask"]).splitlines()
    # sunar: right on q1 ("Parisian"), q2 (exact), q3 (exact); q1 is inside a longer answer and within a word
    assert lines[2] == "| `sunar` | 4 | 3 | 2 | 1 | 1 | 0.500 |"
    assert lines[3] == "| `self_ask` | 4 | 1 | 1 | 0 | 0 | 0.250 |"
    head = headline_table([("dev 1-4", rows, "self_ask", "sunar")]).splitlines()
    # cover-EM: self_ask right on q1, sunar on q1-q3; EM: self_ask exact on q1, sunar on q2 and q3
    assert head[2] == "| dev 1-4 | 1 / 3 | 1 / 2 | 4 | 3.0x | 2 / 0 (p = 0.50) | 2 / 1 (p = 1.00) |"
    apart = headline_table([("dev 1-4", rows, "self_ask", "sunar", False)]).splitlines()  # two runs: no time ratio
    assert apart[2] == "| dev 1-4 | 1 / 3 | 1 / 2 | 4 | - (apart) | 2 / 0 (p = 0.50) | 2 / 1 (p = 1.00) |"


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


def test_check_needs_every_table_in_the_page_and_the_headline_in_the_readme(tmp_path, capsys):
    found = [("Headline: run", "| a |"), ("Other: run", "| b |"), ("Skipped: no corpus", None)]
    page, readme = tmp_path / "RESULTS.md", tmp_path / "README.md"
    page.write_text("x\n| a |\n| b |\n")
    readme.write_text("| a |\n")
    assert check(found, page, readme) == 0
    readme.write_text("| b |\n")
    assert check(found, page, readme) == 1
    assert f"not in {readme}: Headline: run" in capsys.readouterr().err
    readme.write_text("| a |\n")
    page.write_text("| a |\n")
    assert check(found, page, readme) == 1
    assert f"not in {page}: Other: run" in capsys.readouterr().err


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


def test_support_table_rates_the_first_hops_by_the_datas_first_step_and_the_answers_by_the_weakest_hop(records):
    from benchmarks.results_confidence import first_hop_right, support_table

    rows = [r for r in read_records(records) if r["variant"] == "sunar"]  # right: q1 (cover), q2, q3; wrong: q4
    hops = {"q1": [("Lyon", 0.3), ("Paris", 0.9)], "q2": [("Anna Smith", 0.8)], "q3": [("Jo", 0.6)], "q4": [("Milano", 0.2)]}
    for r in rows:
        r["reasoning_path"] = [{"question": "?", "answer": a, "support": p} for a, p in hops[r["id"]]]
        r["signals"]["hop_support"] = min(p for _, p in hops[r["id"]])
    first = {"q1": "Lyon", "q2": "Smith", "q3": "Joanna", "q4": "Milan"}  # whole words: "Anna Smith" holds Smith, "Milano" not Milan
    assert [first_hop_right(r, first) for r in rows] == [True, True, False, False]
    assert first_hop_right({**rows[0], "reasoning_path": [{"answer": "Lyon"}]}, first) is None  # not judged
    got = support_table([("S", rows)], first)
    lines = got.splitlines()
    assert "| first hops judged (bridge right) | 4 (2) |" in lines
    assert "| **first hops: AUROC of P(yes), right bridge against wrong** | **0.75** |" in lines  # 0.3, 0.8 against 0.6, 0.2
    assert "| mean P(yes): right / wrong bridge | 0.55 / 0.40 |" in lines
    assert "| first hops judged no (P(yes) < 0.5) | 2 |" in lines
    assert "| **final answers: AUROC of the weakest hop's P(yes)** | **1.00** |" in lines  # 0.3, 0.8, 0.6 against 0.2
    assert any(line.startswith("| the signals with AUROC >= 0.55 alone on these answers (`--select 0.55`) |") and "`hop_support`" in line for line in lines)


def test_trigger_table_counts_the_first_hops_each_escalation_trigger_flags_wrong_and_right(records):
    from benchmarks.results_confidence import trigger_table

    rows = [r for r in read_records(records) if r["variant"] == "sunar"]
    split = [{"answer": "Lyon", "share": 0.5}, {"answer": "Paris", "share": 0.5}]
    hops = {"q1": ("Lyon", 0.3, split), "q2": ("Anna Smith", 0.8, split), "q3": ("Jo", 0.6, []),  # q1, q2 right bridges; q3, q4 wrong
            "q4": ("Milano", 0.2, [{"answer": "Milano", "share": 0.75}, {"answer": "unknown", "share": 0.25}])}  # unknown names nothing
    for r in rows:
        answer, support, candidates = hops[r["id"]]
        r["reasoning_path"] = [{"question": "?", "answer": answer, "support": support, "candidates": candidates}]
    lines = trigger_table([("S", rows)], {"q1": "Lyon", "q2": "Smith", "q3": "Joanna", "q4": "Milan"}).splitlines()
    assert "| S | first hops judged (wrong bridge) | 4 (2) |" in lines
    assert "|  | the judge doubts it (P(yes) < 0.5): `escalate` | 2 (1 / 1) |" in lines  # q4 wrong, q1 right
    assert "|  | its answers split (more than one semantic set) | 2 (0 / 2) |" in lines  # q1, q2
    assert "|  | **either: `escalate_uncertain`** | 3 (1 / 2) |" in lines


def test_blind_table_counts_what_the_judge_and_samples_saw_after_the_right_first_bridge(records):
    from benchmarks.results_confidence import blind_table

    rows = [r for r in read_records(records) if r["variant"] == "sunar"]  # right: q1, q2, q3; wrong: q4
    one = [{"answer": "x", "share": 1.0}]
    split = [{"answer": "Lyon", "share": 0.5}, {"answer": "Paris", "share": 0.5}]
    paths = {"q1": [("Lyon", 0.9, one), ("Paris", 0.9, one)], "q2": [("Anna Smith", 0.8, one)],  # q2 ended on its bridge
             "q3": [("Jo", 0.9, one), ("Bo", 0.9, one)],  # a wrong first bridge: not counted
             "q4": [("Milan", 0.7, one), ("Turin", 0.8, split), ("Rome", 0.3, [{"answer": "Rome", "share": 0.75}, {"answer": "unknown", "share": 0.25}])]}
    for r in rows:
        r["reasoning_path"] = [{"question": "?", "answer": a, "support": p, "candidates": c} for a, p, c in paths[r["id"]]]
    lines = blind_table(rows, {"q1": "Lyon", "q2": "Smith", "q3": "Joanna", "q4": "Milan"}).splitlines()
    assert "| questions | 2 | 1 |" in lines
    assert "| ended after the first hop | 1 | 0 |" in lines
    assert "| later hops | 1 | 2 |" in lines
    assert "| later hops the judge passed (P(yes) >= 0.5) | 1 of 1 | 1 of 2 |" in lines
    assert "| later hops whose answers fell into one semantic set | 1 of 1 | 1 of 2 |" in lines  # unknown names nothing


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


def test_a_vote_of_the_sampled_answers_replaces_a_final_answer_none_of_them_agrees_with():
    from benchmarks.results_confidence import sample_vote, sample_vote_table

    def record(answer, samples, agreement, gold):
        return {"answer": answer, "gold": gold, "signals": {"samples": samples, "agreement": agreement}}

    won = record("Seoul", ["Korea", "Goryeo", "South Korea"], 0.0, ["Korea"])  # "Korea" is in two of the three
    lost = record("Korea", ["Goryeo", "Goryeo", "unknown"], 0.0, ["Korea"])
    agreed = record("Missoula", ["Missoula, Montana", "Paris", "Paris"], 1 / 3, ["Missoula"])  # one agrees: no vote
    scattered = record("Lyon", ["Paris", "Rome", "unknown"], 0.0, ["Paris"])  # no two agree
    assert [sample_vote(r, 2) for r in (won, lost, agreed, scattered)] == ["Korea", "Goryeo", "Missoula", "Lyon"]
    assert sample_vote(won, 3) == "Seoul" and sample_vote(record("Lyon", [], 0.0, ["Paris"]), 1) == "Lyon"
    lines = sample_vote_table("dev", [won, lost, agreed, scattered]).splitlines()
    assert lines[2] == "| dev: at least 2 samples agree, none with the final answer | 4 | 2 | 1 / 1 (p = 1.000) | 1 / 1 (p = 1.000) |"
    assert lines[3] == "| dev: at least 3 samples agree, none with the final answer | 4 | 0 | 0 / 0 (p = 1.000) | 0 / 0 (p = 1.000) |"


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


def test_a_fix_measured_in_runs_split_otherwise_is_tabled_by_dev_1_100_and_the_confirmation():
    from benchmarks.results_tables import DEMOS_LOOPS, S_UNFIT, split_fixes_table

    def rows(answers: dict[str, str]) -> list[dict]:
        return [record(q, v, a, [], 0.5, 1.0, 2.0, 1, 0) for q, a in answers.items() for v in (DEMOS_LOOPS, S_UNFIT)]

    # two pairs of runs (before, after), each holding a question of dev 1-100 (q1, q3) and one of the confirmation (q2, q4)
    runs = {"b1": rows({"q1": "Paris and Rome", "q2": "1875"}), "a1": rows({"q1": "Paris", "q2": "1875"}),
            "b2": rows({"q3": "John Smith and Ann Lee", "q4": "Milan"}), "a2": rows({"q3": "John Smith", "q4": "Milan"})}
    lines = split_fixes_table({"lines 1-2": ("b1", "a1"), "lines 3-4": ("b2", "a2")}, runs.__getitem__, {"q1", "q3"}, ("before", "after")).splitlines()
    assert [line.split(" | ")[0] for line in lines[2:]] == ["| dev 1-100: Self-Ask (2 questions)", "| dev 1-100: S (2 questions)",
                                                           "| the confirmation: Self-Ask (2 questions)", "| the confirmation: S (2 questions)"]
    assert lines[2].split(" | ")[1:3] == ["2 / 2", "0 / 2"]  # q1 and q3 covered before, exact after
    assert lines[4].split(" | ")[1:3] == ["1 / 1", "1 / 1"]  # the confirmation's q2 right both times, q4 wrong


def test_a_sign_tests_p_is_written_to_two_places_three_below_one_in_a_hundred_and_never_as_zero():
    from benchmarks.results_render import fmt_p

    assert [fmt_p(p) for p in (1.0, 0.0213, 0.0042, 0.0006, 0.0004, 0.0)] == ["p = 1.00", "p = 0.02", "p = 0.004", "p = 0.001", "p < 0.001", "p < 0.001"]


def test_ceiling_table_counts_what_a_perfect_choice_among_the_answers_found_would_reach():
    from benchmarks.results_render import ceiling_table

    def rec(qid, variant, answer, gold, **found):
        return {"id": qid, "variant": variant, "answer": answer, "gold": gold, **found}

    hop = {"reasoning_path": [{"question": "q", "answer": "Rome", "candidates": [{"answer": "Rome"}, {"answer": "Paris"}]}]}
    records = [
        rec("both", "sa", "Paris", ["Paris"]), rec("both", "s", "Paris", ["Paris"]),
        rec("sa_only", "sa", "Lyon", ["Lyon"]), rec("sa_only", "s", "Nice", ["Lyon"]),
        rec("candidate", "sa", "Rome", ["Paris"]), rec("candidate", "s", "Rome", ["Paris"], **hop),
        rec("chain", "sa", "Rome", ["Oslo"]), rec("chain", "s", "Rome", ["Oslo"], chains=[{"answer": "Rome"}, {"answer": "Oslo"}]),
        rec("none", "sa", "Rome", ["Bern"]), rec("none", "s", "Rome", ["Bern"], **hop),
        rec("unpaired", "s", "Bern", ["Bern"]),  # S alone: not counted
    ]
    lines = ceiling_table([("all", records)], "sa", "s").splitlines()
    assert lines[2] == "| all | 5 | 2 | 1 | 2 | 4 | 2.00x |"
    assert ceiling_table([("none", records[8:])], "sa", "s").splitlines()[2] == "| none | 1 | 0 | 0 | 0 | 0 | - |"


def test_perfect_reader_table_counts_the_pages_each_graph_gathered_and_what_reading_them_perfectly_would_give():
    from benchmarks.results_render import perfect_reader_table

    def rec(qid, variant, answer, evidence):
        return {"id": qid, "variant": variant, "answer": answer, "gold": ["Paris"], "supporting_ids": ["a", "b"], "evidence_ids": evidence}

    texts = {"a": "Alice was born in Paris.", "b": "Bob directed it.", "c": "Carol lives in Rome.", "d": "Dan.", "e": "Eve.", "f": "Fay.",
             "g": "Paris again, too low to be read.", "h": "Hal."}
    records = [
        rec("right", "sa", "Paris", ["a", "b"]), rec("right", "s", "Paris", ["a", "b"]),
        rec("misread", "sa", "Rome", ["c", "a"]), rec("misread", "s", "Rome", ["a", "b", "c"]),  # the gold in the pages read
        rec("lower", "sa", "Rome", ["c", "d", "e", "f", "h", "g"]),  # the gold only below the first five
        rec("lower", "s", "Rome", ["c"]),
    ]
    lines = perfect_reader_table([("all", records)], "sa", "s", texts).splitlines()
    assert lines[2] == "| all | 3 | 1 / 1 | 1 / 2 | 0.500 / 0.667 | 2 / 2 |"


def test_second_chain_table_counts_each_chooser_between_s_and_a_second_chain_a_tie_keeping_s():
    from benchmarks.results_replan import second_chain_table

    def rec(qid, answer, gold, confidence=None, **signals):
        return {"id": qid, "answer": answer, "gold": gold, "confidence": confidence, "trust": confidence, "signals": signals}

    own = [rec("a", "Paris", ["Paris"], 0.9, sets=1), rec("b", "Rome", ["Oslo"], 0.2, sets=3), rec("c", "Lima", ["Lima"], 0.5, sets=1),
           rec("alone", "Oslo", ["Oslo"], 0.1)]  # no second chain: not counted
    second = [rec("a", "Nice", ["Paris"], 0.8, sets=1), rec("b", "Oslo", ["Oslo"], 0.6, sets=1), rec("c", "Bern", ["Lima"], 0.5, sets=2)]
    unrecorded = [{**r, "signals": {}, "trust": None} for r in second]  # an agreement shown, not a probability
    rows = second_chain_table([("S", own, second), ("T", own, unrecorded)], ["sets", "hop_support"]).splitlines()
    assert rows[0] == "| chooser | S | T |"
    assert rows[2:] == [
        "| S's own chain | 2 (0 taken) | 2 (0 taken) |", "| the second chain | 1 (3 taken) | 1 (3 taken) |",
        "| the right one of the two | 3 of 3 | 3 of 3 |",
        "| the higher probability shown | 3 (1 taken) | - |",  # c ties at 0.5: S's own kept
        "| the higher `sets` | 3 (1 taken) | - |",  # fewer sets is more trust; hop_support is recorded nowhere: no row
    ]


def test_replan_table_takes_the_planned_answer_below_the_threshold_where_its_weakest_link_is_stronger():
    from benchmarks.results_replan import replan_table

    def rec(qid, answer, gold, link):
        return {"id": qid, "answer": answer, "gold": gold, "signals": {"chain_support": link}}

    own = [rec("weak", "Rome", ["Oslo"], 0.2), rec("middling", "Nice", ["Lima"], 0.55), rec("strong", "Bern", ["Bern"], 0.9),
           rec("tie", "Kiev", ["Kiev"], 0.3)]
    planned = [rec("weak", "Oslo", ["Oslo"], 0.8), rec("middling", "Lima", ["Lima"], 0.7), rec("strong", "Rome", ["Bern"], 1.0),
               rec("tie", "Riga", ["Kiev"], 0.3)]  # a tie keeps S's own
    self_ask = [rec(q, "Nowhere", g, None) for q, g in (("weak", ["Oslo"]), ("middling", ["Lima"]), ("strong", ["Bern"]), ("tie", ["Kiev"]))]
    rows = replan_table(own, planned, self_ask, [0.5, 0.6, 1.0]).splitlines()[2:]
    assert rows[0] == "| 0.50 | 2 of 4 | 1 | 3 | 3 | 1 / 0 | 3 / 0 (p = 0.25) | 3 / 0 (p = 0.25) |"
    assert rows[1].startswith("| 0.60 | 3 of 4 | 2 | 4 | 4 | 2 / 0 |")
    assert rows[2].startswith("| 1.00 | 4 of 4 | 3 | 3 | 3 | 2 / 1 |")  # the strong answer given up for a wrong one


def test_replan_acted_table_reads_the_checks_own_notes_and_scores_each_first_answer_against_the_gold():
    from benchmarks.results_replan import replan_acted_table, settled
    from sunar.replan import replanned

    def rec(qid, gold, first, planned, links, em=None):
        """S's record where the planned chain ran: its notes as the check writes them (sunar.replan)."""
        asked = replanned({}, {"answer": first, "judged": {"chain_support": links[0]}}, 0.55)
        done = replanned({"replanned": "planning", "first_try": asked["first_try"]}, {"answer": planned, "judged": {"chain_support": links[1]}}, 0.55)
        answer = done["answer"]
        return {"id": qid, "variant": "s", "gold": gold, "answer": answer, "notes": [*asked["notes"], *done["notes"]]}

    records = [
        rec("won", ["Oslo"], "Rome", "Oslo", (0.2, 0.8)),  # taken, right where the first was wrong
        rec("lost", ["Bern"], "Bern", "Bern's (Swiss) capital", (0.3, 0.4)),  # taken: right by cover-EM only, so an EM loss
        rec("same", ["Kiev"], "Kiev", "Kiev", (0.5, 0.5)),  # the first answer again, kept on the tie
        rec("kept", ["Lima"], "Quito", "Lima", (0.4, 0.1)),  # kept the first
        {"id": "strong", "variant": "s", "gold": ["Riga"], "answer": "Riga", "notes": []},  # never asked
        {"id": "other", "variant": "sa", "gold": ["Riga"], "answer": "Riga", "notes": []},
    ]
    assert settled(records[0]) == ("Rome", "Oslo", True) and settled(records[4]) is None
    rows = replan_acted_table([("all", records, "s")]).splitlines()
    assert rows[2] == "| all | 5 | 4 | 1 | 2 | 1 / 0 | 1 / 1 |"


def test_avoid_table_counts_where_a_planned_hop_gave_the_weak_link_again_and_what_its_pages_named_then():
    from benchmarks.results_replan import avoid_table
    from sunar.replan import replanned

    asked = replanned({}, {"answer": "Rome", "judged": {"chain_support": 0.2}}, 0.55)
    took = replanned({"replanned": "planning", "first_try": asked["first_try"]}, {"answer": "Oslo", "judged": {"chain_support": 0.8}}, 0.55)
    kept = replanned({"replanned": "planning", "first_try": asked["first_try"]}, {"answer": "Rome", "judged": {"chain_support": 0.1}}, 0.55)
    named = "the planned chain's answer 'Rome' to 'q' is the first answer's weakest link: read again without it, they name 'Oslo'"
    stands = "the planned chain's answer 'Rome' to 'q' is the first answer's weakest link: read again without it, its pages name nothing else, so it stands"
    records = [{"id": "a", "variant": "s", "notes": [*asked["notes"], named, *took["notes"]]},
               {"id": "b", "variant": "s", "notes": [*asked["notes"], stands, *kept["notes"]]},
               {"id": "c", "variant": "s", "notes": [*asked["notes"], *kept["notes"]]}, {"id": "d", "variant": "s", "notes": []},
               {"id": "a", "variant": "other", "notes": [*asked["notes"], named]}]
    assert avoid_table([("run", records, "s")]).splitlines()[2] == "| run | 4 | 3 | 2 | 1 | 1 |"


def test_time_without_table_takes_one_nodes_wall_seconds_off_the_recorded_time():
    from benchmarks.results_replan import time_without_table

    records = [{"id": "q", "variant": "sa", "time": {"total": 10.0}}, {"id": "q", "variant": "s", "time": {"total": 25.0}, "node_seconds": {"confidence": 5.0}},
               {"id": "r", "variant": "sa", "time": {"total": 30.0}}, {"id": "r", "variant": "s", "time": {"total": 35.0}, "node_seconds": {"mer": 9.0}},
               {"id": "x", "variant": "s", "error": "the model server is down", "time": {"total": 1000.0}}]  # a failed question is not timed
    rows = time_without_table(records, "sa", "s", "confidence", "its samples").splitlines()[2:]
    assert rows == ["| `sa` | 20.0 | 1.00x |", "| `s` | 30.0 | 1.50x |", "| `s` without `confidence` (its samples) | 27.5 | 1.38x |"]


def test_shapes_table_counts_each_graphs_chains_by_length_and_first_bridge_per_dataset():
    from benchmarks.results_render import shape, shapes_table

    def rec(qid, dataset, variant, answer, gold, *hops):
        return {"id": qid, "dataset": dataset, "variant": variant, "answer": answer, "gold": gold,
                "reasoning_path": [{"question": "?", "answer": a} for a in hops]}

    first = {"m1": "Anna Smith", "m2": "Avicenna", "w1": "Lyon"}
    records = [
        rec("m1", "musique", "sa", "Smith", ["Paris"], "Smith"),  # one hop, its answer within the first bridge's words: found
        rec("m1", "musique", "s", "Paris", ["Paris"], "Anna Smith", "Paris"),
        rec("m2", "musique", "sa", "Ibn Sina", ["Sun"], "Ibn Sina"),  # another name for the bridge is not found
        rec("m2", "musique", "s", "unknown", ["Sun"]),  # no hop
        rec("w1", "2wiki", "sa", "Rome", ["Rome"], "Lyon", "Rome"),
        rec("w1", "2wiki", "s", "Milan", ["Rome"], "Turin", "Milan"),
    ]
    assert [shape(r, first) for r in records] == ["one hop, the first bridge found", "two hops or more, the first bridge found",
                                                  "one hop, the first bridge wrong", "no hop answered",
                                                  "two hops or more, the first bridge found", "two hops or more, the first bridge wrong"]
    lines = shapes_table(records, ["sa", "s"], ["Self-Ask", "S"], first).splitlines()
    assert lines[0] == ("| the chain | Self-Ask, MuSiQue: questions (right) | Self-Ask, 2Wiki: questions (right) "
                        "| S, MuSiQue: questions (right) | S, 2Wiki: questions (right) |")
    assert lines[2:] == [
        "| no hop answered | 0 (0) | 0 (0) | 1 (0) | 0 (0) |",
        "| one hop, the first bridge wrong | 1 (0) | 0 (0) | 0 (0) | 0 (0) |",
        "| one hop, the first bridge found | 1 (0) | 0 (0) | 0 (0) | 0 (0) |",
        "| two hops or more, the first bridge wrong | 0 (0) | 0 (0) | 0 (0) | 1 (0) |",
        "| two hops or more, the first bridge found | 0 (0) | 1 (1) | 1 (1) | 0 (0) |",
    ]
    assert "no hop answered" not in shapes_table(records[4:], ["sa", "s"], ["Self-Ask", "S"], first)  # a shape no chain took is left out
