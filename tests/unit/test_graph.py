"""The whole graph with scripted models, for every variant: which nodes run, and the output."""

import re
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from fakes import MemoryIndex, TableScorer, docs, prompt_kind, resources, scripted_llm, self_ask_script
from scripted import ScriptedLLM
from sunar.errors import SunarError
from sunar.graph import VARIANTS, build_graph

CORPUS = docs(
    ("d1", "Ronnie Rocket", "Ronnie Rocket is an unfinished film by David Lynch."),
    ("d2", "David Lynch", "David Lynch was born in Missoula, Montana."),
    ("d3", "Eraserhead", "Eraserhead is a film."),
)
ANSWERS = {"Who directed Ronnie Rocket?": "David Lynch", "Where was David Lynch born?": "Missoula, Montana"}
STEPS = ["Follow up: Who directed Ronnie Rocket?", "Follow up: Where was David Lynch born?", "So the final answer is: Helena"]


def make_resources():
    def answer(question, i):
        if question.startswith("MER:"):
            return "Missoula, Montana"
        return ANSWERS.get(question, "Missoula, Montana")

    llm = scripted_llm(self_ask_script(STEPS), answer)
    index = MemoryIndex(CORPUS, default_ranking=[("d1", 2.0), ("d2", 1.5), ("d3", 1.0)], graph={"d1": ["d2"], "d2": ["d1", "d3"]})
    return resources(llm, TableScorer({"d1": 0.9, "d2": 0.8, "d3": 0.1}), index)


def node_sequence(variant, res, **config):
    graph = build_graph(variant)
    cfg = {"configurable": {"resources": res, "batch_size": 2, "budget": 3, "samples": 3, **config}}
    return [next(iter(update)) for update in graph.stream({"question": "Where was the director of film Ronnie Rocket born?"}, cfg, stream_mode="updates")]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_variant_runs_to_a_reply(variant):
    res = make_resources()
    seq = node_sequence(variant, res)
    v = VARIANTS[variant]
    assert seq[0] == "ask" and seq[-8:] == ["next_chain", "gather", "compare", "final", "shorten", "check", "confidence", "respond"]
    assert seq.count("decompose") == 3 and seq.count("answer_hop") == 2
    assert ("sample_answers" in seq) == v.asu and ("cluster" in seq) == v.asu and ("rescore" in seq) == v.asu
    mer_calls = [c for c in res.llm.inner.calls if c.startswith("You check a chain")]
    assert bool(mer_calls) == v.mer


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_output_contract(variant):
    res = make_resources()
    out = build_graph(variant).invoke(
        {"question": "Where was the director of film Ronnie Rocket born?"},
        {"configurable": {"resources": res, "batch_size": 2, "budget": 3, "samples": 3}},
    )
    # MER reads the evidence and corrects Self-Ask's wrong "Helena"; without MER it stays.
    assert out["answer"] == ("Missoula, Montana" if VARIANTS[variant].mer else "Helena")
    assert 0.0 <= out["confidence"] <= 1.0
    # each hop's answer went back into Self-Ask: its last step read the whole path, in order
    last = [c for c in res.llm.inner.calls if prompt_kind(c) == "self_ask"][-1].rsplit("Question:", 1)[1]
    assert last.index("Who directed Ronnie Rocket?") < last.index("David Lynch") < last.index("Where was David Lynch born?") < last.index("Missoula, Montana")
    assert out["reasoning_path"] == [{"question": h["question"], "answer": h["answer"]} for h in out["hops"]]
    # the budget (3) scored the whole corpus; the evidence is in the scorer's order, with its scores
    assert [(e["id"], e["score"]) for e in out["evidence"]] == [("d1", 0.9), ("d2", 0.8), ("d3", 0.1)]
    assert set(out) >= {"answer", "confidence", "reasoning_path", "evidence", "usage", "messages"}
    usage = out["usage"]
    assert usage["llm_calls"] > 0 and usage["calls"]["decompose"] == 3 and usage["seconds"]["select_batch"] >= 0
    assert usage["llm_seconds"] > 0 and usage["nli_seconds"] >= 0 and usage["prompt_tokens"] > 0
    reply = out["messages"][-1]
    assert isinstance(reply, AIMessage) and reply.content.startswith(out["answer"]) and "Ronnie Rocket" in reply.content


def test_sunar_spends_more_llm_calls_than_self_ask():
    def calls(variant):
        return build_graph(variant).invoke(
            {"question": "Where was the director of film Ronnie Rocket born?"},
            {"configurable": {"resources": make_resources(), "batch_size": 2, "budget": 3, "samples": 3}},
        )["usage"]["llm_calls"]

    # sunar: per batch 3 samples; both also pay the 3 confidence samples
    assert calls("sunar") > calls("sunar_no_asu") > calls("self_ask")


def test_chat_messages_in_ai_message_out():
    res = make_resources()
    graph = build_graph("sunar")
    out = graph.invoke(
        {"messages": [HumanMessage("Where was the director of film Ronnie Rocket born?")]},
        {"configurable": {"resources": res, "batch_size": 2, "budget": 3, "samples": 2}},
    )
    assert out["question"] == "Where was the director of film Ronnie Rocket born?"
    assert [m.type for m in out["messages"]] == ["human", "ai"]


