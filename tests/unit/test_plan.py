"""The planned decomposition (the second decomposition of ``replan_below``): its reader, its examples,
its format's grammar, and the decompose node following a plan, with a scripted LLM."""

import pytest

from fakes import MemoryIndex, TableScorer, docs, resources, scripted_llm
from sunar.graph import describe_step
from sunar.nodes.decompose import decompose
from sunar.prompts.plan import NUDGE, SYSTEM, fill, parse_plan, plan_format, plan_messages, template
from sunar.prompts.self_ask import EXAMPLES
from sunar.prompts.self_ask import SYSTEM as SELF_ASK_SYSTEM
from sunar.prompts.structured import gbnf, is_json_schema
from sunar.usage import node

QUESTION = "Where was the director of Ronnie Rocket born?"
CORPUS = docs(("rr", "Ronnie Rocket", "Ronnie Rocket is an unfinished film by David Lynch."), ("dl", "David Lynch", "David Lynch was born in Missoula."))
RANKINGS = {"Who directed Ronnie Rocket?": [("rr", 3.0)], "Where was David Lynch born?": [("dl", 3.0)]}
ANSWERS = {"Who directed Ronnie Rocket?": "David Lynch", "Where was David Lynch born?": "Missoula"}
GOOD = "1. Who directed Ronnie Rocket?\n2. Where was #1 born?"


@pytest.mark.parametrize(
    ("text", "most", "expected"),
    [
        (GOOD, 4, ["Who directed Ronnie Rocket?", "Where was #1 born?"]),
        ("Step 1: Who directed Ronnie Rocket?\nStep 2) Where was #1 born?", 4, ["Who directed Ronnie Rocket?", "Where was #1 born?"]),
        ("1. A?\n2. B #1?\n3. C #2?", 2, ["A?", "B #1?"]),  # at most ``most``
        ("1. A?\n2. B #2?\n3. C #1?", 4, ["A?"]),  # a step naming its own answer ends the plan
        ("1. A #1?", 4, []),
        ("1. A?\n2. B #0?", 4, ["A?"]),
        ("Sure.\nWho directed Ronnie Rocket?\nWhere was #1 born?", 4, ["Who directed Ronnie Rocket?", "Where was #1 born?"]),  # bare questions
        ("I cannot split this.", 4, []),
        ("", 4, []),
    ],
)
def test_parse_plan(text, most, expected):
    assert parse_plan(text, most) == expected


def test_a_bare_question_plan_counts_as_a_parse_fallback():
    @node("probe")
    def probe(state, config):
        parse_plan("Who directed Ronnie Rocket?", 4)
        parse_plan(GOOD, 4)
        return {}

    assert probe({}, {})["usage"]["parse_fallbacks"] == 1


def test_worked_examples_are_templated_with_the_earlier_answers():
    assert template(EXAMPLES[0][1]) == ["Who directed the film Persona?", "Who is the mother of #1?"]
    # two parallel steps, then one about each answer
    assert template(EXAMPLES[1][1]) == ["Who composed Bolero?", "Who painted Guernica?", "When was #1 born?", "When was #2 born?"]
    # the latest answer a step names is the one it builds on
    assert template([("Who is X?", "Anne"), ("Who is the mother of Anne?", "Anne"), ("Where was Anne born?", "Rome")]) == [
        "Who is X?",
        "Who is the mother of #1?",
        "Where was #2 born?",
    ]


def test_fill():
    assert fill("Where was #1 born, and #2?", ["David Lynch", "1946"]) == "Where was David Lynch born, and 1946?"
    assert fill("Where was #2 born?", ["David Lynch"]) == "Where was #2 born?"  # no such answer yet: left as written


def test_plan_messages_show_each_example_then_the_question():
    demo = ("Who is the father of the author of Q?", [("Who wrote Q?", "Ann Lee"), ("Who is the father of Ann Lee?", "Bo Lee")], "Bo Lee")
    messages = plan_messages(QUESTION, [demo])
    assert messages[0].content == SYSTEM and len(messages) == 1 + 2 * (len(EXAMPLES) + 1) + 1
    assert messages[-3].content.startswith("Question: Who is the father of the author of Q?")
    assert messages[-2].content == "1. Who wrote Q?\n2. Who is the father of #1?"
    assert messages[-1].content.startswith(f"Question: {QUESTION}")


