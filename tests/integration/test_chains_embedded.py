"""Uncertainty that acts, end to end on the real embedded model and the demo index: each hop's own
samples and semantic sets, chains branched off an uncertain hop and followed, the chosen chain, grounded
final answers, hops read from the pages they name, retrieved demonstrations, in two runs (each hop's answer
judged against its pages; free answers to an ambiguous question), as the stream shows them; a doubted hop
read once more cut short (``hop_support=cut_uncertain``), a doubted answer's chain going on, the larger
model reading doubted steps, and a weak answer decomposed again."""

import pytest

from sunar.graph import build_graph, describe_step
from sunar.nodes.answer_hop import focus, make_answer_hop
from sunar.nodes.next_chain import support
from sunar.prompts.spans import final_spans
from sunar.signals import known
from sunar.text import normalize_answer

QUESTION = "Where was the director of film Ronnie Rocket born?"
#: Two films of the demo corpus are called Psycho (Hitchcock's and Gus Van Sant's): its first hop is uncertain.
AMBIGUOUS = "Where was the director of film Psycho or of film Rashomon born?"


def stream(demo_index, question=QUESTION, **settings):
    """The sunar graph on the question with the cpu profile and ``settings``: its last state and
    the lines ``--stream`` shows."""
    config = {"llm": "embedded:qwen2.5-1.5b", "profile": "cpu", "index_dir": str(demo_index), "max_hops": 2,
              "asu_batches": False, "hop_samples": 3, "calibration": "off", **settings}
    lines, state = [], {}
    for mode, chunk in build_graph("sunar").stream({"question": question}, {"configurable": config}, stream_mode=["updates", "values"]):
        if mode == "values":
            state = chunk
            continue
        for node, update in chunk.items():
            line = describe_step(node, update or {}, state)
            if line:
                lines.append(line)
    return state, lines


@pytest.fixture(scope="module")
def grounded(demo_index):
    return stream(demo_index, grounded_final=True, focus_pages=True, demonstrations=1, temperature=1.5, hop_support="judge")


@pytest.fixture(scope="module")
def branching(demo_index):
    # free answers read from every page, without demonstrations: the two Psycho films keep the first hop uncertain
    return stream(demo_index, AMBIGUOUS, temperature=1.5, branch_width=2, max_chains=2, hop_support="off", unfit_answer="keep", replan_below=0.0,
                  focus_pages=False, demonstrations=0, grounded_final=False)


@pytest.mark.slow
def test_hops_sample_their_answers_and_read_the_pages_they_name(grounded):
    state, lines = grounded
    hops = [h for c in state["chains"] for h in c["hops"]]
    assert hops and all(len(h["samples"]) == 4 for h in hops)  # the greedy answer and 3 samples
    for hop in hops:
        assert sum(c["share"] for c in hop["candidates"]) == pytest.approx(1.0)
        read = focus(hop["question"], hop["evidence"])  # focus_pages: the pages the sub-question names, else all
        assert hop.get("read", [e["id"] for e in hop["evidence"]]) == [e["id"] for e in read]
    assert any("; candidates of 4 answers: " in line for line in lines)  # the greedy answer and 3 samples, clustered
    assert any("read" in h for h in hops)  # "Who directed Ronnie Rocket?" names the film's page
    path = [h["answer"] for h in state["hops"]]
    assert state["answer"] in final_spans(QUESTION, path, state["evidence"]), state["answer"]  # grounded_final
    judged = [h["support"] for h in state["hops"] if known(h["answer"])]  # hop_support: the LLM's P(yes), each hop
    assert judged and all(0.0 <= p <= 1.0 for p in judged) and state["signals"]["hop_support"] == min(judged)
    assert sum("; its pages state it: p = " in line for line in lines) >= len(judged)
    fits = state["signals"]["answer_fits"]  # and the final answer judged against the whole question
    assert 0.0 <= fits <= 1.0 and state["signals"]["chain_support"] == min(fits, *judged)
    assert any("; it answers the question: p = " in line for line in lines)


