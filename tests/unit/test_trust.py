"""Standing behind an answer: calibration files, the combined trust, abstaining answers in the
state, the chat reply and --json, and `sunar calibrate`, with scripted models."""

import json
import math

import pytest

from fakes import MemoryIndex, TableScorer, docs, resources, scripted_llm, self_ask_script
from sunar import trust
from sunar.cli import main
from sunar.commands.serve import level_of, switches_of
from sunar.errors import SunarError
from sunar.graph import build_graph, unread_fields

QUESTION = "Where was the director of film Ronnie Rocket born?"
MODEL = {"mean": [0.0] * len(trust.FEATURES), "scale": [1.0] * len(trust.FEATURES), "intercept": 0.0,
         "coef": [2.0 if f == "agreement" else 1.0 if f == "chain_agrees" else 0.0 for f in trust.FEATURES]}


def calibration_file(tmp_path, graph="sunar", llm="scripted:scripted", corpus="fp", features=trust.FEATURES, **settings):
    path = tmp_path / f"calibration-{graph}.json"
    model = MODEL if features == trust.FEATURES else {"mean": [0.0] * len(features), "scale": [1.0] * len(features), "intercept": 0.0, "coef": [1.0] * len(features)}
    path.write_text(json.dumps({
        "graph": graph, "llm": llm, "corpus": {"file": "c.jsonl", "sha256": corpus}, "configuration": {"llm": llm, "samples": 2, **settings},
        "features": list(features), "model": model, "threshold": 0.7, "ids": ["q1", "q2"], "promise": "p",
    }))
    return path


def test_a_calibration_applies_to_the_graph_model_and_settings_it_was_fitted_on_and_says_which_corpus(tmp_path):
    from sunar.configuration import Configuration

    assert trust.candidates("") == [] and trust.candidates("off") == []
    with pytest.raises(SunarError, match="calibration file not found"):
        trust.candidates(str(tmp_path / "none.json"))
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(SunarError, match="is not a calibration file"):
        trust.candidates(str(tmp_path / "broken.json"))
    path = str(calibration_file(tmp_path, llm="ollama:tiny"))
    values = Configuration.resolve({"llm": "ollama:tiny", "samples": 2}).values()
    chosen, why = trust.choose(path, "sunar", values, Configuration.as_recorded)
    assert chosen["path"] == path and why == ""
    # keyed to the graph, model and settings, not the corpus: on another corpus it applies, and says so
    assert trust.describe(chosen, "fp") == "fitted on 2 labelled answers of sunar with ollama:tiny"
    assert trust.describe(chosen, "other") == trust.describe(chosen) == "fitted on 2 labelled answers of sunar with ollama:tiny, not on this corpus"
    # what a user reads instead: one reason each, in a few words, and never a path of the server's
    reasons = [trust.choose(path, "self_ask", values, Configuration.as_recorded)[1]]
    assert reasons[-1] == "the calibration was fitted for the sunar graph"
    other_model = Configuration.resolve({"llm": "ollama:llama3.1", "samples": 2}).values()
    reasons.append(trust.choose(path, "sunar", other_model, Configuration.as_recorded)[1])
    assert reasons[-1] == "the calibration was fitted for ollama:tiny, not ollama:llama3.1"
    more = Configuration.resolve({"llm": "ollama:tiny", "samples": 5}).values()
    reasons.append(trust.choose(path, "sunar", more, Configuration.as_recorded)[1])
    assert reasons[-1] == "the calibration was fitted with other settings: samples=5 (fitted with 2)"
    assert not any(str(tmp_path) in r or ".json" in r or "sunar calibrate" in r for r in reasons)
    served = Configuration.resolve({"llm": "ollama:tiny", "samples": 2, "llm_cache": "x.sqlite", "min_trust": 0.5}).values()
    assert trust.choose(path, "sunar", served, Configuration.as_recorded)[1] == ""  # where calls are cached and how trust is shown change no answer
    assert trust.choose("off", "sunar", values, Configuration.as_recorded) == (None, "calibration is off")
    assert trust.choose("auto", "sunar", values, Configuration.as_recorded)[1] == "none is shipped for the sunar graph with ollama:tiny"


