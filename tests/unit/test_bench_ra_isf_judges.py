"""The RA-ISF judges benchmark with scripted models: each judge's labels and decisions, the
decomposition rule, the thresholds fitted out of sample, and the intervals."""

from __future__ import annotations

from benchmarks.bench_ra_isf_judges import (
    SUFFICIENT_SYSTEM,
    cross_fitted,
    decomposition_right,
    judge_decomposition,
    judge_relevance,
    judge_self_knowledge,
    judge_sufficiency,
    row,
)
from fakes import MemoryIndex, TableScorer, docs, resources
from scripted import ScriptedLLM
from sunar.baselines.ra_isf import prompts
from sunar.baselines.ra_isf.configuration import RaIsfConfiguration as Configuration
from sunar.evals.data import Question

CORPUS = docs(
    ("d1", "Ronnie Rocket", "Ronnie Rocket is an unfinished film by David Lynch."),
    ("d2", "David Lynch", "David Lynch was born in Missoula, Montana."),
    ("d3", "Eraserhead", "Eraserhead is a 1977 film."),
)
LYNCH = Question("q1", "musique", "Where was the director of film Ronnie Rocket born?", ["Missoula, Montana"], ["d1", "d2"],
                 [("Who directed film Ronnie Rocket?", "David Lynch", "d1"), ("Where was David Lynch born?", "Missoula, Montana", "d2")])
JAPAN = Question("q2", "2wiki", "What is the capital of Japan?", ["Tokyo"], ["d9"])


def script(prompt: str, i: int) -> str:
    asked = prompt.rsplit("Question: ", 1)[1]
    if prompt.startswith(prompts.KNOW_SYSTEM):
        return "yes" if "Japan" in asked else "no"
    if prompt.startswith(prompts.SELF_ANSWER_SYSTEM):
        return '{"answer": "Tokyo"}' if "Japan" in asked else '{"answer": "Paris"}'
    if prompt.startswith(prompts.RELEVANCE_SYSTEM):
        return "yes" if "Passage: Eraserhead" in asked or "Passage: Ronnie Rocket" in asked else "no"
    if prompt.startswith(SUFFICIENT_SYSTEM):
        return "yes" if "] David Lynch:" in asked else "no"
    if prompt.startswith(prompts.DECOMPOSE_SYSTEM):
        return '{"sub_questions": "1. Who directed the film Ronnie Rocket? 2. Where was #1 born?"}'
    raise AssertionError(prompt[:60])


def test_each_judge_is_labelled_by_the_dev_data_and_decided_out_of_sample():
    res = resources(ScriptedLLM(script), TableScorer({"d1": 0.9, "d2": 0.8, "d3": 0.1}), MemoryIndex(CORPUS, default_ranking=[("d3", 3.0), ("d1", 2.0), ("d2", 1.0)]))
    cfg = Configuration.resolve({"profile": "cpu", "evidence": 3})
    spent: list[float] = []

    know = judge_self_knowledge(res, [LYNCH, JAPAN], spent)
    assert [(c["label"], c["margin"] > 0, c["closed_book"]) for c in know] == [(False, False, "Paris"), (True, True, "Tokyo")]
    first = row("argmax", know, [c["margin"] > 0 for c in know], [c["margin"] for c in know])
    assert first["accuracy"] == 1.0 and first["balanced_accuracy"] == 1.0 and first["auroc"] == 1.0
    assert first["accuracy_ci95"][0] < 1.0 == first["accuracy_ci95"][1]  # two cases: a wide interval

    relevance = judge_relevance(res, cfg, [LYNCH], spent)
    assert [(c["passage"], c["label"], c["margin"] > 0) for c in relevance] == [("d1", True, True), ("d2", True, False), ("d3", False, True)]
    judged = row("argmax", relevance, [c["margin"] > 0 for c in relevance])
    assert judged["positives_found"] == "1/2" and judged["negatives_found"] == "0/1" and judged["balanced_accuracy"] == 0.25
    # each question decided by the threshold the other one's passages fit: 0.5 from q2 for q1, 0.55 from q1 for q2
    halves = [{"qid": q, "label": y, "score": s} for q, y, s in [("q1", True, 0.9), ("q1", False, 0.1), ("q2", True, 0.6), ("q2", False, 0.4)]]
    assert cross_fitted(halves, "score") == [True, False, True, False]

    decomposition = judge_decomposition(res, [LYNCH, JAPAN], spent)  # JAPAN has no gold decomposition
    assert len(decomposition) == 1 and decomposition[0]["right"] and decomposition[0]["generated"][1] == "Where was #1 born?"
    assert len(spent) == 2 + 3 + 1


def test_a_decomposition_is_right_with_the_gold_count_and_the_gist_of_the_first_step():
    gold = ["Who directed film Ronnie Rocket?", "Where was #1 born?"]
    assert decomposition_right(["Who was the director of Ronnie Rocket?", "Where was #1 born?"], gold)
    assert not decomposition_right(["Who directed Ronnie Rocket?"], gold)  # one step short
    assert not decomposition_right(["Where was David born?", "Who is #1?"], gold)  # another first step


def test_sufficiency_is_judged_over_the_relevant_passages_together_and_labelled_by_the_answer():
    res = resources(ScriptedLLM(script), TableScorer({"d1": 0.9, "d2": 0.8, "d3": 0.1}), MemoryIndex(CORPUS, default_ranking=[("d3", 3.0), ("d1", 2.0), ("d2", 1.0)]))
    spent: list[float] = []
    relevance = judge_relevance(res, Configuration.resolve({"profile": "cpu", "evidence": 3}), [LYNCH], [])
    # the film's passage alone is one hop short: not sufficient, and the judge says no
    one = judge_sufficiency(res, Configuration.resolve({"profile": "cpu", "evidence": 3, "relevance_threshold": 0.85}), relevance, [LYNCH], spent)
    assert [(c["passages"], c["label"], c["margin"] > 0) for c in one] == [(["d1"], False, False)]
    # with the director's passage beside it the answer is there, and the judge says yes
    two = judge_sufficiency(res, Configuration.resolve({"profile": "cpu", "evidence": 3, "relevance_threshold": 0.5}), relevance, [LYNCH], spent)
    assert [(c["passages"], c["label"], c["margin"] > 0, c["relevant"]) for c in two] == [(["d1", "d2"], True, True, 2)]
    # no passage above the threshold: no call, no case
    assert judge_sufficiency(res, Configuration.resolve({"profile": "cpu", "evidence": 3, "relevance_threshold": 5.0}), relevance, [LYNCH], spent) == []
    assert len(spent) == 2