@pytest.mark.slow
def test_an_uncertain_hop_branches_and_the_best_supported_chain_is_chosen(branching):
    state, lines = branching
    chains = state["chains"]
    branched = [h for c in chains for h in c["hops"] if sum(known(x["answer"]) for x in h["candidates"]) > 1]
    assert branched, [h["candidates"] for c in chains for h in c["hops"]]
    assert len(chains) == 2 and all(c["status"] == "done" for c in chains)
    at = next(i for i, (a, b) in enumerate(zip(chains[0]["hops"], chains[1]["hops"], strict=False)) if a["answer"] != b["answer"])
    for chain in chains:  # each chain weighs the share of the candidate it took
        hop = chain["hops"][at]
        share = next(x["share"] for x in hop["candidates"] if normalize_answer(x["answer"]) == normalize_answer(hop["answer"]))
        assert chain["weight"] <= share + 1e-6
    assert any("candidate answers for " in note and "each is followed as a chain" in note for note in state["notes"]), state["notes"]
    scores = [c["weight"] * support(c) for c in chains]
    assert state["chosen"] == scores.index(max(scores))
    path = [(s["question"], s["answer"]) for s in state["reasoning_path"]]
    assert path == [(h["question"], h["answer"]) for h in chains[state["chosen"]]["hops"]]
    assert any(line.startswith("next chain:") for line in lines) and any(line.startswith("2 chains:") for line in lines)
    assert state["answer"]


def director_hop_cut(demo_index, monkeypatch, **settings):
    """The real model and the offline scorer answer "Who directed Ronnie Rocket?" from three scored pages with
    ``settings``: the hop, its pages cut to their three sentences most relevant to it, and the prompts generated from."""
    from sunar.resources import resources
    from sunar.sentences import cut_to_sentences

    monkeypatch.setattr("sunar.hop_support.CUT_SENTENCES", 3)
    config = {"configurable": {"llm": "embedded:qwen2.5-1.5b", "profile": "cpu", "index_dir": str(demo_index), "calibration": "off", **settings}}
    scored = {"d150667e65947": 0.9, "d318efe81f917": 0.8, "db858f3147760": 0.7}  # Ronnie Rocket, David Lynch, Eraserhead
    state = {"question": QUESTION, "sub_question": "Who directed Ronnie Rocket?", "scored": scored, "hops": [], "chains": []}
    res, llm_calls = resources(config), []
    generate = res.llm.generate
    monkeypatch.setattr(res.llm, "generate", lambda messages, **kw: llm_calls.append(messages) or generate(messages, **kw))  # the prompts read
    hop = make_answer_hop()(state, config)["hops"][-1]
    return hop, cut_to_sentences(hop["question"], hop["evidence"], res.scorer.score, 3), llm_calls


@pytest.mark.slow
def test_cut_uncertain_reads_a_hop_once_more_only_when_its_judge_doubts_it(demo_index, monkeypatch):
    """``hop_support=cut_uncertain`` (the cpu profile's) on the real model, with no samples to split: the hop is read
    once more, from its pages cut to their most relevant sentences and reversed, exactly when the judge's P(yes) for
    its first answer is below 0.5."""
    from sunar.prompts.answer import answer_messages

    hop, shortened, llm_calls = director_hop_cut(demo_index, monkeypatch, hop_samples=0, hop_support="cut_uncertain")
    read_again = "cut_read" in hop
    doubted = "unsupported" in hop or hop["support"] is not None and hop["support"] < 0.5  # a cut answer taken replaced a doubted one
    assert read_again == doubted and len(llm_calls) == 1 + read_again, (hop, len(llm_calls))
    assert sum(len(p["text"]) for p in shortened) < sum(len(p["text"]) for p in hop["evidence"])
    assert llm_calls[1:] == ([answer_messages(hop["question"], shortened[::-1])] if read_again else [])
    assert "David Lynch" in hop["answer"], hop


@pytest.mark.slow
def test_a_final_answer_of_the_wrong_kind_is_doubted_and_its_chain_of_one_hop_goes_on(demo_index):
    """The check on the real model: a year for where the director was born, after one hop that found him, is
    doubted and the chain goes on about him; the place after two hops stands. (Shown one step, this model takes
    the bridge's name itself for an answer: "David Lynch" here is judged P(yes) 0.66.)"""
    from sunar.nodes.check import check

    hop = {"question": "Who directed Ronnie Rocket?", "answer": "David Lynch", "evidence": [], "batches": [], "support": 0.9}
    chain = {"hops": [hop], "draft_answer": "", "weight": 1.0, "status": "done", "answer": "David Lynch"}
    state = {"question": QUESTION, "hops": [hop], "answer": "1946", "draft_answer": "", "chains": [chain], "chosen": 0}
    config = {"llm": "embedded:qwen2.5-1.5b", "profile": "cpu", "index_dir": str(demo_index), "calibration": "off",
              "hop_support": "judge", "unfit_answer": "both", "demonstrations": 1}
    update = check(state, {"configurable": config})
    assert "David Lynch" in update.get("sub_question", "") and "born" in update["sub_question"], update  # the rest of the question
    assert update["went_on"] and update["chosen"] is None and update["chains"] == [] and update["draft_answer"] == ""
    assert "the final answer '1946' does not answer the question" in update["notes"][0]
    kept = check({**state, "answer": "Missoula", "hops": [hop, {**hop, "question": "Where was David Lynch born?", "answer": "Missoula"}]},
                 {"configurable": config})
    assert kept["judged"]["answer_fits"] >= 0.5 and "sub_question" not in kept and "answer" not in kept  # a fitting answer stands


