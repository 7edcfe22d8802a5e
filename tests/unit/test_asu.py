"""Answer sampling, NLI clustering and rescoring, with a scripted LLM and a scripted NLI."""

import pytest

from fakes import MemoryIndex, TableNLI, TableScorer, docs, resources, scripted_llm, self_ask_script
from sunar.configuration import CPU_PROFILE
from sunar.graph import build_graph
from sunar.nodes.rescore import divisor, rescored

SQ = "Who directed Ronnie Rocket?"
CORPUS = docs(("a", "A", "a"), ("b", "B", "b"), ("c", "C", "c"), ("d", "D", "d"))
RANKING = [("a", 4.0), ("b", 3.0), ("c", 2.0), ("d", 1.0)]
SCORES = {"a": 0.8, "b": 0.6, "c": 0.9, "d": 0.3}
# Samples per batch: batch 1 (a, b) -> 3 different answers; batch 2 (c, d) -> all agree.
SAMPLES = {1: ["David Lynch", "Mel Brooks", "david lynch", "John Waters"], 2: ["David Lynch", "David Lynch", "David Lynch", "david lynch"]}


def run(rescoring):
    calls = {"n": 0}

    def answer(question, i):
        if question == SQ:
            if i == 0:
                calls["n"] += 1
            return SAMPLES.get(calls["n"], ["David Lynch"] * 4)[i]
        return "David Lynch"

    llm = scripted_llm(self_ask_script([f"Follow up: {SQ}", "So the final answer is: David Lynch"]), answer)
    res = resources(llm, TableScorer(SCORES), MemoryIndex(CORPUS, {SQ: RANKING}), nli=TableNLI())
    cfg = {"resources": res, "batch_size": 2, "budget": 4, "samples": 4, "rescoring": rescoring}
    return build_graph("sunar").invoke({"question": "Where was the director of Ronnie Rocket born?"}, {"configurable": cfg})


def test_paper_rescoring_divides_by_the_number_of_semantic_sets():
    out = run("paper")
    first, second = out["hops"][0]["batches"][:2]
    # an intermediate answer call sits between the hops, so batch answers are per batch only
    assert first["answers"] == SAMPLES[1] and first["sets"] == [[0, 2], [1], [3]]
    assert first["scores"] == [0.8, 0.6] and first["rescored"] == pytest.approx([0.8 / 3, 0.6 / 3])
    assert second["sets"] == [[0, 1, 2, 3]] and second["rescored"] == pytest.approx([0.9, 0.3])
    # uncertain evidence sinks: c (0.9, s=1) and d (0.3) now outrank a (0.8 / 3)
    assert [e["id"] for e in out["hops"][0]["evidence"]][:2] == ["c", "d"]


def test_official_rescoring_uses_contradicting_pairs():
    out = run("official")
    first, second = out["hops"][0]["batches"][:2]
    # pairs among 4 answers in sets {0,2},{1},{3}: 6 pairs, 1 equivalent -> 5 contradictions
    assert first["contradictions"] == 5
    assert first["rescored"] == pytest.approx([0.8 / 2.5, 0.6 / 2.5])
    assert second["contradictions"] == 0 and second["rescored"] == pytest.approx([0.9, 0.3])


def test_one_dissenting_sample_of_three():
    """The cpu profile's case (m=3): answers A, B, A. The paper's formula halves the batch, so a
    batch whose samples agree (even on an off-topic answer) outranks it; the official penalty
    (2 contradicting pairs / 2) leaves it whole."""
    split = {"sets": [[0, 2], [1]], "contradictions": 2}
    assert divisor(split, "paper") == 2.0 and divisor(split, "official") == 1.0
    assert divisor({"sets": [[0], [1], [2]], "contradictions": 3}, "official") == 1.5
    assert CPU_PROFILE["rescoring"] == "official"


def test_divisor_and_negative_scores():
    assert divisor({"sets": [[0], [1]]}, "paper") == 2.0
    assert divisor({"sets": []}, "paper") == 1.0
    assert divisor({"contradictions": 1}, "official") == 1.0  # never boosts
    assert rescored([2.0, -2.0], 2.0) == [1.0, -4.0]  # more uncertainty, lower score, any sign


def test_table_nli_cache_counts():
    nli = TableNLI()
    from sunar.models.nli import semantic_sets

    assert semantic_sets("q", ["x", "y", "X", "y"], nli) == [[0, 2], [1, 3]]


def run_agreeing(scores, **config):
    """Batches (a, b) then (c, d) whose samples all agree; returns (output, sampled prompts)."""
    llm = scripted_llm(self_ask_script([f"Follow up: {SQ}", "So the final answer is: David Lynch"]), lambda q, i: "David Lynch")
    res = resources(llm, TableScorer(scores), MemoryIndex(CORPUS, {SQ: RANKING}), nli=TableNLI())
    cfg = {"resources": res, "batch_size": 2, "budget": 4, "samples": 3, "evidence": 2, "rescoring": "paper", **config}
    out = build_graph("sunar").invoke({"question": "Where was the director of Ronnie Rocket born?"}, {"configurable": cfg})
    return out, [c for c in llm.calls if c.endswith(f"Question: {SQ}")]


def test_a_batch_outranked_by_the_evidence_so_far_gets_no_answer_sampling():
    """l = 2: after (a .8, b .6), the batch (c .5, d .3) cannot reach the top 2, so its ASU is skipped."""
    out, prompts = run_agreeing({"a": 0.8, "b": 0.6, "c": 0.5, "d": 0.3})
    first, second = out["hops"][0]["batches"]
    assert len(first["answers"]) == 3 and "answers" not in second and "sets" not in second
    assert second["rescored"] == second["scores"] == [0.5, 0.3]
    assert [e["id"] for e in out["hops"][0]["evidence"]] == ["a", "b"]
    off, sampled = run_agreeing({"a": 0.8, "b": 0.6, "c": 0.5, "d": 0.3}, asu_skip_outranked=False)
    assert len(off["hops"][0]["batches"][1]["answers"]) == 3 and len(sampled) == len(prompts) + 3
    assert [e["id"] for e in off["hops"][0]["evidence"]] == ["a", "b"]  # the same evidence either way


@pytest.mark.parametrize(("c", "sampled"), [(0.61, True), (0.6, False)])
def test_a_batch_that_could_enter_the_top_l_is_sampled(c, sampled):
    """Only a score above the l-th best can enter (a tie keeps the earlier document)."""
    out, _ = run_agreeing({"a": 0.8, "b": 0.6, "c": c, "d": 0.3})
    assert ("answers" in out["hops"][0]["batches"][1]) is sampled