def test_judge_gives_the_probability_and_names_what_pulls_it_down():
    calibration = {"features": list(trust.FEATURES), "model": MODEL, "threshold": 0.9}
    sure = trust.judge({"agreement": 1.0, "chain_agrees": 1.0}, calibration)
    assert sure == {"trust": pytest.approx(1 / (1 + math.exp(-3)), abs=1e-4), "abstained": False, "why": ""}
    unsure = trust.judge({"agreement": 0.0, "chain_agrees": -1.0}, calibration)  # below one half: the doubts are named
    assert not unsure["abstained"] and unsure["why"].startswith("the reasoning chain's own answer differs")
    withheld = trust.judge({"agreement": 1.0, "chain_agrees": 1.0}, calibration, min_trust=0.99)
    assert withheld["abstained"] and withheld["why"] == ""  # 95% and withheld by the level alone: never "mostly wrong"
    doubtful = trust.judge({"agreement": 0.5}, {**calibration, "model": {**MODEL, "intercept": -2.0}})
    assert doubtful["trust"] < 0.5 and doubtful["why"] == "answers like this one are mostly wrong on the questions it was calibrated on"
    spread = {**MODEL, "coef": [1.0 if f in ("semantic_entropy", "sets", "hop_agreement") else 0.0 for f in trust.FEATURES]}
    pulled = trust.judge({"semantic_entropy": 1.0, "sets": 2, "hop_agreement": -0.5}, {**calibration, "model": spread})
    assert pulled["why"] == "the sampled answers mean different things; a hop's sampled answers disagree"  # each reason once
    against = {**MODEL, "coef": [-1.0 if f == "agreement" else 0.0 for f in trust.FEATURES]}  # a fit against the signal's sense
    agreeing = trust.judge({"agreement": 1.0}, {**calibration, "model": against})
    assert "disagree" not in agreeing["why"]  # never "they disagree" when they agree
    isotonic = {**calibration, "mapping": {"kind": "isotonic", "x": [0.0, 0.9, 1.0], "y": [0.1, 0.1, 0.6]}}
    assert trust.judge({"agreement": 1.0, "chain_agrees": 1.0}, isotonic)["trust"] == pytest.approx(0.1 + 0.5 * (0.9526 - 0.9) / 0.1, abs=1e-3)


def run(tmp_path, llm=None, features=trust.FEATURES, fingerprint="fp", **config):
    llm = llm or scripted_llm(self_ask_script(["Follow up: Who directed Ronnie Rocket?", "So the final answer is: Helena"]), lambda q, i: "David Lynch")
    corpus = docs(("d1", "Ronnie Rocket", "Ronnie Rocket is a film by David Lynch."))
    index = MemoryIndex(corpus, default_ranking=[("d1", 1.0)], manifest={"corpus_fingerprint": fingerprint})  # the calibration's: "fp"
    res = resources(llm, TableScorer({"d1": 1.0}), index)
    config = {"configurable": {"resources": res, "samples": 2, "calibration": str(calibration_file(tmp_path, features=features)), **config}}
    return build_graph("sunar").invoke({"question": QUESTION}, config)


def test_answers_are_sampled_for_the_confidence_only_when_something_reads_them(tmp_path):
    def confidence_samples(**config):
        llm = scripted_llm(self_ask_script(["Follow up: Who directed Ronnie Rocket?", "So the final answer is: Helena"]), lambda q, i: "David Lynch")
        out = run(tmp_path, llm, **config)
        return out, len(llm.calls)

    unread, calls = confidence_samples(features=("chain_agrees", "whole_chain"))  # it reads no sampled signal: no sampling
    read, sampled = confidence_samples()  # the calibration reads the agreement: 2 answers sampled
    assert sampled == calls + 2 and read["signals"]["agreement"] is not None and read["signals"]["sets"] >= 1
    assert unread["trust"] is not None and unread["confidence"] == unread["trust"]
    assert unread["signals"]["agreement"] is None and unread["signals"]["semantic_entropy"] is None and unread["signals"]["sets"] is None
    assert unread["signals"]["samples"] == [] and "no sampled answer agrees" not in " ".join(unread["notes"])
    asked, three = confidence_samples(features=("chain_agrees",), confidence_samples=3)  # asked for all the same
    assert three >= calls + 3 and asked["signals"]["agreement"] is not None and len(asked["signals"]["samples"]) == 3
    shown, _ = confidence_samples(features=("chain_agrees",), samples=3)  # no calibration applies: the agreement is shown
    assert shown["trust"] is None and shown["confidence"] == shown["signals"]["agreement"] is not None


