"""Each shape of question beyond the 2-hop chain, end to end on the real embedded model and the demo
index, as ``--stream`` shows it: a comparison of two people's dates and a bridge comparison of two
films' directors (both decided in code on the dates the chain found), and an inference over family
relations (a grandfather asked as a father, twice, and no third time)."""

import pytest

from sunar.compare import comparison
from sunar.graph import build_graph, describe_step
from sunar.text import normalize_answer


def stream(demo_index, variant, question):
    """``variant`` on ``question`` with the cpu profile: its last state and the lines ``--stream`` shows."""
    config = {"llm": "embedded:qwen2.5-1.5b", "profile": "cpu", "index_dir": str(demo_index), "calibration": "off"}
    lines, state = [], {}
    for mode, chunk in build_graph(variant).stream({"question": question}, {"configurable": config}, stream_mode=["updates", "values"]):
        if mode == "values":
            state = chunk
            continue
        for node, update in chunk.items():
            if line := describe_step(node, update or {}, state):
                lines.append(line)
    return state, lines


@pytest.mark.slow
def test_a_comparison_of_two_dates_is_decided_on_the_dates_found(demo_index):
    question = "Who was born first, David Lynch or Alfred Hitchcock?"
    state, lines = stream(demo_index, "self_ask", question)
    assert lines[0].startswith("a comparison of 'David Lynch' and 'Alfred Hitchcock' (the earlier)")
    assert len(state["hops"]) == 2 and any(line.startswith("compared in code: David Lynch: ") for line in lines)
    assert state["answer"] == "Alfred Hitchcock"  # born 1899, Lynch 1946


@pytest.mark.slow
def test_a_bridge_comparison_asks_each_films_director_then_each_date(demo_index):
    question = "Which film has the director born earlier, Spirited Away or Eraserhead?"
    state, lines = stream(demo_index, "sunar", question)
    assert len(state["hops"]) == 4  # beyond the cpu profile's max_hops 3: two directors, two dates
    assert state["compared"]["values"] and any(line.startswith("compared in code: ") for line in lines)
    assert normalize_answer(state["answer"]) in {normalize_answer(s) for s in comparison(question).sides}
    assert state["answer"] == "Spirited Away"  # Miyazaki born 1941, Lynch 1946


@pytest.mark.slow
def test_an_inference_asks_one_relation_at_a_time(demo_index):
    question = "Who is the paternal grandfather of Sofia Coppola?"
    state, lines = stream(demo_index, "self_ask", question)
    assert lines[0].startswith("an inference over family relations")
    assert [normalize_answer(h["answer"]) for h in state["hops"]][:2] == ["francis ford coppola", "carmine coppola"]
    assert len(state["hops"]) == 2 and "Carmine Coppola" in state["answer"]
