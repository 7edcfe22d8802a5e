"""`sunar eval` end to end on the demo corpus, with the scripted model that follows the gold
decomposition (tests/oracle.py: every answer is right, so the figures are predictable)."""

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from sunar.errors import SunarError
from sunar.evals.predictions import end_cleanly, latest, ranked_evidence, read_predictions
from sunar.evals.run import EvalSettings, check_settings, exclusive, run_eval, variant_graph, variant_settings

QUESTIONS = "sunar/data/demo_questions.jsonl"
SMALL = {"batch_size": 4, "budget": 8, "samples": 2, "evidence": 3, "max_hops": 3, "first_stage_depth": 20, "max_tokens": 32}


def settings(tmp_path, demo_index, demo_corpus, **kw):
    config = {**SMALL, "nli": "llm", "scorer": "dense", **kw.pop("config", {})}
    return EvalSettings(
        questions=QUESTIONS, corpus=str(demo_corpus), variants=["sunar", "self_ask"], out=str(tmp_path / "run"),
        limit=kw.pop("limit", 3), index=str(demo_index), configuration=config, **kw,
    )


@pytest.mark.slow
def test_eval_writes_predictions_metrics_report_and_plots_and_resumes_for_free(tmp_path, demo_index, demo_corpus, oracle):
    out = run_eval(settings(tmp_path, demo_index, demo_corpus), progress=False)
    records = read_predictions(out / "predictions.jsonl")
    assert {(r["id"], r["variant"]) for r in records} == {(f"demo-{i}", v) for i in (1, 2, 3) for v in ("sunar", "self_ask")}
    for r in records:
        assert r["metrics"]["cover_em"] == 1.0, r
        assert r["llm_calls"] > 0 and r["prompt_tokens"] > 0 and r["time"]["total"] >= r["time"]["llm"]
        assert len(r["reasoning_path"]) == 2 and r["evidence_ids"]
    sunar = [r for r in records if r["variant"] == "sunar"]
    assert all(r["judge_calls"] > 0 for r in sunar)  # ASU ran; self_ask has no NLI
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["all"]["sunar"]["n"] == 3 and metrics["all"]["sunar"]["cover_em"] == 1.0
    assert metrics["all"]["self_ask"]["recall@10"] > 0
    assert metrics["all"]["sunar"]["wrong_answers"] == {"in_top": 0, "lower": 0, "not_retrieved": 0}
    report = (out / "report.md").read_text()
    assert "| sunar |" in report and "cover-EM" in report and "vs self_ask" in report
    assert "Where the wrong answers were lost" in report and "(l = 3;" in report
    for png in ("accuracy.png", "recall.png", "cost.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # rerun of finished work: nothing is recomputed
    model = oracle
    calls = len(model.calls)
    run_eval(settings(tmp_path, demo_index, demo_corpus), progress=False)
    assert len(model.calls) == calls and len(read_predictions(out / "predictions.jsonl")) == 6

    # an interrupted run (predictions lost, last line cut) replays the LLM calls from the cache
    lines = (out / "predictions.jsonl").read_text().splitlines(keepends=True)
    (out / "predictions.jsonl").write_text("".join(lines[:2]) + lines[2][:40])
    run_eval(settings(tmp_path, demo_index, demo_corpus), progress=False)
    again = read_predictions(out / "predictions.jsonl")
    assert len(again) == 6 and len(model.calls) == calls
    assert all(r["cached_calls"] == r["llm_calls"] + r["judge_calls"] for r in again[2:])

    # a clone keeps only predictions.jsonl.gz: the rerun unpacks it and computes nothing
    import gzip

    (out / "predictions.jsonl.gz").write_bytes(gzip.compress((out / "predictions.jsonl").read_bytes()))
    (out / "predictions.jsonl").unlink()
    assert len(read_predictions(out / "predictions.jsonl")) == 6  # read from the compressed copy
    run_eval(settings(tmp_path, demo_index, demo_corpus), progress=False)
    assert len(read_predictions(out / "predictions.jsonl")) == 6 and (out / "predictions.jsonl").exists()


@pytest.mark.slow
def test_eval_refuses_to_mix_settings_in_one_output(tmp_path, demo_index, demo_corpus, oracle):
    run_eval(settings(tmp_path, demo_index, demo_corpus, limit=1), progress=False)
    with pytest.raises(SunarError, match="other settings"):
        run_eval(settings(tmp_path, demo_index, demo_corpus, limit=1, config={"samples": 3}), progress=False)


def test_a_field_the_configuration_gained_does_not_split_a_run(tmp_path, demo_corpus):
    out = tmp_path / "run"
    out.mkdir()
    settings = EvalSettings(questions=QUESTIONS, corpus=str(demo_corpus), variants=["sunar"], out=str(out))
    check_settings(out, settings, {"llm": "x", "budget": 16, "embedder": "minilm"})  # a run before the change
    check_settings(out, settings, {"llm": "x", "budget": 16, "calibration": "auto"})  # a field added since
    with pytest.raises(SunarError, match="other settings") as refused:
        check_settings(out, settings, {"llm": "x", "budget": 40, "calibration": "auto", "focus_pages": True})
    assert "other settings: budget=40 (the run: 16) (see" in str(refused.value)  # a field the run lacks is no difference
    assert "; resume it with --set budget=16, or choose another --out or delete it" in str(refused.value)
    check_settings(out, settings, {"llm": "x", "budget": 16, "calibration": "auto", "focus_pages": False})
    with pytest.raises(SunarError, match=r"focus_pages=true \(the run: false\).*--set focus_pages=false"):  # as --set takes a switch
        check_settings(out, settings, {"llm": "x", "budget": 16, "calibration": "auto", "focus_pages": True})
    with pytest.raises(SunarError, match="other settings: llm=y \\(the run: x\\)") as other_model:
        check_settings(out, settings, {"llm": "y", "budget": 16, "calibration": "auto", "focus_pages": False})
    assert "resume it" not in str(other_model.value)  # another model's answers are another run


def test_ranked_evidence_puts_final_evidence_first_then_each_hop_in_turn():
    out = {
        "evidence": [{"id": "b"}, {"id": "x"}],
        "hops": [{"evidence": [{"id": "x"}, {"id": "c"}, {"id": "e"}]}, {"evidence": [{"id": "b"}, {"id": "d"}]}],
    }
    assert ranked_evidence(out) == ["b", "x", "c", "d", "e"]


def test_unknown_variant_and_missing_questions_are_clear_errors(tmp_path, demo_corpus):
    base = {"corpus": str(demo_corpus), "out": str(tmp_path / "o")}
    with pytest.raises(SunarError, match="unknown variant"):
        run_eval(EvalSettings(questions=QUESTIONS, variants=["sunar", "nope"], **base), progress=False)
    with pytest.raises(SunarError, match="questions file not found"):
        run_eval(EvalSettings(questions=str(tmp_path / "none.jsonl"), variants=["sunar"], **base), progress=False)


def test_a_variant_names_its_graph_and_the_fields_it_sets():
    assert (variant_graph("sunar"), variant_settings("sunar")) == ("sunar", {})
    spec = "sunar+first_stage=bm25+asu_skip_outranked=false"
    assert variant_graph(spec) == "sunar" and variant_settings(spec) == {"first_stage": "bm25", "asu_skip_outranked": "false"}


@pytest.mark.parametrize(
    "variant, message",
    [
        ("sunar+samples", "write GRAPH\\+FIELD=VALUE"),
        ("sunar+=3", "write GRAPH\\+FIELD=VALUE"),
        ("sunar+index_dir=elsewhere", "index_dir is the run's"),
        ("sunar+llm_cache=x.sqlite", "llm_cache is the run's"),
        ("sunar+profile=paper", "profile is the run's"),
        ("sunar+sampels=3", "variant 'sunar\\+sampels=3': .*unknown field 'sampels'"),
        ("sunar+samples=-1", "variant 'sunar\\+samples=-1': .*samples"),
        ("nope+samples=3", "unknown variant\\(s\\) nope\\+samples=3"),
    ],
)
def test_a_bad_variant_is_one_clear_error_before_anything_runs(tmp_path, demo_corpus, variant, message):
    s = EvalSettings(questions=QUESTIONS, corpus=str(demo_corpus), variants=["sunar", variant], out=str(tmp_path / "o"), index=str(tmp_path / "idx"))
    with pytest.raises(SunarError, match=message) as caught:
        run_eval(s, progress=False)
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "idx").exists() and not (tmp_path / "o").exists()  # refused before the index is built