def test_the_reply_shows_the_calibrated_probability_and_below_min_trust_says_it_does_not_know(tmp_path):
    shown = run(tmp_path)
    assert shown["trust"] is not None and shown["confidence"] == shown["trust"] and not shown["abstained"]
    assert shown["confidence_basis"] == "fitted on 2 labelled answers of sunar with scripted:scripted"  # on this corpus (fp)
    reply = shown["messages"][-1].content
    assert reply.startswith(f"David Lynch\n\nConfidence: {shown['trust']:.0%} that this is right (fitted on 2 labelled answers")
    withheld = run(tmp_path, min_trust=0.99)
    assert withheld["abstained"] and withheld["answer"] == "David Lynch"
    said = withheld["messages"][-1].content
    assert said.startswith(f"I don't know.\nBest guess: David Lynch ({withheld['trust']:.0%} likely right, below the level set to answer).")
    assert ("\nWhy: " in said) == bool(withheld["why"])  # a reason only when a signal pulls it down
    assert "Confidence" not in said  # one number, never beside a contradiction
    other = run(tmp_path, samples=3)  # settings the calibration was not fitted with: the agreement, named as such
    assert other["trust"] is None and other["confidence"] == other["signals"]["agreement"]
    assert "Sampled answers agreeing with it: " in other["messages"][-1].content
    assert "(not a probability of being right; not calibrated: the calibration" in other["messages"][-1].content
    assert "fitted with other settings: samples=3 (fitted with 2)" in other["confidence_basis"]
    unknown = run(tmp_path, samples=3, min_trust=0.5)  # asked to answer only when sure, with nothing to be sure by
    assert unknown["abstained"] and unknown["messages"][-1].content.startswith("I don't know.\nBest guess: David Lynch (not calibrated: ")


def test_on_a_corpus_it_was_never_fitted_on_the_calibration_still_gives_a_probability_and_says_so(tmp_path):
    from sunar.streaming import describe_common

    out = run(tmp_path, fingerprint="a new corpus")
    assert out["trust"] is not None and out["confidence"] == out["trust"]
    assert out["confidence_basis"] == "fitted on 2 labelled answers of sunar with scripted:scripted, not on this corpus"
    reply = out["messages"][-1].content
    assert f"Confidence: {out['trust']:.0%} that this is right (fitted on 2 labelled answers of sunar with scripted:scripted, not on this corpus)" in reply
    assert str(tmp_path) not in reply and ".json" not in reply  # no path of the server's in a reply
    line = describe_common("confidence", {"trust": out["trust"], "confidence_basis": out["confidence_basis"]})
    assert line == f"confidence: {out['trust']:.0%} that the answer is right (fitted on 2 labelled answers of sunar with scripted:scripted, not on this corpus)"