@pytest.mark.parametrize("given", [{}, {"messages": []}, {"messages": [AIMessage("Hello")]}, {"question": None}])
def test_input_without_a_question_says_how_to_send_one(given):
    with pytest.raises(SunarError, match=r'^no question was sent; send \{"question": "..."\} or \{"messages": \[...\]\} ending with a human message'):
        build_graph("self_ask").invoke(given, {"configurable": {"resources": make_resources()}})


def test_plain_question_joins_the_history_as_a_human_message():
    out = build_graph("sunar_r").invoke(
        {"question": "Where was the director of film Ronnie Rocket born?"},
        {"configurable": {"resources": make_resources(), "batch_size": 2, "budget": 3, "samples": 2}},
    )
    assert [m.type for m in out["messages"]] == ["human", "ai"]


def test_confidence_counts_samples_contained_in_a_sentence_answer():
    def answer(question, i):
        if question.startswith("MER:"):
            return "David Lynch was born in Missoula, Montana"
        return ANSWERS.get(question, ["Missoula, Montana", "Helena", "missoula montana"][i])

    llm = scripted_llm(self_ask_script(STEPS), answer)
    res = resources(llm, TableScorer({"d1": 0.9}), MemoryIndex(CORPUS, default_ranking=[("d1", 2.0)]))
    out = build_graph("sunar").invoke(
        {"question": "Where was the director of film Ronnie Rocket born?"},
        {"configurable": {"resources": res, "batch_size": 2, "budget": 3, "samples": 3}},
    )
    assert out["answer"] == "David Lynch was born in Missoula, Montana"
    assert out["confidence"] == pytest.approx(2 / 3, abs=1e-4)  # "Helena" disagrees


QUESTION = "Where was the director of film Ronnie Rocket born?"


def run_with_mer(first: str, follow_up: str):
    """The sunar graph on QUESTION where MER first replies ``first`` and, asked again for the short
    answer, ``follow_up``; every other prompt is the usual script. Returns (output, resources)."""
    from sunar.prompts import mer

    base = make_resources()
    final_only = mer.FINAL_ONLY.format(question=QUESTION)

    def script(prompt, i):
        if prompt.startswith(mer.SYSTEM):
            return follow_up if prompt.endswith(final_only) else first
        return base.llm.inner.chat.script(prompt, i)

    res = resources(ScriptedLLM(script), base.scorer, base.index)
    return build_graph("sunar").invoke({"question": QUESTION}, {"configurable": {"resources": res}}), res


def test_mer_without_a_final_answer_is_asked_once_more_for_it():
    """A cut-off MER rationale (no '[Final Answer]:') gets one short follow-up call."""
    from sunar.prompts import mer

    out, res = run_with_mer(
        "[Answer]: Ronnie Rocket was directed by David Lynch, who was born in",  # out of tokens
        "[Final Answer]: Missoula, Montana",
    )
    assert out["answer"] == "Missoula, Montana"
    assert out["rationale"].startswith("Ronnie Rocket was directed by David Lynch")
    assert any("asked again for the short answer" in n for n in out["notes"])
    assert sum(p.endswith(mer.FINAL_ONLY.format(question=QUESTION)) for p in res.llm.inner.calls) == 1


def test_streams_node_updates_for_a_ui_and_the_mer_answer_token_by_token():
    graph = build_graph("sunar")
    updates, tokens = [], []
    for mode, item in graph.stream(
        {"question": "Where was the director of film Ronnie Rocket born?"},
        {"configurable": {"resources": make_resources(), "batch_size": 2, "budget": 3, "samples": 3}},
        stream_mode=["updates", "messages"],
    ):
        if mode == "updates":
            updates.append(item)
        elif item[1]["langgraph_node"] == "final":
            tokens.append(item[0].content)
    by_node = {}
    for update in updates:
        for name, value in update.items():
            by_node.setdefault(name, []).append(value)
    assert by_node["decompose"][0]["sub_question"] == "Who directed Ronnie Rocket?"
    assert by_node["select_batch"][0]["batch"]["source"] == "ranking" and by_node["select_batch"][0]["batch"]["scores"]
    assert by_node["sample_answers"][0]["batch"]["answers"] and by_node["cluster"][0]["batch"]["sets"]
    assert by_node["answer_hop"][0]["hops"][-1]["answer"] == "David Lynch"
    assert len(tokens) > 3 and "".join(tokens).endswith("Missoula, Montana")


def test_mer_with_an_empty_final_answer_is_asked_once_more():
    """'[Final Answer]:' with nothing after it (while the rationale has the answer) is not 'unknown'."""
    out, _ = run_with_mer("[Answer]: David Lynch was born in Missoula, Montana.\n[Final Answer]:", "Missoula, Montana")
    assert out["answer"] == "Missoula, Montana" and out["rationale"] == "David Lynch was born in Missoula, Montana."
    assert any("asked again for the short answer" in n for n in out["notes"])


def test_the_nodes_readme_names_are_the_graphs():
    """README's list of nodes and the nodes it tells Studio users to interrupt before are the sunar graph's."""
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    listed = readme.split("The nodes follow the paper's Algorithm 1", 1)[1].split("GenSco", 1)[0]
    interrupts = re.findall(r"[Ii]nterrupt before `(\w+)`|or before `(\w+)`", readme)
    named = set(re.findall(r"`(\w+)`", listed)) | {n for pair in interrupts for n in pair if n}
    nodes = set(build_graph("sunar").get_graph().nodes) - {"__start__", "__end__"}
    assert named == nodes