@pytest.mark.slow
def test_an_ablation_runs_in_the_same_run_from_the_same_llm_cache(tmp_path, demo_index, demo_corpus, oracle):
    s = settings(tmp_path, demo_index, demo_corpus, limit=2)
    s.variants = ["sunar", "sunar+max_hops=1"]
    out = run_eval(s, progress=False)
    final = latest(read_predictions(out / "predictions.jsonl"))
    for q in ("demo-1", "demo-2"):
        assert len(final[(q, "sunar")]["reasoning_path"]) == 2
        ablated = final[(q, "sunar+max_hops=1")]
        assert len(ablated["reasoning_path"]) == 1 and any("hop limit" in n for n in ablated["notes"])
        assert ablated["cached_calls"] > 0  # the first hop's calls were read from the run's cache
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics["all"]) == {"sunar", "sunar+max_hops=1"}
    assert "| sunar+max_hops=1 |" in (out / "report.md").read_text()
    assert json.loads((out / "run.json").read_text())["configuration"]["max_hops"] == 3  # the run's own value


@pytest.mark.slow
def test_skip_runs_the_questions_after_the_first_n(tmp_path, demo_index, demo_corpus, oracle):
    s = settings(tmp_path, demo_index, demo_corpus, limit=1, skip=1)
    s.variants = ["self_ask"]
    records = read_predictions(run_eval(s, progress=False) / "predictions.jsonl")
    assert [(r["id"], r["metrics"]["cover_em"]) for r in records] == [("demo-2", 1.0)]


