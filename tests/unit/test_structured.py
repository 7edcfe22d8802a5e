"""Structured output: the schemas and their grammar, the JSON reader and its free-text fall-back
(counted), the parsers of each format, and the graph asking each reply under its schema."""

import json

import pytest

from fakes import MemoryIndex, TableScorer, counted, docs, prompt_kind, question_of, resources, scripted_llm
from scripted import ScriptedLLM
from sunar.graph import VARIANTS, build_graph
from sunar.models.llm_cache import CallCache
from sunar.models.recorded import RecordedLLM
from sunar.prompts import answer, mer, self_ask
from sunar.prompts.structured import as_reply, gbnf, is_json_schema, object_schema, read_object

QUESTION = "Where was the director of film Ronnie Rocket born?"
CORPUS = docs(
    ("d1", "Ronnie Rocket", "Ronnie Rocket is an unfinished film by David Lynch."),
    ("d2", "David Lynch", "David Lynch was born in Missoula, Montana."),
)
ANSWERS = {"Who directed Ronnie Rocket?": "David Lynch", "Where was David Lynch born?": "Missoula, Montana"}


def read_counting(fn):
    """(``fn()``, the parse fall-backs it counted)."""
    result, usage = counted(fn)
    return result, usage["parse_fallbacks"]


# --- schemas and grammar ------------------------------------------------------------------------


def test_object_schema_is_all_required_bounded_strings_and_enums():
    schema = object_schema(step=("a", "b"), text=20)
    assert schema == {
        "type": "object",
        "properties": {"step": {"type": "string", "enum": ["a", "b"]}, "text": {"type": "string", "minLength": 1, "maxLength": 20}},
        "required": ["step", "text"],
        "additionalProperties": False,
    }


def test_grammar_bounds_every_string_and_the_whitespace():
    grammar = gbnf(mer.SCHEMA)
    lines = grammar.splitlines()
    assert lines[0] == 'root ::= "{" space "\\"rationale\\"" space ":" space f0 "," space "\\"answer\\"" space ":" space f1 space "}"'
    assert 'f0 ::= "\\"" char{1,300} "\\""' in lines and 'f1 ::= "\\"" char{1,80} "\\""' in lines
    assert 'space ::= " "?' in lines  # one space at most: no run of whitespace to loop in
    assert "char ::=" in grammar and "\\x00-\\x1F" in grammar  # no raw newline or control character in a string
    assert gbnf(self_ask.SCHEMA) == 'root ::= ("Follow up: " [^\\n]{1,200}) | ("So the final answer is: " [^\\n]{1,80})'


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "items": {"type": "string"}},
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},  # unbounded
        {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
        {"type": "object", "properties": {"a": {"type": "string", "maxLength": 5}}, "required": []},
    ],
)
def test_a_schema_without_a_bounded_grammar_is_refused_not_loosened(schema):
    with pytest.raises(ValueError, match="grammar"):
        gbnf(schema)


def test_a_lines_format_is_no_json_schema():
    assert not is_json_schema(self_ask.SCHEMA) and is_json_schema(answer.SCHEMA) and not is_json_schema(None)


def test_the_worked_examples_are_what_the_grammar_allows():
    """as_reply writes `{"k": "v", ...}`: the fields in order, one space after ':' and ','."""
    assert as_reply(step="follow up", text="Who?") == '{"step": "follow up", "text": "Who?"}'
    assert as_reply(answer="Malmö") == '{"answer": "Malmö"}'


# --- the reader ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "found", "fallbacks"),
    [
        ('{"answer": "Paris"}', {"answer": "Paris"}, 0),
        ('Sure! {"answer": "Paris"} Hope it helps', {"answer": "Paris"}, 0),
        ('{"answer": "Par', {"answer": "Par"}, 1),  # cut by the token limit: salvaged, counted
        ('{"answer": 12}', None, 1),
        ("Paris", None, 1),
        ("", None, 1),
    ],
)
def test_read_object_counts_every_reply_that_is_not_the_object(text, found, fallbacks):
    assert read_counting(lambda: read_object(text, answer.SCHEMA)) == (found, fallbacks)


def test_a_word_outside_the_enum_is_not_the_object():
    schema = object_schema(step=("a", "b"), text=20)
    assert read_counting(lambda: read_object('{"step": "maybe", "text": "x"}', schema)) == (None, 1)


@pytest.mark.parametrize(
    ("text", "fallbacks"),
    [("Follow up: Who is X?", 0), ("So the final answer is: Y", 0), ("**Follow up:** Who is X?", 1), ("Who is X?", 1), ("", 1)],
)
def test_a_self_ask_step_that_is_not_one_of_its_lines_is_a_fall_back(text, fallbacks):
    assert read_counting(lambda: self_ask.parse_self_ask(text))[1] == fallbacks


def test_parse_mer_and_the_short_answers():
    assert mer.parse_mer('{"rationale": "Lynch was born there.", "answer": "Missoula, Montana"}') == ("Lynch was born there.", "Missoula, Montana", True)
    assert mer.parse_mer("[Answer]: r\n[Final Answer]: Rome") == ("r", "Rome", True)
    assert mer.parse_final_only('{"answer": "Oslo."}') == mer.parse_final_only("[Final Answer]: Oslo") == "Oslo"
    assert answer.read_answer('{"answer": "Answer: J. Fife Symington Jr."}') == "J. Fife Symington Jr"
    assert answer.read_answer("Oslo\nbecause ...") == "Oslo"


