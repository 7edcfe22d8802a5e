"""Structured output on the real embedded model: every format's reply, decoded under its grammar,
is what its reader wants (Self-Ask's line, a JSON object), within its length bounds, even when the
prompt begs for something else; without the grammar the same model breaks the format."""

import json

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from sunar.models.providers import make_llm
from sunar.prompts import answer, mer, self_ask
from sunar.prompts.structured import read_object

DOCS = [
    {"title": "Ronnie Rocket", "text": "Ronnie Rocket is an unfinished film project written by David Lynch."},
    {"title": "David Lynch", "text": "David Lynch was an American filmmaker, born in Missoula, Montana, in 1946."},
]
QUESTION = "Where was the director of film Ronnie Rocket born?"
#: A prompt that asks for anything but a short JSON answer.
ESSAY = [SystemMessage("You are a novelist."), HumanMessage("Write a long story, at least 500 words, about Paris, in plain prose with many paragraphs.")]


@pytest.fixture(scope="module")
def llm():
    return make_llm("embedded:qwen2.5-1.5b")


def lengths_within(found: dict, schema: dict) -> bool:
    return all(1 <= len(found[k]) <= spec["maxLength"] for k, spec in schema["properties"].items() if "maxLength" in spec)


@pytest.mark.slow
def test_each_format_under_its_grammar_is_its_object(llm):
    for path in ([], [("Who directed Ronnie Rocket?", "David Lynch")]):  # Self-Ask's own lines, under their grammar
        reply = str(llm.generate(self_ask.self_ask_messages(QUESTION, path), max_tokens=128, schema=self_ask.SCHEMA).content)
        assert "\n" not in reply and any(reply.startswith(start) for start, _ in self_ask.SCHEMA["x-lines"]), reply
    cases = [
        (answer.answer_messages("Who directed Ronnie Rocket?", DOCS), answer.SCHEMA, 48),
        (mer.mer_messages(QUESTION, [("Who directed Ronnie Rocket?", "David Lynch")], DOCS), mer.SCHEMA, 128),
    ]
    for messages, schema, limit in cases:
        reply = str(llm.generate(messages, max_tokens=limit, schema=schema).content)
        found = json.loads(reply)  # the whole reply is the object, nothing around it
        assert read_object(reply, schema) == found and lengths_within(found, schema), reply
    step = self_ask.parse_self_ask(str(llm.generate(self_ask.self_ask_messages(QUESTION, []), max_tokens=128, schema=self_ask.SCHEMA).content))
    assert step[0] == "follow_up" and "Ronnie Rocket" in step[1]


@pytest.mark.slow
def test_the_grammar_holds_against_a_prompt_that_asks_for_prose(llm):
    free = str(llm.generate(ESSAY, max_tokens=40).content)
    assert not free.lstrip().startswith("{")  # the model alone writes prose
    for sample in llm.sample(ESSAY, 2, temperature=1.0, max_tokens=40, schema=answer.SCHEMA):
        found = json.loads(str(sample.content))
        assert set(found) == {"answer"} and lengths_within(found, answer.SCHEMA)

