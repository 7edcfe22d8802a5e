"""A short answer copied from the answer prompt's worked example, not from the question or the pages
shown (seen on dev questions whose pages did not say: "Maeve Brennan-Quinn" for who plays Vision),
is read as ``unknown``, in every graph, with a note; a name the pages do hold is kept."""

import re

import pytest

from fakes import MemoryIndex, TableNLI, TableScorer, docs, prompt_kind, resources
from scripted import ScriptedLLM
from sunar.graph import build_graph
from sunar.prompts.answer import UNKNOWN, answer_from, echoes_example

QUESTION = "Who is the spouse of the actor who plays Vision in Age of Ultron?"
STEP = "Who plays Vision in Age of Ultron?"
CORPUS = docs(("au", "Avengers: Age of Ultron", "Avengers: Age of Ultron is a 2015 superhero film."),
              ("mb", "Maeve Brennan-Quinn", "Maeve Brennan-Quinn is a writer."))


def test_an_example_name_the_pages_do_not_hold_is_an_echo():
    pages = [{"title": "Avengers: Age of Ultron", "text": "A 2015 film."}]
    assert echoes_example("Maeve Brennan-Quinn", STEP, pages)
    assert echoes_example("The Lighthouse Keeper", STEP, pages)
    assert answer_from('{"answer": "Maeve Brennan-Quinn"}', STEP, pages) == UNKNOWN
    assert not echoes_example("Maeve Brennan-Quinn", STEP, [{"title": "Maeve Brennan-Quinn", "text": "A writer."}])  # the pages hold it
    assert not echoes_example("Maeve Brennan-Quinn", "Who wrote about Maeve Brennan-Quinn?", pages)  # the question does
    assert not echoes_example("Sweden", STEP, pages)  # one word: a guess, not a copied name
    assert not echoes_example("Paul Bettany", STEP, pages)
    assert answer_from('{"answer": "Paul Bettany"}', STEP, pages) == "Paul Bettany"


def script(prompt: str, i: int) -> str:
    kind = prompt_kind(prompt)
    if kind == "self_ask":
        found = re.findall(r"Intermediate answer: (.*)", prompt.rsplit("Question:", 1)[1])
        return f"So the final answer is: {found[-1]}" if found else f"Follow up: {STEP}"
    if kind == "mer":
        return '{"rationale": "From the path.", "answer": "unknown"}'
    return '{"answer": "Maeve Brennan-Quinn"}'  # the example's novelist, whatever it is asked


@pytest.mark.parametrize("variant", ["sunar", "self_ask"])
def test_a_hop_answer_copied_from_the_example_is_unknown_with_a_note(variant):
    res = resources(ScriptedLLM(script), TableScorer({"au": 0.9, "mb": 0.1}), MemoryIndex(CORPUS, {STEP: [("au", 2.0)]}), nli=TableNLI())
    cfg = {"resources": res, "batch_size": 4, "budget": 4, "samples": 2, "hop_samples": 2, "evidence": 3, "neighbours": 0, "calibration": "off"}
    out = build_graph(variant).invoke({"question": QUESTION}, {"configurable": cfg})
    hop = out["hops"][0]
    assert hop["answer"] == UNKNOWN and all(s == UNKNOWN for s in hop.get("samples", []))
    assert any("copied from the prompt's worked example" in n and "Maeve Brennan-Quinn" in n for n in out["notes"])
    assert "Maeve" not in out["answer"]
