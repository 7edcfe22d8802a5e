"""The hidden-span benchmark (benchmarks/bench_hidden_span.py): a first hop asked from the description the
question hides, copied from its own words under a grammar, against Self-Ask's own first sub-question."""

import json

from benchmarks.bench_hidden_span import MOST_WORDS, ask_both, asked_first, span_messages, spans_of, summary
from sunar.prompts.structured import object_schema, read_object


def test_the_spans_are_the_questions_runs_of_two_words_or_more_without_its_question_mark():
    spans = spans_of("Where was the director of film Ronnie Rocket born?")
    assert spans[:2] == ["Where was", "Where was the"]
    assert "the director of film Ronnie Rocket" in spans and "Rocket born" in spans
    assert all("?" not in s for s in spans) and "Where" not in spans  # one word is no description
    long = " ".join(f"w{i}" for i in range(30))
    assert max(len(s.split()) for s in spans_of(long)) == MOST_WORDS
    assert len(spans_of("a b a b")) == len(set(spans_of("a b a b")))  # each once


def test_the_grammar_admits_only_spans_and_the_prompt_ends_with_the_question():
    schema = object_schema(description=tuple(spans_of("Who is the spouse of the author of Dune?")))
    assert read_object(json.dumps({"description": "the author of Dune"}), schema) == {"description": "the author of Dune"}
    assert schema["properties"]["description"]["enum"].count("the author of Dune") == 1
    assert "Frank Herbert" not in schema["properties"]["description"]["enum"]
    assert span_messages("Who is the spouse of the author of Dune?")[-1].content == "Question: Who is the spouse of the author of Dune?"


def test_a_description_of_a_person_is_asked_with_who_anything_else_with_what():
    assert asked_first("the actress that played Mary Poppins") == "Who is the actress that played Mary Poppins?"
    assert asked_first("Hagar's spouse") == "Who is Hagar's spouse?"
    assert asked_first("the top PC manufacturer from 1994") == "What is the top PC manufacturer from 1994?"


def test_each_way_is_read_and_checked_against_the_first_bridge_then_summed_with_a_sign_test():
    answers = {"Who plays mary poppins in princess diaries?": "Queen Clarisse", "Who is the actress that played mary poppins?": "Julie Andrews"}
    record = {"dataset": "musique", "question": "Who does the actress that played mary poppins play in princess diaries?",
              "reasoning_path": [{"question": "Who plays mary poppins in princess diaries?", "answer": "Queen Clarisse"}]}
    row = ask_both(record, "Julie Andrews", lambda q: "the actress that played mary poppins", answers.__getitem__)
    assert row["asked"] == {"self_ask": "Who plays mary poppins in princess diaries?", "span": "Who is the actress that played mary poppins?"}
    assert row["right"] == {"self_ask": False, "span": True}
    other = {**row, "dataset": "2wiki", "right": {"self_ask": True, "span": True}}
    got = summary([row, row, other])
    assert got["MuSiQue"]["asked"] == 2 and got["MuSiQue"]["span"] == 2 and got["MuSiQue"]["self_ask"] == 0
    assert got["2Wiki"] == {"asked": 1, "self_ask": 1, "span": 1, "span against self_ask": {"n": 1, "wins": 0, "losses": 0, "p": 1.0}}
    assert (got["all"]["span against self_ask"]["wins"], got["all"]["span against self_ask"]["losses"]) == (2, 0)