# --- the graph asks each reply under its schema -------------------------------------------------


def json_llm():
    """A model that replies in the formats asked for, as one decoding under their grammars does."""
    steps = [f"Follow up: {q}" for q in ANSWERS] + ["So the final answer is: Missoula, Montana"]

    def script(prompt, i):
        kind = prompt_kind(prompt)
        if kind == "self_ask":
            return steps[prompt.rsplit("Question:", 1)[1].count("Intermediate answer:")]
        if kind == "mer":
            return as_reply(rationale="Lynch directed it; he was born in Missoula.", answer="Missoula, Montana")
        return "yes" if kind == "nli" else as_reply(answer=ANSWERS.get(question_of(prompt), "Missoula, Montana"))

    return ScriptedLLM(script)


def run(llm, variant="sunar", **config):
    index = MemoryIndex(CORPUS, default_ranking=[("d1", 2.0), ("d2", 1.5)], graph={"d1": ["d2"]})
    res = resources(llm, TableScorer({"d1": 0.9, "d2": 0.8}), index)
    cfg = {"configurable": {"resources": res, "batch_size": 1, "budget": 2, "samples": 2, **config}}
    return build_graph(variant).invoke({"question": QUESTION}, cfg), res


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_reply_is_asked_under_its_formats_schema_and_read_without_fall_back(variant):
    out, res = run(json_llm(), variant)
    llm = res.llm.inner
    assert out["answer"] == "Missoula, Montana" and out["usage"]["parse_fallbacks"] == 0
    kinds = {json.dumps(s, sort_keys=True) for s in llm.schemas}
    assert None not in llm.schemas
    assert kinds == {json.dumps(s, sort_keys=True) for s in (self_ask.SCHEMA, answer.SCHEMA, *([mer.SCHEMA] if VARIANTS[variant].mer else []))}


@pytest.mark.parametrize(("max_tokens", "short_cap"), [(128, answer.SHORT_TOKENS), (20, 20)])
def test_every_short_answer_keeps_its_token_cap_and_only_mer_takes_more(max_tokens, short_cap):
    _, res = run(json_llm(), max_tokens=max_tokens, confidence_samples=2)
    llm = res.llm.inner
    caps = {json.dumps(s, sort_keys=True): set() for s in llm.schemas}
    for schema, cap in zip(llm.schemas, llm.caps, strict=True):
        caps[json.dumps(schema, sort_keys=True)].add(cap)
    assert caps[json.dumps(answer.SCHEMA, sort_keys=True)] == {short_cap}
    assert caps[json.dumps(mer.SCHEMA, sort_keys=True)] == {max_tokens}


def test_structured_output_off_asks_without_schemas_and_reads_the_same():
    out, res = run(json_llm(), structured_output=False)
    assert set(res.llm.inner.schemas) == {None}
    assert out["answer"] == "Missoula, Montana" and out["usage"]["parse_fallbacks"] == 0


def test_free_text_replies_are_read_and_counted_as_fall_backs():
    steps = [f"Follow-up question: {q}" for q in ANSWERS] + ["The final answer is: Missoula, Montana"]
    llm = scripted_llm(lambda p: steps[p.rsplit("Question:", 1)[1].count("Intermediate answer:")], lambda q, i: ANSWERS.get(q, "Missoula, Montana"))
    out, _ = run(llm)
    assert out["answer"] == "Missoula, Montana"
    assert [h["answer"] for h in out["reasoning_path"]] == list(ANSWERS.values())
    assert out["usage"]["parse_fallbacks"] >= 3 + 2  # every Self-Ask step, hop answer, sample, MER ...


def test_the_llm_cache_keeps_calls_with_and_without_a_schema_apart(tmp_path):
    llm = json_llm()
    recorded = RecordedLLM(llm, CallCache(tmp_path / "c.sqlite"))
    messages = answer.answer_messages("Who directed Ronnie Rocket?", [])
    recorded.generate(messages, schema=answer.SCHEMA)
    recorded.generate(messages)
    recorded.generate(messages, schema=answer.SCHEMA)
    assert llm.schemas == [answer.SCHEMA, None]  # the third call came from the cache


@pytest.mark.parametrize(
    ("messages", "schema"),
    [
        (answer.answer_messages("q", []), answer.SCHEMA),
        (mer.mer_messages("q", [], []), mer.SCHEMA),
    ],
)
def test_every_worked_example_is_a_reply_the_grammar_allows(messages, schema):
    turns = [str(m.content) for m in messages if m.type == "ai"]
    assert turns
    for turn in turns:
        found = json.loads(turn)
        assert list(found) == list(schema["properties"]) and read_object(turn, schema) == found
        for name, spec in schema["properties"].items():
            assert found[name] in spec["enum"] if "enum" in spec else 1 <= len(found[name]) <= spec["maxLength"]
