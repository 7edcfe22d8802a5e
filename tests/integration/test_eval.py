"""`sunar eval` end to end on the demo corpus, with the scripted model that follows the gold
decomposition (tests/oracle.py: every answer is right, so the figures are predictable)."""

import json

import pytest

from sunar.errors import SunarError
from sunar.evals.run import EvalSettings, ranked_evidence, read_predictions, run_eval

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


@pytest.mark.slow
def test_eval_refuses_to_mix_settings_in_one_output(tmp_path, demo_index, demo_corpus, oracle):
    run_eval(settings(tmp_path, demo_index, demo_corpus, limit=1), progress=False)
    with pytest.raises(SunarError, match="other settings"):
        run_eval(settings(tmp_path, demo_index, demo_corpus, limit=1, config={"samples": 3}), progress=False)


def test_a_field_the_configuration_gained_does_not_split_a_run(tmp_path, demo_corpus):
    from sunar.evals.run import check_settings

    out = tmp_path / "run"
    out.mkdir()
    settings = EvalSettings(questions=QUESTIONS, corpus=str(demo_corpus), variants=["sunar"], out=str(out))
    check_settings(out, settings, {"llm": "x", "budget": 16, "embedder": "minilm"})  # a run before the change
    check_settings(out, settings, {"llm": "x", "budget": 16, "calibration": "auto"})  # a field added since
    with pytest.raises(SunarError, match="other settings"):
        check_settings(out, settings, {"llm": "x", "budget": 40, "calibration": "auto"})


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