@pytest.mark.slow
def test_a_hop_the_small_models_judge_doubts_is_read_again_by_the_larger_model(demo_index):
    """``hop_support=escalate`` on the real models: an answer Ronnie Rocket's page does not hold is doubted
    by the 0.5B model's own judge, and the 1.5B model reads the page again and judges both answers; the
    one it finds better supported is kept."""
    from sunar.configuration import Configuration
    from sunar.hop_support import supported
    from sunar.prompts.answer import SCHEMA, short_call
    from sunar.resources import resources
    from sunar.stores.index import Index

    config = {"configurable": {"llm": "embedded:qwen2.5-0.5b", "escalate_llm": "embedded:qwen2.5-1.5b", "profile": "cpu",
                               "index_dir": str(demo_index), "calibration": "off", "hop_support": "escalate"}}
    cfg, res = Configuration.from_runnable_config(config), resources(config)
    pages = Index(demo_index).documents(["d150667e65947"])  # Ronnie Rocket: "The American filmmaker David Lynch developed ..."
    read = [{"id": p.id, "title": p.title, "text": p.text} for p in pages]
    hop = {"question": "Who directed Ronnie Rocket?", "answer": "Michael J. Anderson", "evidence": read, "batches": []}
    out = supported(hop, read, read, cfg, res, short_call(cfg, SCHEMA), config)
    assert out["escalated"] == "Michael J. Anderson", out  # the small model's judge said no
    assert out["answer"] == "David Lynch" and out["support"] >= 0.5, out
    assert res.escalation.name != res.llm.name


@pytest.mark.slow
def test_a_final_answer_the_judge_doubts_is_answered_again_by_the_larger_model(demo_index):
    """``unfit_answer=escalate`` on the real models: MER on the 0.5B model gave no answer (the judge's
    P(yes) is 0 without a call), and the 1.5B model reads the same path and pages, judges its own
    answer, and it replaces the first."""
    from sunar.nodes.check import check
    from sunar.state import evidence_of
    from sunar.stores.index import Index

    config = {"configurable": {"llm": "embedded:qwen2.5-0.5b", "escalate_llm": "embedded:qwen2.5-1.5b", "profile": "cpu",
                               "index_dir": str(demo_index), "calibration": "off", "hop_support": "judge", "unfit_answer": "escalate"}}
    pages = Index(demo_index).documents(["d150667e65947", "d318efe81f917"])  # Ronnie Rocket, David Lynch
    evidence = evidence_of(pages, {})
    hops = [{"question": "Who directed Ronnie Rocket?", "answer": "David Lynch", "support": 0.9},
            {"question": "Where was David Lynch born?", "answer": "Missoula, Montana", "support": 0.9}]
    state = {"question": QUESTION, "answer": "unknown", "hops": hops, "evidence": evidence, "draft_answer": "", "chains": []}
    out = check(state, config)
    assert out["acted"] == "escalated" and "Missoula" in out["answer"], out
    assert out["judged"]["answer_fits"] >= 0.5 and out["notes"][0].startswith("the final answer 'unknown' (p = 0.00) was read again"), out


@pytest.mark.slow
def test_a_weak_answer_is_decomposed_again_planned_and_the_stronger_one_kept(demo_index):
    """``replan_below`` on the real model: at 1.0 every answer the judge does not pass with certainty is weak,
    so the question is planned at once after the first answer, and the answer with the stronger weakest link kept."""
    state, lines = stream(demo_index, hop_support="judge", unfit_answer="keep", replan_below=1.0, demonstrations=1)
    first = state["first_try"]
    assert state["replanned"] == "done" and first["answer"] and first["judged"]["chain_support"] < 1.0, (state.get("replanned"), first)
    assert any(line.startswith("the answer's weakest link is weak: the question is decomposed again, planned at once") for line in lines)
    assert sum(line.startswith("plan: ") for line in lines) == 1  # the second decomposition is planned, once
    took = state.get("acted") == "replanned"
    assert f"of the two decompositions' answers, {'the planned one is kept' if took else 'the first is kept: ' + state['answer']}" in lines
    weakest = state["signals"]["chain_support"]
    assert weakest > first["judged"]["chain_support"] if took else weakest == first["judged"]["chain_support"]
    assert bool(state["plan"]) == took and state["answer"]  # the planned chain's hops and plan, or the first's