def test_the_plan_format_is_a_grammar_not_a_json_schema():
    schema = plan_format(3)
    assert not is_json_schema(schema)
    assert gbnf(schema) == 'root ::= "1. " line("\\n2. " line("\\n3. " line)?)?\nline ::= [^\\n]{1,150}'


def run(plan, max_hops=4):
    """The planned decomposition of QUESTION (the second one of ``replan_below``), step by step as the
    decompose node gives it, each planned question answered from ANSWERS; ``plan`` (prompt -> reply)
    is the planner. (What it gave: the plan, its hops and notes; the LLM.)"""
    llm = scripted_llm(lambda prompt: "So the final answer is: Helena", lambda question, i: "unknown", plan=plan)
    config = {"configurable": {"resources": resources(llm, TableScorer({}), MemoryIndex(CORPUS, RANKINGS)), "max_hops": max_hops}}
    state = {"question": QUESTION, "hops": [], "plan": [], "replanned": "planning"}
    notes = []
    while True:
        update = decompose(state, config)
        notes += update.get("notes") or []
        state = {**state, "plan": update.get("plan", state["plan"])}
        if not update.get("sub_question"):
            return {"plan": state["plan"], "hops": state["hops"], "notes": notes}, llm
        hop = {"question": update["sub_question"], "answer": ANSWERS.get(update["sub_question"], "unknown")}
        state = {**state, "hops": [*state["hops"], hop]}


def test_the_plan_is_filled_in_hop_by_hop_without_self_ask():
    out, llm = run(lambda prompt: GOOD)
    assert out["plan"] == ["Who directed Ronnie Rocket?", "Where was #1 born?"]
    assert [(h["question"], h["answer"]) for h in out["hops"]] == [("Who directed Ronnie Rocket?", "David Lynch"), ("Where was David Lynch born?", "Missoula")]
    assert sum(c.startswith(SYSTEM) for c in llm.calls) == 1 and not any(c.startswith(SELF_ASK_SYSTEM) for c in llm.calls)
    assert not out["notes"]


def test_a_plan_that_begins_with_the_question_is_asked_for_once_more():
    replies = {False: f"1. {QUESTION}\n2. Where was #1 born?", True: GOOD}
    out, llm = run(lambda prompt: replies[prompt.endswith(NUDGE)])
    assert out["plan"] == ["Who directed Ronnie Rocket?", "Where was #1 born?"] and out["hops"][-1]["answer"] == "Missoula"
    assert sum(c.startswith(SYSTEM) for c in llm.calls) == 2
    assert any("asked again, a new plan" in n for n in out["notes"])


def test_a_plan_asked_again_that_is_no_better_is_kept():
    out, _ = run(lambda prompt: "1. Where was the director of Ronnie Rocket born?\n2. Who directed Ronnie Rocket?")
    assert out["plan"][0] == QUESTION and any("no better plan, so it is kept" in n for n in out["notes"])


def test_a_plan_asked_again_that_copies_a_worked_example_is_not_taken():
    replies = {False: f"1. {QUESTION}\n2. Where was #1 born?", True: "1. Who directed the film Persona?\n2. Who is the mother of #1?"}
    out, _ = run(lambda prompt: replies[prompt.endswith(NUDGE)])
    assert out["plan"] == [QUESTION, "Where was #1 born?"] and any("no better plan, so it is kept" in n for n in out["notes"])


def test_a_broken_plan_asks_the_question_itself():
    out, llm = run(lambda prompt: "I cannot split this.")
    assert out["plan"] == [QUESTION] and [h["question"] for h in out["hops"]] == [QUESTION]
    assert any("the plan broke the format" in n for n in out["notes"])
    assert sum(c.startswith(SYSTEM) for c in llm.calls) == 1


def test_the_hop_limit_bounds_the_plan():
    out, _ = run(lambda prompt: GOOD + "\n3. When was #2 founded?", max_hops=2)
    assert len(out["plan"]) == 2 and len(out["hops"]) == 2


def test_the_stream_shows_the_plan():
    line = describe_step("decompose", {"plan": ["Who directed Ronnie Rocket?", "Where was #1 born?"], "sub_question": "Who directed Ronnie Rocket?"}, {})
    assert line == "plan: Who directed Ronnie Rocket? | Where was #1 born?; follow-up: Who directed Ronnie Rocket?"
