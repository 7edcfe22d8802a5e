"""Standing behind an answer: calibration files, the combined trust, abstaining answers in the
state, the chat reply and --json, and `sunar calibrate`, with scripted models."""

import json
import math

import pytest

from fakes import MemoryIndex, TableScorer, docs, resources, scripted_llm, self_ask_script
from sunar import trust
from sunar.cli import main
from sunar.errors import SunarError
from sunar.graph import build_graph

QUESTION = "Where was the director of film Ronnie Rocket born?"
MODEL = {"mean": [0.0] * len(trust.FEATURES), "scale": [1.0] * len(trust.FEATURES), "intercept": 0.0,
         "coef": [2.0 if f == "agreement" else 1.0 if f == "chain_agrees" else 0.0 for f in trust.FEATURES]}


def calibration_file(tmp_path, threshold, llm="scripted:scripted"):
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps({"llm": llm, "features": list(trust.FEATURES), "model": MODEL, "threshold": threshold, "promise": "p"}))
    return path


def test_which_calibration_is_used(tmp_path):
    assert trust.load("", "x") is None and trust.load("off", "x") is None
    assert trust.load("auto", "scripted:nothing-shipped") is None
    with pytest.raises(SunarError, match="calibration file not found"):
        trust.load(str(tmp_path / "none.json"), "x")
    with pytest.raises(SunarError, match="fitted for scripted:scripted, not ollama:llama3.1"):
        trust.load(str(calibration_file(tmp_path, 0.5)), "ollama:llama3.1")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(SunarError, match="is not a calibration file"):
        trust.load(str(tmp_path / "broken.json"), "x")
    assert trust.load(str(calibration_file(tmp_path, 0.5)), "scripted:scripted")["threshold"] == 0.5


def test_judge_names_what_pulls_the_trust_down():
    calibration = {"features": list(trust.FEATURES), "model": MODEL, "threshold": 0.9}
    sure = trust.judge({"agreement": 1.0, "chain_agrees": 1.0}, calibration)
    assert sure["abstained"] is False and sure["trust"] == pytest.approx(1 / (1 + math.exp(-3)), abs=1e-4)
    unsure = trust.judge({"agreement": 0.0, "chain_agrees": -1.0}, {**calibration, "threshold": 0.5})
    assert unsure["abstained"] and unsure["why"].startswith("the reasoning chain's own answer differs")
    spread = {**MODEL, "coef": [1.0 if f in ("semantic_entropy", "sets", "hop_agreement") else 0.0 for f in trust.FEATURES]}
    pulled = trust.judge({"semantic_entropy": 1.0, "sets": 2, "hop_agreement": -0.5}, {**calibration, "model": spread, "threshold": 0.99})
    assert pulled["why"].startswith("the sampled answers mean different things; a hop's sampled answers disagree (")  # said once
    against = {**MODEL, "coef": [-1.0 if f == "agreement" else 0.0 for f in trust.FEATURES]}  # a fit against the signal's sense
    agreeing = trust.judge({"agreement": 1.0}, {**calibration, "model": against, "threshold": 0.9})
    assert agreeing["abstained"] and agreeing["why"].startswith("the signals together are too weak")  # never "they disagree"
    never = trust.judge({"agreement": 1.0}, {**calibration, "threshold": math.inf, "alpha": 0.3})
    assert never["abstained"] and never["why"].endswith("none of this model's answers could promise at most 30% wrong (trust 88%)")


def run(tmp_path, threshold):
    llm = scripted_llm(self_ask_script(["Follow up: Who directed Ronnie Rocket?", "So the final answer is: Helena"]), lambda q, i: "David Lynch")
    corpus = docs(("d1", "Ronnie Rocket", "Ronnie Rocket is a film by David Lynch."))
    res = resources(llm, TableScorer({"d1": 1.0}), MemoryIndex(corpus, default_ranking=[("d1", 1.0)]))
    config = {"configurable": {"resources": res, "samples": 2, "calibration": str(calibration_file(tmp_path, threshold))}}
    return build_graph("sunar").invoke({"question": QUESTION}, config)


def test_an_answer_below_the_threshold_is_a_best_guess_with_its_reason(tmp_path):
    out = run(tmp_path, threshold=math.inf)
    assert out["abstained"] is True and out["answer"] == "David Lynch" and out["trust"] is not None
    reply = out["messages"][-1].content
    assert reply.startswith("David Lynch\n") and "Not sure: this is a best guess. Why: " in reply
    committed = run(tmp_path, threshold=0.0)
    assert committed["abstained"] is False and committed["why"] == "" and "Not sure" not in committed["messages"][-1].content


def test_without_a_calibration_answers_are_shown_as_before():
    llm = scripted_llm(self_ask_script(["So the final answer is: Helena"]), lambda q, i: "Helena")
    res = resources(llm, TableScorer({}), MemoryIndex(docs(("d1", "T", "x")), default_ranking=[("d1", 1.0)]))
    out = build_graph("self_ask").invoke({"question": QUESTION}, {"configurable": {"resources": res, "samples": 2}})
    assert out["trust"] is None and out["abstained"] is False and out["signals"]["agreement"] == 1.0


