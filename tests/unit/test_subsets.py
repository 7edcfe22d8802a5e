"""The questions a fix of the reader can act on, read from a run made without it (benchmarks/subsets.py)."""

import json

import pytest

from benchmarks.subsets import (
    bridge_to_last_can_act,
    hop_limit_can_act,
    main,
    one_answer_can_act,
    page_form_can_act,
    possessive_can_act,
    reading_fixes_can_act,
)
from fakes import MemoryIndex, TableScorer, docs

Q = "Where was the director of Ronnie Rocket born?"


def record(qid, path, notes=(), variant="self_ask", answer="David Lynch"):
    return {"id": qid, "variant": variant, "question": Q, "answer": answer, "notes": list(notes),
            "reasoning_path": [{"question": q, "answer": a} for q, a in path]}


ONE = record("q1", [("Who directed Ronnie Rocket?", "David Lynch")])
TWO = record("q2", [("Who directed Ronnie Rocket?", "David Lynch"), ("Where was David Lynch born?", "Missoula")], answer="Missoula")
WHOLE = record("q3", [(Q, "Missoula")], answer="Missoula")
BRANCHED = record("q4", [("Who directed Ronnie Rocket?", "David Lynch"), ("Where was David Lynch born?", "Missoula")],
                  notes=["2 candidate answers for 'Who directed Ronnie Rocket?': each is followed as a chain"], answer="Missoula")


def test_the_reading_fixes_can_act_where_a_hops_pages_are_named_otherwise_or_its_answer_is_the_examples():
    usb = "What was the object designed to standardize connection of computer peripherals?"
    index = MemoryIndex(docs(("u", "USB", "USB was designed to standardize it."), ("c", "Computer", "A computer."), ("d", "David Lynch", "A director.")),
                        {usb: [("u", 2.0), ("c", 1.0)], "Where was David Lynch born?": [("d", 2.0), ("c", 1.0)]})
    can_act = reading_fixes_can_act(index, TableScorer({"u": 0.9, "c": 0.5, "d": 0.9}))
    assert can_act(record("q1", [(usb, "punched cards")]))  # "computer" named the page Computer before the fix
    assert not can_act(record("q2", [("Where was David Lynch born?", "Missoula")]))  # named the same either way
    assert can_act(record("q3", [("Where was David Lynch born?", "Maeve Brennan-Quinn")]))  # the example's name
    candidates = record("q4", [("Where was David Lynch born?", "Missoula")])
    candidates["reasoning_path"][0]["candidates"] = [{"answer": "Missoula", "share": 0.5}, {"answer": "The Lighthouse Keeper", "share": 0.5}]
    assert can_act(candidates)


def test_the_possessive_fix_can_act_where_a_hop_of_any_chain_reads_other_pages():
    father, born = "Who is Humehume's father?", "Where was Humehume born?"
    index = MemoryIndex(docs(("h", "Humehume", "Humehume was a prince."), ("k", "Kaumualii", "Kaumualii was a king.")),
                        {father: [("k", 2.0), ("h", 1.0)], born: [("h", 2.0), ("k", 1.0)], "Where was Kaumualii born?": [("k", 2.0)]})
    can_act = possessive_can_act(index, TableScorer({"h": 0.9, "k": 0.9}))
    assert can_act(record("q1", [(father, "Kaumualii")]))  # "humehumes" named no page: both were read
    assert not can_act(record("q2", [(born, "Kauai")]))  # no possessive: named the same either way
    other = {**record("q3", [(born, "Kauai")]), "chains": [{"answer": "Kauai", "weight": 0.5, "path": [{"question": born, "answer": "Kauai"}]},
                                                           {"answer": "x", "weight": 0.5, "path": [{"question": father, "answer": "x"}]}]}
    assert can_act(other)  # a chain not shown reads other pages