def test_without_a_calibration_the_agreement_is_shown_for_what_it_is():
    llm = scripted_llm(self_ask_script(["So the final answer is: Helena"]), lambda q, i: "Helena")
    res = resources(llm, TableScorer({}), MemoryIndex(docs(("d1", "T", "x")), default_ranking=[("d1", 1.0)]))
    out = build_graph("self_ask").invoke({"question": QUESTION}, {"configurable": {"resources": res, "samples": 2}})
    assert out["trust"] is None and out["abstained"] is False and out["signals"]["agreement"] == 1.0 == out["confidence"]
    assert out["confidence_basis"].startswith("not calibrated: none is shipped for the self_ask graph with scripted:scripted")


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
    assert fitted["llm"] == "embedded:qwen2.5-1.5b" and fitted["variant"] == "sunar" and fitted["fitted_on"] == 80 and fitted["graph"] == "sunar"
    assert fitted["weights"] == "equal" and len(set(fitted["model"]["coef"])) == 1
    assert 0.4 <= fitted["coverage"] <= 0.6 and fitted["accuracy_answered"] >= 0.7  # the confident half is answered
    assert trust.read(out)["threshold"] == fitted["threshold"] and fitted["mapping"]["kind"] in ("platt", "isotonic")
    assert level_of(trust.read(out)) == f"min_trust={fitted['threshold']:.2f} kept at most 30% wrong with probability 90%"
    assert level_of({**fitted, "threshold": math.inf, "level": math.inf}) == ""  # neither answered any
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
    assert pooled["fitted_on"] == pooled["n"] == 60 and pooled["runs"] == ["a", "b"] and len(set(pooled["ids"])) == 60
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


def test_too_few_answers_for_the_promise_still_give_a_level_and_say_it_has_none(tmp_path, capsys):
    write_run(tmp_path / "a", mixed(20))
    write_run(tmp_path / "b", mixed(40), first=100)
    out = tmp_path / "cal.json"
    assert main(["calibrate", "--run", str(tmp_path / "a"), "--alpha", "0.3", "--out", str(out)]) == 0
    fitted, said = json.loads(out.read_text()), capsys.readouterr().out
    assert fitted["threshold"] == math.inf and fitted["level_coverage"] == 0.5 and fitted["level_accuracy"] == 0.9
    assert "no trust level kept that promise" in said and f"without that promise, at trust >= {fitted['level']:.3f}" in said
    assert f"add --set min_trust={fitted['level']:.3f}" in said and "50% answered, 90% right" in said
    assert level_of(trust.read(out)) == f"min_trust={fitted['level']:.2f} kept at most 30% wrong there (no guarantee)"
    assert main(["calibrate", "--run", str(tmp_path / "b"), "--check", str(out)]) == 0
    assert "its threshold answers nothing; its level without a promise answers 20 (50%), 90% right" in capsys.readouterr().out
    older = tmp_path / "older.json"  # a file from before the level, or one where no point kept alpha
    older.write_text(json.dumps({k: v for k, v in fitted.items() if not k.startswith("level")}))
    assert main(["calibrate", "--run", str(tmp_path / "b"), "--check", str(older)]) == 0
    assert capsys.readouterr().out.rstrip().endswith("it has no level without a promise (none kept alpha where it was fitted)")


