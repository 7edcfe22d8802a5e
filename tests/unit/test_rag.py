"""Retrieve-then-read (``rag``) with scripted models: the pool ranked by the scorer against the
question, the top l read by GenSco's reader in rank order, a given pool, no passages, the stream."""

from __future__ import annotations

from test_gensco import CORPUS, QUESTION  # the same four passages and question as GenSco's tests

from fakes import MemoryIndex, TableScorer, resources
from scripted import ScriptedLLM
from sunar.baselines.gensco import prompts
from sunar.graph import GRAPHS, build_graph
from sunar.prompts import answer as answer_prompt
from sunar.streaming import stream_steps


def reader(prompt: str, i: int) -> str:
    if prompt.startswith((prompts.ANSWER_SYSTEM, answer_prompt.SYSTEM)):  # the reader, the confidence samples
        return '{"answer": "Missoula, Montana"}'
    raise AssertionError(f"unexpected prompt: {prompt[:80]}")


def run(given=None, ranking=(("d3", 4.0), ("d1", 3.0), ("d2", 2.0), ("d4", 1.0)), **config):
    llm = ScriptedLLM(reader)
    scorer = TableScorer({"d2": 0.9, "d1": 0.8, "d3": 0.2, "d4": 0.1})
    res = resources(llm, scorer, MemoryIndex(CORPUS, default_ranking=list(ranking)))
    payload = {"question": QUESTION, **({"pool_ids": given} if given is not None else {})}
    out = build_graph("rag").invoke(payload, {"configurable": {"resources": res, "samples": 2, **config}})
    return out, llm, scorer


def test_the_pool_ranked_by_the_scorer_is_read_best_first():
    out, llm, scorer = run(evidence=2, gensco_pool=3)
    assert scorer.calls == [(QUESTION, ["d3", "d1", "d2"])]  # the first stage of the question, gensco_pool deep
    assert [(e["id"], e["score"]) for e in out["evidence"]] == [("d2", 0.9), ("d1", 0.8)]
    read = next(p for p in llm.calls if p.startswith(prompts.ANSWER_SYSTEM))
    assert read.index("[1] David Lynch:") < read.index("[2] Ronnie Rocket:") and "Eraserhead" not in read
    assert out["answer"] == "Missoula, Montana" and out["hops"] == [] and out["notes"] == []
    assert out["messages"][-1].content.startswith("Missoula, Montana") and out["usage"]["parse_fallbacks"] == 0


def test_a_given_pool_replaces_the_first_stage():
    out, _, scorer = run(given=["d4", "d1"])
    assert scorer.calls == [(QUESTION, ["d4", "d1"])] and [e["id"] for e in out["evidence"]] == ["d1", "d4"]


def test_no_passage_is_read_as_none_found():
    out, llm, scorer = run(ranking=())
    assert out["evidence"] == [] and scorer.calls == []
    assert "(no passages found)" in next(p for p in llm.calls if p.startswith(prompts.ANSWER_SYSTEM))
    assert any("holds no passage" in n for n in out["notes"])


def test_the_stream_names_each_step(capsys):
    llm = ScriptedLLM(reader)
    res = resources(llm, TableScorer({"d2": 0.9}), MemoryIndex(CORPUS, default_ranking=[("d1", 2.0), ("d2", 1.0)]))
    stream_steps(build_graph("rag"), {"question": QUESTION}, {"configurable": {"resources": res, "samples": 1}}, GRAPHS["rag"].describe)
    err = capsys.readouterr().err
    assert "[pool] 2 passages in the pool" in err and "[rank] read: David Lynch, Ronnie Rocket" in err
    assert "[answer] final answer: Missoula, Montana" in err


def test_a_calibration_must_match_the_graphs_own_settings(tmp_path):
    import json

    from sunar import trust

    model = {"mean": [0.0] * len(trust.FEATURES), "scale": [1.0] * len(trust.FEATURES), "intercept": 0.0, "coef": [0.0] * len(trust.FEATURES)}
    path = tmp_path / "calibration-rag.json"
    path.write_text(json.dumps({
        "graph": "rag", "llm": "scripted:scripted", "corpus": {"file": "c.jsonl", "sha256": "fp"},
        "configuration": {"llm": "scripted:scripted", "samples": 2, "gensco_pool": 3},
        "features": list(trust.FEATURES), "model": model, "threshold": 0.7, "ids": ["q1"], "promise": "p",
    }))
    CORPUS_FP = {"corpus_fingerprint": "fp"}
    for pool, applies in [(3, True), (4, False)]:  # gensco_pool is rag's own field: it changes the pool read
        llm = ScriptedLLM(reader)
        res = resources(llm, TableScorer({"d1": 0.8}), MemoryIndex(CORPUS, default_ranking=[("d1", 1.0)], manifest=CORPUS_FP))
        out = build_graph("rag").invoke({"question": QUESTION}, {"configurable": {"resources": res, "samples": 2, "gensco_pool": pool, "calibration": str(path)}})
        assert (out["trust"] is not None) == applies, out["confidence_basis"]
        if not applies:
            assert "fitted with other settings: gensco_pool=4 (fitted with 3)" in out["confidence_basis"]


def test_sunars_answer_judge_is_not_the_baselines():
    out, llm, _ = run(hop_support="judge")  # a field of SUNAR's that rag never reads: no answer is judged
    assert out["answer"] == "Missoula, Montana" and "answer_fits" not in out["signals"] and llm.judge_calls == []