def write_run(folder, rows, variant="sunar", llm="embedded:qwen2.5-1.5b", first=0):
    folder.mkdir()
    configuration = {"llm": llm, "samples": 3}
    (folder / "run.json").write_text(json.dumps({"questions": {"file": "q.jsonl"}, "corpus": {"file": "c.jsonl"}, "configuration": configuration, "variants": [variant]}))
    with open(folder / "predictions.jsonl", "w") as f:
        for i, (agreement, right) in enumerate(rows):
            f.write(json.dumps({"id": f"q{first + i}", "variant": variant, "metrics": {"cover_em": right}, "signals": {"agreement": agreement}}) + "\n")


def test_sunar_calibrate_writes_a_file_the_graph_can_use(tmp_path, capsys):
    # 80 answers: agreement 1 is right 9 times in 10, agreement 0 right 1 time in 10
    rows = [(1.0, float(i % 10 != 0)) for i in range(40)] + [(0.0, float(i % 10 == 0)) for i in range(40)]
    high, low = rows[:40], rows[40:]
    write_run(tmp_path / "run", [r for k in range(0, 40, 2) for r in (*high[k : k + 2], *low[k : k + 2])])  # both halves mixed
    out = tmp_path / "cal.json"
    assert main(["calibrate", "--run", str(tmp_path / "run"), "--alpha", "0.3", "--out", str(out)]) == 0
    fitted = json.loads(out.read_text())
    assert fitted["llm"] == "embedded:qwen2.5-1.5b" and fitted["variant"] == "sunar" and fitted["fitted_on"] == 40
    assert fitted["weights"] == "equal" and len(set(fitted["model"]["coef"])) == 1
    assert 0.4 <= fitted["coverage"] <= 0.6 and fitted["accuracy_answered"] >= 0.7  # the confident half is answered
    assert trust.load(str(out), "embedded:qwen2.5-1.5b")["threshold"] == fitted["threshold"]
    assert "use it with: sunar ask ... --set calibration=" in capsys.readouterr().out
    per_signal = tmp_path / "fitted.json"
    assert main(["calibrate", "--run", str(tmp_path / "run"), "--weights", "fitted", "--out", str(per_signal)]) == 0
    assert json.loads(per_signal.read_text())["weights"] == "fitted"


def mixed(n):
    """n answers, two with agreement 1 then two with 0, and so on (both halves of a fit see both):
    agreement 1 is right 9 times in 10, agreement 0 right 1 time in 10."""
    return [(1.0, float(i % 20 != 0)) if i % 4 < 2 else (0.0, float(i % 20 == 3)) for i in range(n)]