@pytest.mark.slow
def test_given_pools_reach_the_graphs_that_take_a_pool_and_only_with_the_flag(tmp_path, demo_index, demo_corpus, oracle):
    lynch = "d318efe81f917"
    first = json.loads(Path(QUESTIONS).read_text().splitlines()[0])
    questions = tmp_path / "pooled.jsonl"
    questions.write_text(json.dumps({**first, "pool_ids": [lynch]}) + "\n")

    def evidence(given_pools, out):
        s = settings(tmp_path, demo_index, demo_corpus, limit=1, given_pools=given_pools)
        s.questions, s.variants, s.out = str(questions), ["rag", "self_ask"], str(tmp_path / out)
        records = latest(read_predictions(run_eval(s, progress=False) / "predictions.jsonl"))
        return {v: records[("demo-1", v)]["evidence_ids"] for v in ("rag", "self_ask")}

    given, searched = evidence(True, "given"), evidence(False, "searched")
    assert given["rag"] == [lynch] and len(searched["rag"]) > 1  # the corpus's first stage without the flag
    assert given["self_ask"] == searched["self_ask"]  # a graph without a pool searches the corpus either way
    assert json.loads((tmp_path / "given" / "run.json").read_text())["given_pools"] is True
    s = settings(tmp_path, demo_index, demo_corpus, limit=1)
    s.questions, s.variants, s.out = str(questions), ["rag"], str(tmp_path / "given")
    with pytest.raises(SunarError, match="other settings"):  # one run, one choice
        run_eval(s, progress=False)


@pytest.mark.slow
def test_an_unexpected_error_in_one_question_is_recorded_and_not_retried_unless_asked(tmp_path, demo_index, demo_corpus, oracle):
    from oracle import script
    from scripted import ScriptedLLM
    from sunar.resources import POOL

    broken = {"on": True}

    def flaky(prompt, i):
        if broken["on"] and "film Mulholland Drive" in prompt:  # demo-2 only
            raise RuntimeError("boom\nand a second line")
        return script(prompt, i)

    llm = ScriptedLLM(flaky, "flaky")
    POOL.clear()
    POOL.llm_factory = lambda spec: llm

    def run(**kw):
        s = settings(tmp_path, demo_index, demo_corpus, **kw)
        s.variants = ["self_ask"]
        return run_eval(s, progress=False)

    out = run()
    records = read_predictions(out / "predictions.jsonl")
    assert [(r["id"], r["error"]) for r in records if r.get("error")] == [("demo-2", "unexpected RuntimeError: boom")]
    assert sorted(r["id"] for r in records if not r.get("error")) == ["demo-1", "demo-3"]
    assert json.loads((out / "metrics.json").read_text())["all"]["self_ask"]["errors"] == 1

    calls = len(llm.calls)
    run()  # a rerun does not try the recorded error again
    assert len(llm.calls) == calls and len(read_predictions(out / "predictions.jsonl")) == 3
    broken["on"] = False
    run(retry_errors=True)  # unless asked: the answer then wins over the error
    assert len(llm.calls) > calls
    final = latest(read_predictions(out / "predictions.jsonl"))
    assert not final[("demo-2", "self_ask")].get("error") and final[("demo-2", "self_ask")]["metrics"]["cover_em"] == 1.0
    assert json.loads((out / "metrics.json").read_text())["all"]["self_ask"]["errors"] == 0


