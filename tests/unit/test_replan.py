"""A second, planned decomposition when the first answer's weakest link is weak (``replan_below``,
:mod:`sunar.replan`), with a scripted LLM: Self-Ask stops on its bridge, the plan goes on to the answer,
and the judge says yes or no per answer."""

import re

from fakes import MemoryIndex, TableNLI, TableScorer, docs, judging, prompt_kind, resources, scripted_llm, whole_state
from sunar.graph import build_graph, describe_step
from sunar.replan import replanned

QUESTION = "Where was the director of Ronnie Rocket born?"
CORPUS = docs(
    ("rr", "Ronnie Rocket", "Ronnie Rocket is an unfinished film by David Lynch."),
    ("dl", "David Lynch", "David Lynch was born in Missoula, Montana, on January 20, 1946."),
)
RANKINGS = {"Who made the film?": [("rr", 3.0)], "Who directed Ronnie Rocket?": [("rr", 3.0)], "Where was David Lynch born?": [("dl", 3.0)]}
HOPS = {"Who made the film?": "David Lynch", "Who directed Ronnie Rocket?": "David Lynch", "Where was David Lynch born?": "Missoula"}
PLAN = "1. Who directed Ronnie Rocket?\n2. Where was #1 born?"


def stops_on_its_bridge(prompt: str) -> str:
    """Self-Ask that asks one follow-up and gives its answer as the final one."""
    found = re.findall(r"Intermediate answer: (.*)", prompt.rsplit("Question:", 1)[1])
    return f"So the final answer is: {found[-1]}" if found else "Follow up: Who made the film?"


def run(fitting, mer_answers=("David Lynch", "Missoula"), **config):
    """The graph on the scripted model: the judge says yes to a hop's pages always, and to the final
    answers in ``fitting``; MER gives ``mer_answers`` in turn."""
    llm = scripted_llm(stops_on_its_bridge, judging(HOPS, mer_answers, fitting), plan=lambda prompt: PLAN)
    res = resources(llm, TableScorer({"rr": 0.9, "dl": 0.8}), MemoryIndex(CORPUS, RANKINGS), nli=TableNLI())
    cfg = {"resources": res, "batch_size": 2, "budget": 2, "samples": 2, "asu_batches": False, "calibration": "off", "hop_support": "judge",
           "replan_below": 0.5, **config}
    return whole_state(build_graph("sunar"), {"question": QUESTION}, {"configurable": cfg}), llm


def plans_asked(llm) -> int:
    return sum(prompt_kind(c) == "plan" for c in llm.calls)


def test_a_weak_answer_gives_way_to_the_planned_decompositions_stronger_one():
    out, llm = run(fitting={"Missoula"})
    assert out["answer"] == "Missoula" and out["acted"] == "replanned" and out["replanned"] == "done"
    assert [h["question"] for h in out["hops"]] == ["Who directed Ronnie Rocket?", "Where was David Lynch born?"]
    assert out["plan"] == ["Who directed Ronnie Rocket?", "Where was #1 born?"]
    assert out["signals"]["chain_support"] == 1.0 and plans_asked(llm) == 1
    assert out["first_try"]["answer"] == "David Lynch" and [h["question"] for h in out["first_try"]["hops"]] == ["Who made the film?"]
    assert any("has a weak link (p = 0.00 < 0.50)" in n for n in out["notes"])
    assert any("took the planned chain's answer: 'David Lynch' (weakest link 0.000) against the planned chain's 'Missoula' (1.000)" in n
               for n in out["notes"])
    assert {e["id"] for e in out["evidence"]} == {"rr", "dl"}  # MER read the planned chain's pages


def test_the_first_answer_stays_on_a_tie_and_the_question_is_planned_once():
    out, llm = run(fitting=())  # both answers doubted: 0 against 0, the first kept
    assert out["answer"] == "David Lynch" and out["replanned"] == "done" and out.get("acted") != "replanned"
    assert [h["question"] for h in out["hops"]] == ["Who made the film?"] and out["signals"]["chain_support"] == 0.0
    assert plans_asked(llm) == 1 and sum(prompt_kind(c) == "mer" for c in llm.calls) == 2
    assert any(n.startswith("kept the first answer: 'David Lynch' (weakest link 0.000)") for n in out["notes"])


def test_a_strong_answer_or_the_switch_off_plans_nothing():
    strong, llm = run(fitting={"David Lynch"})  # the judge passes the first answer: no second decomposition
    assert strong["answer"] == "David Lynch" and not strong.get("replanned") and plans_asked(llm) == 0
    off, llm = run(fitting={"Missoula"}, replan_below=0.0)
    assert off["answer"] == "David Lynch" and not off.get("replanned") and plans_asked(llm) == 0
    unjudged, llm = run(fitting={"Missoula"}, hop_support="off")  # no judge, no weakest link
    assert unjudged["answer"] == "David Lynch" and plans_asked(llm) == 0


def test_replanned_settles_by_the_weakest_link_and_leaves_a_chain_going_on_alone():
    first = {"answer": "A", "judged": {"chain_support": 0.4}, "hops": [{"question": "q"}]}
    start = replanned({"question": "Q"}, first, 0.5)
    assert start["replanned"] == "pending" and start["hops"] == [] and start["first_try"]["answer"] == "A" and start["judged"] == {}
    assert replanned({"question": "Q"}, first, 0.4) == first  # not below
    assert replanned({"question": "Q"}, {"sub_question": "next", "judged": {"chain_support": 0.1}}, 0.5)["sub_question"] == "next"
    waiting = {"replanned": "planning", "first_try": first}
    assert replanned(waiting, {"answer": "B", "judged": {"chain_support": 0.9}}, 0.5)["acted"] == "replanned"
    assert replanned(waiting, {"answer": "B", "judged": {"chain_support": 0.4}}, 0.5)["answer"] == "A"  # a tie: the first
    assert replanned(waiting, {"answer": "B", "judged": {"chain_support": None}}, 0.5)["answer"] == "A"
    assert replanned({"replanned": "done"}, first, 0.5) == first  # once only


def test_the_stream_says_the_question_is_planned_again_and_which_answer_is_kept():
    started = describe_step("check", {"replanned": "pending", "first_try": {"answer": "David Lynch"}}, {})
    assert started.startswith("the answer's weakest link is weak: the question is decomposed again, planned at once (first answer: David Lynch)")
    assert describe_step("check", {"replanned": "done", "acted": "replanned"}, {}) == "of the two decompositions' answers, the planned one is kept"
    assert describe_step("check", {"replanned": "done", "answer": "A"}, {}) == "of the two decompositions' answers, the first is kept: A"