def test_calibrate_pools_runs_and_checks_a_fit_on_another_run(tmp_path, capsys):
    write_run(tmp_path / "a", mixed(40))
    write_run(tmp_path / "b", mixed(40), first=20)  # questions q20-q39 are in both runs: counted once
    out = tmp_path / "cal.json"
    assert main(["calibrate", "--run", str(tmp_path / "a"), "--run", str(tmp_path / "b"), "--out", str(out)]) == 0
    pooled = json.loads(out.read_text())
    assert pooled["fitted_on"] + pooled["n"] == 60 and pooled["runs"] == ["a", "b"] and len(set(pooled["ids"])) == 60
    assert pooled["questions"] == {"file": "q.jsonl"}
    first = tmp_path / "first.json"
    assert main(["calibrate", "--run", str(tmp_path / "a"), "--alpha", "0.5", "--out", str(first)]) == 0
    capsys.readouterr()
    assert main(["calibrate", "--run", str(tmp_path / "b"), "--check", str(first)]) == 0
    said = capsys.readouterr().out
    assert said.startswith("20 answers of sunar in ") and "(20 left out: the calibration was fitted on them), 50% right" in said
    assert "AUROC of the trust 0.90" in said and "its threshold answers 10 (50%), 90% right" in said
    write_run(tmp_path / "other-model", mixed(8), llm="ollama:llama3.1")
    assert main(["calibrate", "--run", str(tmp_path / "a"), "--run", str(tmp_path / "other-model")]) == 1
    assert main(["calibrate", "--run", str(tmp_path / "other-model"), "--check", str(first)]) == 1
    assert main(["calibrate", "--run", str(tmp_path / "b"), "--check", str(tmp_path / "none.json")]) == 1
    assert main(["calibrate", "--run", str(tmp_path / "a"), "--run", str(tmp_path / "b"), "--check", str(first)]) == 1
    assert main(["calibrate", "--run", str(tmp_path / "a"), "--check", str(first)]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert "another LLM or corpus" in errors[0] and "was fitted for embedded:qwen2.5-1.5b" in errors[1]
    assert "calibration file not found" in errors[2] and "give one --run DIR" in errors[3]
    assert "was fitted on every answer of sunar in" in errors[4]
    write_run(tmp_path / "c", mixed(20), first=100)
    assert main(["calibrate", "--run", str(tmp_path / "c"), "--check", str(first)]) == 0
    assert capsys.readouterr().out.startswith(f"20 answers of sunar in {tmp_path / 'c'}, 50% right; AUROC")  # none left out: not said


def test_calibrate_reads_the_compressed_predictions_a_repository_keeps(tmp_path):
    import gzip

    write_run(tmp_path / "run", mixed(20))
    plain = tmp_path / "run" / "predictions.jsonl"
    (tmp_path / "run" / "predictions.jsonl.gz").write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    out = tmp_path / "cal.json"
    assert main(["calibrate", "--run", str(tmp_path / "run"), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["fitted_on"] == 10 and not plain.exists()  # read, not unpacked


def test_a_calibration_of_an_ablation_records_the_fields_its_variant_set(tmp_path):
    rows = [(float(i % 2), float(i % 3 != 0)) for i in range(12)]
    write_run(tmp_path / "run", rows, variant="sunar+samples=10")
    out = tmp_path / "cal.json"
    assert main(["calibrate", "--run", str(tmp_path / "run"), "--variant", "sunar+samples=10", "--out", str(out)]) == 0
    fitted = json.loads(out.read_text())
    assert fitted["variant"] == "sunar+samples=10" and fitted["configuration"]["samples"] == "10"


def test_sunar_calibrate_errors_are_one_line(tmp_path, capsys):
    assert main(["calibrate", "--run", str(tmp_path / "none")]) == 1
    write_run(tmp_path / "few", [(1.0, 1.0), (0.0, 0.0)])
    assert main(["calibrate", "--run", str(tmp_path / "few")]) == 1
    assert main(["calibrate", "--run", str(tmp_path / "few"), "--alpha", "2"]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 3 and "no run.json" in errors[0] and "needs at least 4" in errors[1] and "between 0 and 1" in errors[2]


def test_confidence_samples_and_the_answer_likelihood_signal():
    from scripted import ScriptedLLM

    def script(prompt, i):
        return "So the final answer is: Helena" if "Follow up:" in prompt else "Helena"

    def graph_run(llm, **config):
        res = resources(llm, TableScorer({}), MemoryIndex(docs(("d1", "T", "x")), default_ranking=[("d1", 1.0)]))
        return build_graph("self_ask").invoke({"question": QUESTION}, {"configurable": {"resources": res, "samples": 2, **config}})

    scored = ScriptedLLM(script, loglik=lambda prompt, text: -3.0 if text == "Helena" else -9.0)
    out = graph_run(scored, confidence_samples=5, answer_likelihood=True)
    assert len(out["signals"]["samples"]) == 5 and out["signals"]["answer_logprob"] == -3.0
    assert [c for _, c in scored.loglik_calls] == ["Helena"]  # one likelihood call, on the answer
    assert "answer_logprob" not in graph_run(ScriptedLLM(script), answer_likelihood=False)["signals"]
    assert graph_run(ScriptedLLM(script), answer_likelihood=True)["signals"]["answer_logprob"] is None  # no log-likelihoods


def test_the_calibration_shipped_for_the_embedded_model():
    """Fitted on the shared dev data (the first 200 questions, two runs pooled, --alpha 0.3): the file says for which model,
    corpus and questions, and with which signals; under it no answer of the 1.5B model is committed."""
    shipped = trust.load("auto", "embedded:qwen2.5-1.5b")
    assert shipped["llm"] == "embedded:qwen2.5-1.5b" and shipped["variant"] == "sunar" and shipped["alpha"] == 0.3
    assert shipped["questions"]["file"] == "dev.jsonl" and len(shipped["corpus"]["sha256"]) == 64
    assert shipped["features"] == list(trust.COMBINED) and shipped["n"] + shipped["fitted_on"] == 200 == len(set(shipped["ids"]))
    assert shipped["runs"] == ["dev100-structured-qwen1.5b-cpu", "dev101-200-qwen1.5b-cpu"]
    sure = trust.judge({"agreement": 1.0, "semantic_entropy": 0.0, "hop_agreement": 1.0, "chain_broken": 0.0}, shipped)
    assert sure["abstained"] and "none of this model's answers could promise at most 30% wrong" in sure["why"]
    assert trust.load("auto", "embedded:qwen2.5-0.5b") is None


def test_a_reader_that_stops_reading_gets_no_error_line(tmp_path):
    import subprocess
    import sys

    write_run(tmp_path / "run", mixed(20))
    command = [sys.executable, "-m", "sunar.cli", "calibrate", "--run", str(tmp_path / "run"), "--out", str(tmp_path / "cal.json")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # as `| head -0` would
    _, err = process.communicate(timeout=120)
    assert process.returncode == 141 and b"error" not in err, err
    assert (tmp_path / "cal.json").exists()  # the work was done; only its report found no reader