def test_calibrate_reads_the_compressed_predictions_a_repository_keeps(tmp_path):
    import gzip

    write_run(tmp_path / "run", mixed(20))
    plain = tmp_path / "run" / "predictions.jsonl"
    (tmp_path / "run" / "predictions.jsonl.gz").write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    out = tmp_path / "cal.json"
    assert main(["calibrate", "--run", str(tmp_path / "run"), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["fitted_on"] == 20 and not plain.exists()  # read, not unpacked


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


def test_the_calibrations_shipped_for_the_embedded_model_apply_to_its_default_runs_on_the_dev_corpus():
    """One per graph that has labelled runs, fitted on dev questions 1-100 only (--alpha 0.3): each says for which
    graph, model, settings and corpus; each applies to that graph's default cpu run (on any corpus, saying which it was fitted on), and to nothing else."""
    from sunar.baselines.gensco.configuration import GenscoConfiguration, PoolConfiguration
    from sunar.baselines.ra_isf.configuration import RaIsfConfiguration
    from sunar.configuration import CPU_PROFILE, SUNAR_ONLY, Configuration

    judged = [c for c in trust.candidates("auto") if (c.get("configuration") or {}).get("hop_support") in ("judge", "cut_uncertain")]
    shipped = {trust.graph_of(c): c for c in trust.candidates("auto") if c not in judged}
    assert set(shipped) >= {"sunar", "self_ask", "sunar_r", "sunar_no_asu", "gensco", "ra_isf", "rag"}
    corpus = shipped["sunar"]["corpus"]["sha256"]
    schemas = {"gensco": GenscoConfiguration, "gensco_stop": GenscoConfiguration, "ra_isf": RaIsfConfiguration, "rag": PoolConfiguration}
    for graph, calibration in shipped.items():
        assert calibration["llm"] == "embedded:qwen2.5-1.5b" and calibration["questions"]["file"] == "dev.jsonl"
        assert calibration["corpus"]["sha256"] == corpus and calibration["features"][: len(trust.COMBINED)] == list(trust.COMBINED)
        assert len(set(calibration["ids"])) == calibration["fitted_on"] == calibration["n"] in (40, 100)
        if graph in schemas:  # a baseline's answers do not depend on SUNAR's own fields, which its graph never reads
            schema = schemas[graph]
            defaults = {k: v for k, v in schema.resolve({"llm": "embedded:qwen2.5-1.5b"}).values().items() if k not in SUNAR_ONLY}
            assert trust.choose("auto", graph, defaults, schema.as_recorded) == (calibration, ""), graph
    # S, the cpu profile's SUNAR, and Self-Ask with the reader it shares: fitted on their dev 1-100 runs (Self-Ask's
    # and the cpu profile's S's with the later fixes' reruns in place: benchmarks/refit_calibrations.py)
    acts = ["dev41-acts-qwen1.5b-cpu", "dev42-100-acts-qwen1.5b-cpu"]
    reruns = ["dev-reading-fixes-qwen1.5b-cpu", "dev-possessive-qwen1.5b-cpu", "dev-one-answer-qwen1.5b-cpu", "confirm-one-answer-qwen1.5b-cpu",
              "page-form-qwen1.5b-cpu", "bridge-to-last-qwen1.5b-cpu"]
    assert shipped["sunar"]["runs"] == acts and shipped["self_ask"]["runs"] == [*acts, *reruns]
    assert shipped["sunar"]["fitted_on"] == shipped["self_ask"]["fitted_on"] == 100
    defaults = Configuration.resolve({"llm": "embedded:qwen2.5-1.5b"}).values()
    unjudged = {**defaults, "hop_support": "off", "unfit_answer": "keep", "replan_below": 0.0}  # S before the judge became the cpu profile's
    assert trust.choose("auto", "sunar", unjudged, Configuration.as_recorded) == (shipped["sunar"], "")
    read = {k: v for k, v in defaults.items() if k not in unread_fields("self_ask")}  # as its confidence step reads them
    assert trust.choose("auto", "self_ask", read, Configuration.as_recorded) == (shipped["self_ask"], "")  # it never judges
    elsewhere = trust.choose("auto", "sunar", defaults, Configuration.as_recorded)[0]  # on any corpus: said beside the probability
    assert trust.describe(elsewhere, "another corpus").endswith(", not on this corpus") and not trust.describe(elsewhere, corpus).endswith("corpus")
    assert trust.choose("auto", "sunar", {**defaults, "llm": "embedded:qwen2.5-0.5b"}, Configuration.as_recorded)[0] is None
    # fitted before the cpu profile turned the switches on: a field its run did not record is at the default it ran with
    why = trust.choose("auto", "sunar_r", defaults, Configuration.as_recorded)[1]
    assert why.startswith("the calibration was fitted with other settings: asu_batches=False (fitted with True)")
    # S with each hop judged against its pages and its answer against the question; the same where a doubted answer
    # acts (unfit_answer=both); and where a weak answer is decomposed again (replan_below, the cpu profile's S, fitted
    # on its whole-graph dev 1-100 run): each its own calibration, fitted on dev 1-100 on the chain's weakest link
    # alone; and the cpu profile's S since, which reads once more, cut short, the hops its judge doubts or whose answers
    # split (hop_support=cut_uncertain), fitted on its dev 1-100 run on trust.TRANSFER
    def settings(c):
        k = c["configuration"]
        return k["hop_support"], k.get("unfit_answer", "keep"), float(k.get("replan_below", 0.0))  # a variant's switch is recorded as written

    by = {settings(c): c for c in judged}
    hops, unfit, replan = by["judge", "keep", 0.0], by["judge", "both", 0.0], by["judge", "both", 0.55]
    profile = by["cut_uncertain", "both", 0.55]
    for calibration, runs in ((hops, ["dev100-chain-support-qwen1.5b-cpu"]), (unfit, ["dev100-unfit-qwen1.5b-cpu", *reruns]),
                              (replan, ["dev100-today-qwen1.5b-cpu"]),
                              (profile, ["dev100-cut-uncertain-calibrated-qwen1.5b-cpu"])):
        expected = list(trust.TRANSFER) if calibration is profile else ["chain_support"]  # the profile's: the signals that held across datasets
        assert trust.graph_of(calibration) == "sunar" and calibration["fitted_on"] == 100 and calibration["features"] == expected
        assert calibration["runs"] == runs
    assert len(by) == len(judged) == 4
    assert trust.choose("auto", "sunar", defaults, Configuration.as_recorded) == (profile, "")  # the cpu profile's S
    judge = {**defaults, "hop_support": "judge"}
    assert trust.choose("auto", "sunar", judge, Configuration.as_recorded) == (replan, "")
    assert trust.choose("auto", "sunar", {**judge, "replan_below": 0.0}, Configuration.as_recorded) == (unfit, "")
    assert trust.choose("auto", "sunar", {**judge, "replan_below": 0.0, "unfit_answer": "keep"}, Configuration.as_recorded) == (hops, "")
    assert trust.choose("auto", "sunar", {**defaults, "unfit_answer": "choose"}, Configuration.as_recorded)[0] is None
    assert trust.choose("auto", "sunar", {**defaults, "hop_support": "escalate"}, Configuration.as_recorded)[0] is None
    assert switches_of(hops, CPU_PROFILE) == ["hop_support=judge", "unfit_answer=keep", "replan_below=0.0"]
    assert switches_of(hops, CPU_PROFILE) == ["hop_support=judge", "unfit_answer=keep", "replan_below=0.0"]
    assert switches_of(unfit, CPU_PROFILE) == ["hop_support=judge", "replan_below=0.0"]
    assert switches_of(replan, CPU_PROFILE) == ["hop_support=judge"] and switches_of(profile, CPU_PROFILE) == []
    assert switches_of(shipped["sunar"], CPU_PROFILE) == ["hop_support=off", "unfit_answer=keep", "replan_below=0.0"]  # fitted before the judge
    assert switches_of(shipped["self_ask"], CPU_PROFILE) == []  # its graph reads neither
    assert trust.own_settings(shipped["ra_isf"], CPU_PROFILE) == ["ra_isf_min_relevant=2"]  # a baseline's own switch
    sunar = shipped["sunar"]
    sure = trust.judge({"agreement": 1.0, "semantic_entropy": 0.0, "sets": 1, "chain_agrees": 1.0}, sunar)
    unsure = trust.judge({"agreement": 0.0, "semantic_entropy": 1.1, "sets": 3, "chain_agrees": 0.0}, sunar)
    assert 0.0 < unsure["trust"] <= sure["trust"] < 1.0


@pytest.mark.parametrize(("graph", "calibrated"), [("sunar", True), ("self_ask", True), ("sunar_no_asu", False)])
def test_a_default_run_on_the_embedded_model_and_the_dev_corpus_shows_the_shipped_calibration(graph, calibrated):
    """As Studio runs it: only the model named. The fields a graph's structure never reads (Self-Ask's
    hop samples) do not keep its calibration from applying; those it reads, set otherwise, do."""
    corpus = next(c for c in trust.candidates("auto") if trust.graph_of(c) == "sunar")["corpus"]["sha256"]
    llm = scripted_llm(self_ask_script(["Follow up: Who directed Ronnie Rocket?", "So the final answer is: David Lynch"]), lambda q, i: "David Lynch")
    index = MemoryIndex(docs(("d1", "Ronnie Rocket", "Ronnie Rocket is a film by David Lynch.")), default_ranking=[("d1", 1.0)],
                        manifest={"corpus_fingerprint": corpus})
    out = build_graph(graph).invoke({"question": QUESTION}, {"configurable": {"resources": resources(llm, TableScorer({"d1": 1.0}), index)}},
                                    context={"llm": "embedded:qwen2.5-1.5b"})
    if calibrated:
        assert out["confidence_basis"] == f"fitted on 100 labelled answers of {graph} with embedded:qwen2.5-1.5b (dev.jsonl)"
        assert out["trust"] is not None and out["confidence"] == out["trust"]
    else:
        assert out["trust"] is None and out["confidence_basis"].startswith("not calibrated: the calibration was fitted with other settings: ")
        assert "was fitted with other settings" in out["confidence_basis"]


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


def test_a_calibration_with_a_probe_reads_the_models_hidden_state(tmp_path):
    path = calibration_file(tmp_path)
    data = json.loads(path.read_text())
    features = [*data["features"], "probe"]
    probe = {"mean": [0.0, 0.0], "scale": [1.0, 1.0], "intercept": 0.0, "coef": [4.0, 0.0]}
    model = {**MODEL, **{k: [*MODEL[k], v] for k, v in (("mean", 0.5), ("scale", 0.1), ("coef", 1.0))}}
    path.write_text(json.dumps({**data, "features": features, "model": model, "probe": probe}))
    llm = scripted_llm(self_ask_script(["Follow up: Who directed Ronnie Rocket?", "So the final answer is: Helena"]), lambda q, i: "David Lynch")
    llm.hidden_script = lambda text: [1.0 if text.endswith("Answer: David Lynch") else -1.0, 0.0]
    index = MemoryIndex(docs(("d1", "Ronnie Rocket", "Ronnie Rocket is a film by David Lynch.")), default_ranking=[("d1", 1.0)],
                        manifest={"corpus_fingerprint": "fp"})
    config = {"configurable": {"resources": resources(llm, TableScorer({"d1": 1.0}), index), "samples": 2, "calibration": str(path)}}
    out = build_graph("sunar").invoke({"question": QUESTION}, config)
    assert llm.hidden_calls == [f"Question: {QUESTION}\nAnswer: David Lynch"]
    assert out["signals"]["probe"] == pytest.approx(1 / (1 + math.exp(-4)), abs=1e-5) and out["trust"] > 0.9


def test_calibrate_with_a_recorded_signal_reads_it_from_the_trace_of_runs_that_predate_it(tmp_path):
    question = "Who is the spouse of the director of film Barefoot in the Park?"
    bridge = {"question": "Who directed Barefoot in the Park?", "answer": "Gene Saks"}
    whole = [bridge, {"question": "Who is the spouse of Gene Saks?", "answer": "Bea Arthur"}]
    (run := tmp_path / "run").mkdir()
    (run / "run.json").write_text(json.dumps({"questions": {"file": "q.jsonl"}, "corpus": {"file": "c.jsonl"},
                                              "configuration": {"llm": "embedded:qwen2.5-1.5b"}, "variants": ["self_ask"]}))
    with open(run / "predictions.jsonl", "w") as f:  # chains that ended on the bridge are wrong 9 times in 10; no whole_chain recorded
        for i in range(40):
            ended = i % 2 == 0
            f.write(json.dumps({"id": f"q{i}", "variant": "self_ask", "question": question, "metrics": {"cover_em": float(ended == (i % 20 == 0))},
                                "signals": {"agreement": 1.0}, "reasoning_path": [bridge] if ended else whole}) + "\n")
    plain, chained = tmp_path / "plain.json", tmp_path / "chained.json"
    assert main(["calibrate", "--run", str(run), "--variant", "self_ask", "--out", str(plain)]) == 0
    assert main(["calibrate", "--run", str(run), "--variant", "self_ask", "--with", "whole_chain", "--out", str(chained)]) == 0
    assert "whole_chain" not in trust.read(plain)["features"] and trust.read(chained)["features"][-1] == "whole_chain"
    assert trust.read(chained)["auroc_held_out"] > 0.85 > 0.55 > trust.read(plain)["auroc_held_out"]
    stopped = trust.judge({"agreement": 1.0, "semantic_entropy": 0.0, "sets": 1, "chain_agrees": 1.0, "whole_chain": 0.0}, trust.read(chained))
    assert stopped["trust"] < 0.5 and "the reasoning stopped after one step that asked only part of the question" in stopped["why"]
    assert "whole_chain" in trust.EXTRA_SIGNALS and not {"probe", "shape_prior", *trust.COMBINED} & set(trust.EXTRA_SIGNALS)  # those have flags


def test_calibrate_can_combine_the_signals_that_rank_the_answers_alone(tmp_path, capsys):
    # hop_support follows rightness; agreement is noise (the same for right and wrong answers)
    path = tmp_path / "run"
    write_run(path, [(0.5, 0.0)] * 4)
    lines = []
    for i in range(40):
        right = float(i % 4 < 2)
        signals = {"agreement": float(i % 2), "hop_support": 0.9 if right else 0.95 if i % 8 == 2 else 0.3}  # AUROC 0.75
        lines.append(json.dumps({"id": f"q{i}", "variant": "sunar", "metrics": {"cover_em": right}, "signals": signals}))
    (path / "predictions.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "cal.json"
    assert main(["calibrate", "--run", str(path), "--select", "0.55", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["features"] == ["hop_support"]
    assert main(["calibrate", "--run", str(path), "--select", "0.55", "--with", "whole_chain", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["features"] == ["hop_support", "whole_chain"]
    assert main(["calibrate", "--run", str(path), "--select", "0.99"]) == 1
    assert "no recorded signal has AUROC >= 0.99 alone; lower --select" in capsys.readouterr().err
    # --only: just the signals --with names (one, here), not the four default ones
    assert main(["calibrate", "--run", str(path), "--only", "--with", "hop_support", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["features"] == ["hop_support"]
    capsys.readouterr()
    assert main(["calibrate", "--run", str(path), "--only", "--out", str(out)]) == 1
    assert capsys.readouterr().err.strip().endswith("--only combines the signals --with names: name one")


def test_an_answer_that_is_one_of_two_options_is_read_above_its_chance_floor(tmp_path):
    from sunar.choice import FLOOR_SAID

    calibration = trust.read(calibration_file(tmp_path))
    unsure = {"agreement": 0.0, "chain_agrees": -1.0}
    open_question = trust.judge(unsure, calibration)
    two_way = trust.judge(unsure, calibration, floor=0.5)
    assert open_question["trust"] < 0.5 and two_way["trust"] == pytest.approx(0.5 + 0.5 * open_question["trust"], abs=1e-4)
    assert two_way["why"] == ""  # at or above one half: nothing is said to pull it down
    assert trust.judge(unsure, calibration, min_trust=two_way["trust"] + 0.01, floor=0.5)["abstained"]  # the level applies above the floor

    question = "Who was born first, David Lynch or Alfred Hitchcock?"
    script = self_ask_script(["Follow up: When was David Lynch born?", "Follow up: When was Alfred Hitchcock born?", "So the final answer is: Alfred Hitchcock"])
    dates = {"David Lynch": "January 20, 1946", "Alfred Hitchcock": "13 August 1899"}
    llm = scripted_llm(script, lambda q, i: next((d for name, d in dates.items() if name in q), "unknown"))
    corpus = docs(("d1", "David Lynch", "David Lynch was born on January 20, 1946."), ("d2", "Alfred Hitchcock", "Alfred Hitchcock was born on 13 August 1899."))
    index = MemoryIndex(corpus, default_ranking=[("d1", 1.0), ("d2", 0.9)], manifest={"corpus_fingerprint": "fp"})
    config = {"configurable": {"resources": resources(llm, TableScorer({"d1": 1.0, "d2": 0.9}), index), "samples": 2,
                               "calibration": str(calibration_file(tmp_path))}}
    out = build_graph("sunar").invoke({"question": question}, config)
    assert out["answer"] == "Alfred Hitchcock" and out["trust"] >= 0.5
    assert out["confidence_basis"] == "fitted on 2 labelled answers of sunar with scripted:scripted" + FLOOR_SAID
    assert FLOOR_SAID in out["messages"][-1].content
    chain = run(tmp_path)  # an open question keeps the calibration's own probability, and says nothing of options
    assert FLOOR_SAID not in chain["confidence_basis"]
