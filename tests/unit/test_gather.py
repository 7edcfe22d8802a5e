"""MER's evidence: the hops' evidence re-ranked against the question, optionally keeping each
hop's best documents first."""

import pytest

from fakes import MemoryIndex, TableScorer, docs, resources
from scripted import ScriptedLLM
from sunar.nodes.gather import gather

CORPUS = docs(
    ("d1", "Ronnie Rocket", "Ronnie Rocket is an unfinished film by David Lynch."),
    ("d2", "David Lynch", "David Lynch was born in Missoula, Montana."),
    ("d3", "Ronnie Rocket (band)", "Ronnie Rocket is a band."),
    ("d4", "Twin Peaks", "Twin Peaks is a series by David Lynch."),
)
#: Against the question, the answer document d2 scores lowest: it does not name Ronnie Rocket.
AGAINST_QUESTION = {"d1": 0.9, "d3": 0.7, "d4": 0.6, "d2": 0.1}


def _hop(question, answer, *ids):
    return {"question": question, "answer": answer, "evidence": [{"id": i, "title": CORPUS[i].title, "text": CORPUS[i].text} for i in ids]}


STATE = {
    "question": "Where was the director of film Ronnie Rocket born?",
    "hops": [_hop("Who directed Ronnie Rocket?", "David Lynch", "d1", "d3"), _hop("Where was David Lynch born?", "Missoula", "d2", "d4")],
}


def run(**config):
    scorer = TableScorer(AGAINST_QUESTION)
    res = resources(ScriptedLLM(lambda prompt, i: ""), scorer, MemoryIndex(CORPUS))
    out = gather(STATE, {"configurable": {"resources": res, **config}})
    return [e["id"] for e in out["evidence"]], out, scorer


@pytest.mark.parametrize(
    ("keep", "evidence", "ids"),
    [
        (0, 2, ["d1", "d3"]),  # the official re-ranking drops the last hop's answer document
        (1, 2, ["d1", "d2"]),  # each hop's best is kept, then ordered by the question's scores
        (1, 3, ["d1", "d3", "d2"]),  # the rest of the room goes to the best against the question
        (2, 3, ["d1", "d3", "d2"]),  # best of each hop, then second best of each, cut at l
        (0, 10, ["d1", "d3", "d4", "d2"]),  # room for everything: the question's order
        (3, 10, ["d1", "d3", "d4", "d2"]),
    ],
)
def test_gather_keeps_each_hops_best_documents(keep, evidence, ids):
    got, out, scorer = run(keep_per_hop=keep, evidence=evidence)
    assert got == ids
    assert [e["score"] for e in out["evidence"]] == [AGAINST_QUESTION[i] for i in ids]
    assert scorer.calls == [(STATE["question"], ["d1", "d3", "d2", "d4"])]  # one scorer call over the pooled evidence


def test_gather_without_evidence_scores_nothing():
    scorer = TableScorer({})
    res = resources(ScriptedLLM(lambda prompt, i: ""), scorer, MemoryIndex(CORPUS))
    assert gather({"question": "q", "hops": []}, {"configurable": {"resources": res, "keep_per_hop": 1}})["evidence"] == []
    assert scorer.calls == []