def test_a_damaged_predictions_line_is_skipped_with_its_number_and_the_rest_kept(tmp_path, caplog):
    path = tmp_path / "predictions.jsonl"
    good = [json.dumps({"id": f"q{i}", "variant": "sunar", "answer": "x"}) for i in range(4)]
    path.write_text("\n".join([good[0], good[1], "#&garbage", good[2], '["not", "a record"]', good[3], good[0][:25]]))
    original = path.read_bytes()
    with caplog.at_level(logging.WARNING, logger="sunar"):
        records = read_predictions(path)
    assert [r["id"] for r in records] == ["q0", "q1", "q2", "q3"]
    assert path.read_bytes() == original  # reading changes nothing (sunar calibrate reads a running eval's file)
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert all(f"predictions.jsonl line {n} is damaged; skipped" in warned for n in (3, 5, 7))
    end_cleanly(path)  # before a run appends: the record cut short at the end goes, nothing else
    assert path.read_bytes() == original[: original.rindex(b"\n") + 1]
    path.write_text(good[0])  # a whole record that only lacks its newline gets it
    end_cleanly(path)
    assert path.read_text() == good[0] + "\n"


def test_run_json_is_replaced_whole_or_not_at_all(tmp_path, demo_corpus, monkeypatch):
    out = tmp_path / "run"
    out.mkdir()
    s = EvalSettings(questions=QUESTIONS, corpus=str(demo_corpus), variants=["sunar"], out=str(out))
    check_settings(out, s, {"llm": "x", "budget": 16})
    before = (out / "run.json").read_text()
    write_text = Path.write_text

    def disk_full(self, data, *args, **kwargs):
        write_text(self, data[:20], *args, **kwargs)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", disk_full)
    s.variants = ["sunar", "self_ask"]
    with pytest.raises(OSError, match="No space left"):
        check_settings(out, s, {"llm": "x", "budget": 16})
    monkeypatch.undo()
    assert (out / "run.json").read_text() == before
    (out / "run.json").write_text('{"questions": ')  # damaged by hand: one line that says what to do
    with pytest.raises(SunarError, match=r"run.json is damaged \(.*\); restore it, or delete it"):
        check_settings(out, s, {"llm": "x", "budget": 16})


def test_one_run_at_a_time_writes_to_an_output_directory_and_a_dead_runs_lock_is_free(tmp_path, demo_corpus):
    out = tmp_path / "run"
    out.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; from sunar.evals.run import exclusive\n"
         "with exclusive(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(300)", str(out)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        second = EvalSettings(questions=QUESTIONS, corpus=str(demo_corpus), variants=["sunar"], out=str(out), index=str(tmp_path / "index"),
                              configuration={"llm": "embedded:qwen2.5-1.5b", "nli": "llm", "scorer": "dense"})
        with pytest.raises(SunarError) as caught:
            run_eval(second, progress=False)
        assert str(caught.value) == f"another sunar eval (pid {holder.pid}) is writing to {out}; wait for it to end or choose another --out"
        assert not (tmp_path / "index").exists()  # refused before any work
    finally:
        holder.kill()  # SIGKILL: no clean-up runs, the kernel frees the lock
        holder.wait()
    with exclusive(out):
        pass


@pytest.mark.slow
def test_a_full_disk_stops_the_eval_with_one_line_and_a_rerun_goes_on(tmp_path, demo_index, demo_corpus, oracle, monkeypatch, capsys):
    """The disk fills while the second question is answered: the run stops there (every later
    question would fail the same way) with an error that says so, the first question's records are
    kept, and once there is room the same command goes on without asking the LLM for them again."""
    import errno

    from sunar import cli
    from sunar.evals import run as eval_run

    made = eval_run.prediction

    def filling(q, variant, result, wall):
        if q.id == "demo-2":
            raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "run" / "llm-cache.sqlite"))
        return made(q, variant, result, wall)

    monkeypatch.setattr(eval_run, "prediction", filling)
    monkeypatch.setattr(eval_run, "run_eval", lambda *a, **k: run_eval(settings(tmp_path, demo_index, demo_corpus), progress=False))  # what `sunar eval` runs
    assert cli.main(["eval", "--questions", QUESTIONS, "--corpus", str(demo_corpus), "--out", str(tmp_path / "run")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"error: the disk is full writing {tmp_path / 'run' / 'llm-cache.sqlite'}: free some space and run the same command again (an eval or an index build goes on where it stopped)"
    out = tmp_path / "run" / "predictions.jsonl"
    assert {(r["id"], r["variant"]) for r in read_predictions(out)} == {("demo-1", "sunar"), ("demo-1", "self_ask")}  # no error records
    monkeypatch.setattr(eval_run, "prediction", made)
    calls = len(oracle.calls)
    run_eval(settings(tmp_path, demo_index, demo_corpus), progress=False)
    assert len(read_predictions(out)) == 6 and all("error" not in r for r in read_predictions(out))
    assert len(oracle.calls) > calls  # demo-2 and demo-3 answered now