def test_the_list_rule_can_act_where_an_answer_of_any_chain_lists_names():
    listed = "David Lynch and Mark Frost"
    assert not one_answer_can_act(TWO)
    assert one_answer_can_act({**TWO, "answer": listed})  # the final answer
    assert one_answer_can_act({**TWO, "notes": [f"the judge doubted the final answer '{listed}' (p = 0.30); 'Missoula' answers the question (p = 0.80)"]})
    assert one_answer_can_act(record("q5", [("Who directed Ronnie Rocket?", listed)], answer="Missoula"))  # a hop's
    split = {**TWO["reasoning_path"][0], "candidates": [{"answer": "David Lynch", "share": 0.5}, {"answer": listed, "share": 0.5}]}
    assert one_answer_can_act({**TWO, "reasoning_path": [split, TWO["reasoning_path"][1]]})  # a candidate's
    assert one_answer_can_act({**TWO, "chains": [{"path": [{"question": "Who directed Ronnie Rocket?", "answer": listed}]}]})  # another chain's
    assert not one_answer_can_act({**TWO, "answer": "1898 and 1959"}) and not one_answer_can_act({**TWO, "answer": "Missoula, Montana"})


def test_the_page_form_can_act_where_a_date_or_ordinal_said_is_not_as_it_is_on_the_pages_mer_read():
    index = MemoryIndex(docs(("dl", "David Lynch", "David Lynch was born on January 20, 1946, the third child.")), {})
    can_act = page_form_can_act(index)
    dated = {**TWO, "answer": "20 January 1946", "evidence_ids": ["dl"]}
    assert can_act(dated) and can_act({**dated, "evidence_ids": []})  # its pages written otherwise, or not found again
    assert not can_act({**dated, "answer": "January 20, 1946"})  # on the pages as it is
    assert not can_act({**TWO, "evidence_ids": ["dl"]})  # no date or ordinal
    assert can_act({**TWO, "evidence_ids": ["dl"], "notes": ["the judge doubted the final answer '3rd child' (p = 0.30)"]})  # a doubted one
    assert can_act({**TWO, "chains": [{"path": [{"question": "When was he born?", "answer": "20 January 1946"}]}]})  # another chain's


def test_bridge_to_last_can_act_where_a_final_answer_said_is_a_bridge_of_the_chain_shown():
    assert not bridge_to_last_can_act(TWO)  # ends on its last hop's answer
    assert bridge_to_last_can_act({**TWO, "answer": "David Lynch"})
    assert bridge_to_last_can_act({**TWO, "notes": ["the judge doubted the final answer 'David Lynch' (p = 0.30); 'Missoula' answers the question (p = 0.80)"]})
    assert not bridge_to_last_can_act(ONE)  # one hop: no bridge
    assert not bridge_to_last_can_act(record("q6", [("Who directed Ronnie Rocket?", "David Lynch"), ("Where was he born?", "Missoula")]))  # not named later


def test_the_subset_holds_only_the_questions_the_fix_can_act_on_one_hop_chains_first(tmp_path, capsys):
    listed = "David Lynch and Mark Frost"
    run = tmp_path / "run"
    run.mkdir()
    rows = ({**TWO, "id": "q2", "answer": listed}, {**ONE, "answer": listed}, TWO, {**WHOLE, "variant": "other", "answer": listed})
    (run / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    questions = tmp_path / "dev.jsonl"
    questions.write_text("".join(json.dumps({"id": i, "question": Q}) + "\n" for i in ("q2", "q1", "q3", "q9")))
    main(["one_answer", str(run), "--variant", "self_ask", "--questions", str(questions)])
    out = capsys.readouterr()
    # q2's later record (a resumed run keeps the last) lists no names; q3 is another variant's
    assert [json.loads(line)["id"] for line in out.out.splitlines()] == ["q1"] and "1 questions one_answer can act on" in out.err
    rows = (TWO | {"answer": listed}, ONE | {"answer": listed})
    (run / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    main(["one_answer", str(run), "--variant", "self_ask", "--questions", str(questions)])
    assert [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()] == ["q1", "q2"]  # the one-hop chain first
    with pytest.raises(SystemExit, match="page_form needs --index"):
        main(["page_form", str(run), "--variant", "self_ask", "--questions", str(questions)])


def test_a_larger_hop_limit_can_act_where_a_chain_of_the_trace_reached_it():
    assert hop_limit_can_act({**ONE, "notes": ["hop limit (3) reached; answering from the evidence so far"]})
    assert not hop_limit_can_act({**ONE, "notes": ["Self-Ask answered without a follow-up"]}) and not hop_limit_can_act(ONE)
