"""A switch's run put together from a rerun of the questions it can act on (benchmarks/subsets.py)."""

import json

import pytest

from benchmarks.subsets import (
    branch_support_can_act,
    bridge_to_last_can_act,
    careful_can_act,
    complete,
    final_vote_can_act,
    first_hop_can_act,
    main,
    one_answer_can_act,
    page_form_can_act,
    past_bridge_can_act,
    possessive_can_act,
    reading_fixes_can_act,
    repeat_samples_can_act,
    replayed,
)
from fakes import MemoryIndex, TableScorer, docs, scripted_llm

Q = "Where was the director of Ronnie Rocket born?"


def record(qid, path, notes=(), variant="self_ask", answer="David Lynch"):
    return {"id": qid, "variant": variant, "question": Q, "answer": answer, "notes": list(notes),
            "reasoning_path": [{"question": q, "answer": a} for q, a in path]}


ONE = record("q1", [("Who directed Ronnie Rocket?", "David Lynch")])
TWO = record("q2", [("Who directed Ronnie Rocket?", "David Lynch"), ("Where was David Lynch born?", "Missoula")], answer="Missoula")
WHOLE = record("q3", [(Q, "Missoula")], answer="Missoula")
BRANCHED = record("q4", [("Who directed Ronnie Rocket?", "David Lynch"), ("Where was David Lynch born?", "Missoula")],
                  notes=["2 candidate answers for 'Who directed Ronnie Rocket?': each is followed as a chain"], answer="Missoula")


def test_past_bridge_can_act_on_one_hop_chains_and_first_hops_that_branched():
    assert past_bridge_can_act(ONE) and past_bridge_can_act(BRANCHED)
    assert not past_bridge_can_act(TWO)  # went on after its first hop
    assert not past_bridge_can_act(WHOLE)  # its one hop asked the whole question
    assert not past_bridge_can_act(record("q5", []))


def test_repeat_samples_can_act_where_a_step_repeated_a_follow_up():
    assert repeat_samples_can_act(record("q6", [("Who directed Ronnie Rocket?", "David Lynch")], notes=["Self-Ask repeated a follow-up; asked again and it gave a new step"]))
    assert repeat_samples_can_act(record("q7", [], notes=["Self-Ask repeated a follow-up ('Who directed Ronnie Rocket?'); decomposition stopped"]))
    assert not repeat_samples_can_act(ONE) and not repeat_samples_can_act(BRANCHED)


def test_replayed_takes_the_rerun_where_it_has_one_and_the_first_run_elsewhere():
    again = {**ONE, "variant": "self_ask+past_bridge=true", "answer": "Missoula"}
    out = replayed([ONE, TWO, WHOLE], [again], "self_ask", "self_ask+past_bridge=true", past_bridge_can_act)
    assert [(r["id"], r["answer"], r["variant"]) for r in out] == [
        ("q1", "Missoula", "self_ask+past_bridge=true"), ("q2", "Missoula", "self_ask+past_bridge=true"), ("q3", "Missoula", "self_ask+past_bridge=true")]
    with pytest.raises(ValueError, match="q1 can be changed by the switch but was not run again"):
        replayed([ONE, TWO], [], "self_ask", "self_ask+past_bridge=true", past_bridge_can_act)


def test_the_subset_holds_only_the_questions_the_switch_can_act_on(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (BRANCHED, ONE, TWO, WHOLE)))
    questions = tmp_path / "dev.jsonl"
    questions.write_text("".join(json.dumps({"id": i, "question": Q}) + "\n" for i in ("q4", "q1", "q2", "q3", "q9")))
    main(["past_bridge", str(run), "--variant", "self_ask", "--questions", str(questions)])
    out = capsys.readouterr()
    # the one-hop chain first, then the question whose first hop branched
    assert [json.loads(line)["id"] for line in out.out.splitlines()] == ["q1", "q4"] and "2 questions past_bridge can act on" in out.err


def test_a_rerun_is_complete_when_it_holds_every_question_the_switch_can_act_on_both_ways():
    on = {**ONE, "variant": "self_ask+past_bridge=true"}
    args = ("self_ask", "self_ask+past_bridge=true", past_bridge_can_act)
    assert complete([ONE, TWO], [ONE, on], *args)
    assert not complete([ONE, TWO], [ONE], *args)  # not yet run with the switch on
    assert not complete([ONE, TWO], [ONE, {**on, "variant": "self_ask+end_loops=true"}], *args)  # another switch
    assert complete([TWO, WHOLE], [], *args)  # nothing it can act on


def test_a_rule_without_calls_is_replayed_on_the_stored_records():
    from benchmarks.subsets import final_from_hop, ruled

    path = [{"question": "Who directed Ronnie Rocket?", "answer": "David Lynch", "support": 0.9},
            {"question": "Where was David Lynch born?", "answer": "Missoula, United States", "support": 0.8}]
    rows = [{"id": "q1", "variant": "S", "question": "Where was the director of Ronnie Rocket born?", "answer": "Montana", "reasoning_path": path},
            {"id": "q2", "variant": "S", "question": "Where was the director of Ronnie Rocket born?", "answer": "Missoula", "reasoning_path": path},
            {"id": "q3", "variant": "other", "question": "?", "answer": "x", "reasoning_path": []}]
    got = ruled(rows, "S", "final_from_hop=true", final_from_hop)
    assert [(r["id"], r["variant"], r["answer"]) for r in got] == [
        ("q1", "S+final_from_hop=true", "Missoula"),  # replaced, its country dropped as drop_country does after
        ("q2", "S+final_from_hop=true", "Missoula"),  # it agreed already
    ]
    assert rows[0]["answer"] == "Montana"  # the stored records are left as they are


