"""Uncertainty that acts, end to end on the real embedded model and the demo index: each hop's own
samples and semantic sets, chains branched off an uncertain hop and followed, the chosen chain,
grounded hop answers, retrieved demonstrations and the final vote, all in one run, as the stream
shows them."""

import pytest

from sunar.graph import build_graph, describe_step
from sunar.nodes.next_chain import support
from sunar.signals import known
from sunar.text import normalize_answer

QUESTION = "Where was the director of film Ronnie Rocket born?"


@pytest.fixture(scope="module")
def run(demo_index):
    config = {
        "llm": "embedded:qwen2.5-1.5b", "profile": "cpu", "index_dir": str(demo_index), "max_hops": 2,
        "asu_batches": False, "hop_samples": 3, "branch_width": 2, "max_chains": 2, "grounded_answers": True,
        "demonstrations": 1, "final_vote": True, "calibration": "off",
        "temperature": 1.5,  # samples that disagree, so a hop branches
    }
    lines, state = [], {}
    for mode, chunk in build_graph("sunar").stream({"question": QUESTION}, {"configurable": config}, stream_mode=["updates", "values"]):
        if mode == "values":
            state = chunk
            continue
        for node, update in chunk.items():
            line = describe_step(node, update or {}, state)
            if line:
                lines.append(line)
    return state, lines


@pytest.mark.slow
def test_hops_sample_their_answers_and_ground_them_in_their_evidence(run):
    state, lines = run
    hops = [h for c in state["chains"] for h in c["hops"]]
    assert hops and all(len(h["samples"]) == 4 for h in hops)  # the greedy answer and 3 samples
    for hop in hops:
        assert sum(c["share"] for c in hop["candidates"]) == pytest.approx(1.0)
        evidence = normalize_answer(" ".join(f"{e['title']} {e['text']}" for e in hop["evidence"]))
        for answer in hop["samples"]:  # every answer is a span of the hop's evidence, or "unknown"
            assert answer == "unknown" or normalize_answer(answer) in evidence, (answer, hop["question"])
    assert any("candidates:" in line for line in lines)


@pytest.mark.slow
def test_an_uncertain_hop_branches_and_the_best_supported_chain_is_chosen(run):
    state, lines = run
    chains = state["chains"]
    branched = [h for c in chains for h in c["hops"] if sum(known(x["answer"]) for x in h["candidates"]) > 1]
    assert branched, [h["candidates"] for c in chains for h in c["hops"]]  # at temperature 1.5 some hop disagrees
    assert len(chains) == 2 and all(c["status"] == "done" for c in chains)
    scores = [c["weight"] * support(c) for c in chains]
    assert state["chosen"] == scores.index(max(scores))
    assert state["reasoning_path"] == [{"question": h["question"], "answer": h["answer"]} for h in chains[state["chosen"]]["hops"]]
    assert any(line.startswith("next chain:") for line in lines) and any(line.startswith("2 chains:") for line in lines)
    assert state["answer"] and "unknown" not in state["answer"].lower()