def test_the_region_rule_keeps_a_places_first_part_only_where_the_question_asks_where():
    from benchmarks.subsets import without_region

    def cut(question, answer):
        return without_region({"question": question, "answer": answer})

    assert cut("Where was the wife of Thomas Forsthoefel born?", "Passaic, New Jersey") == "Passaic"
    assert cut("What is the place of birth of X?", "Tondo, Manila, Philippines") == "Tondo"
    assert cut("Where was X born?", "Passaic") is None  # nothing to cut
    assert cut("When was X born?", "Passaic, New Jersey") is None  # not asked where
    assert cut("Where did X die?", "6 January 1975, Paris") is None  # a date is no place
    assert cut("Who is the father of X?", "Sir Francis Baring, 1st Baronet") is None


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


def chained(answer, chosen, *chains, notes=()):
    done = [{"answer": a, "weight": w, "path": []} for a, w in chains]
    return {**record("q", [("Who directed Ronnie Rocket?", "David Lynch")], notes=notes, answer=answer), "chains": done, "chosen": chosen}


def test_the_careful_reading_can_act_where_a_hop_shown_was_doubted_or_split():
    def judged(support, candidates=()):
        hop = {"question": "Who directed Ronnie Rocket?", "answer": "Mel Brooks", "support": support}
        return {**TWO, "reasoning_path": [{**hop, **({"candidates": list(candidates)} if candidates else {})}, TWO["reasoning_path"][1]]}

    split = [{"answer": "Mel Brooks", "share": 0.75}, {"answer": "David Lynch", "share": 0.25}]
    assert careful_can_act(judged(0.3)) and careful_can_act(judged(0.9, split))
    assert not careful_can_act(judged(0.9)) and not careful_can_act(judged(0.9, split[:1]))
    assert not careful_can_act(TWO)  # never judged (a run without hop_support)
    assert not careful_can_act({**judged(0.2), "reasoning_path": [{"question": "?", "answer": "unknown", "support": 0.2}]})  # names nothing
    assert first_hop_can_act(judged(0.3)) and first_hop_can_act(judged(0.9, split))  # spans_first: the first hop alone
    later = {**TWO, "reasoning_path": [{**TWO["reasoning_path"][0], "support": 0.9}, {**TWO["reasoning_path"][1], "support": 0.2}]}
    assert careful_can_act(later) and not first_hop_can_act(later) and not first_hop_can_act(TWO)


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


def test_the_final_vote_can_act_where_the_final_answer_may_lose_to_the_chains():
    assert not final_vote_can_act(TWO)  # one chain
    assert not final_vote_can_act(chained("Missoula", 0, ("Missoula", 0.67), ("Brooklyn", 0.33)))  # with its chain it outweighs the rest
    assert final_vote_can_act(chained("Boston", 0, ("Brooklyn Nets", 0.5), ("Brooklyn Nets", 0.5)))  # it departed from its chain
    assert final_vote_can_act(chained("Missoula", 0, ("Missoula", 0.3), ("Brooklyn", 0.35), ("Brooklyn", 0.35)))  # its chain weighs too little
    assert final_vote_can_act(chained("Missoula", 0, ("Missoula", 0.67), ("Brooklyn", 0.33), notes=["the judge doubted the final answer 'Paris'"]))


def test_branch_support_can_act_where_the_judge_would_follow_another_candidate_first():
    index = MemoryIndex(docs(("r", "Ronnie Rocket", "Ronnie Rocket is a film by David Lynch, with a part for Mel Brooks.")),
                        {"Who directed Ronnie Rocket?": [("r", 2.0)], "Who wrote Ronnie Rocket?": [("r", 2.0)]})

    def answer(question, i):  # the judge says the page states David Lynch directed it, and no other
        return "yes" if question == "SUPPORT:Who directed Ronnie Rocket? = David Lynch" else "no"

    llm = scripted_llm(lambda prompt: "", answer)
    can_act = branch_support_can_act(index, TableScorer({"r": 0.9}), llm)

    def hop(question, *candidates):
        return {**record("q", [(question, candidates[0][0])]), "reasoning_path": [
            {"question": question, "answer": candidates[0][0], "candidates": [{"answer": a, "share": s} for a, s in candidates]}]}

    assert can_act(hop("Who directed Ronnie Rocket?", ("Mel Brooks", 0.67), ("David Lynch", 0.33)))  # 0 against 0.33
    assert not can_act(hop("Who directed Ronnie Rocket?", ("David Lynch", 0.67), ("Mel Brooks", 0.33)))
    asked = len(llm.judge_calls)
    assert not can_act(hop("Who wrote Ronnie Rocket?", ("David Lynch", 1.0), ("unknown", 0.0)))  # it never branched
    assert llm.judge_calls[asked:] == []
