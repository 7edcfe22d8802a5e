"""The kinds of MuSiQue error (benchmarks/musique_errors.py) on hand-made 2-hop records: one record per
kind, the rules taken in their order where a record meets several, and the table counting them."""

import json
from dataclasses import replace

import pytest

from benchmarks.musique_errors import KINDS, analyse, bridge_found, classify, whole_question
from sunar.evals.data import Question

QUESTION = Question(
    "2hop__1_2", "musique", "Who was the spouse of the actor who played Scarlett in Gone With the Wind?", ["Laurence Olivier"],
    ["p1", "p2"], [("who played scarlett in gone with the wind", "Vivien Leigh", "p1"), ("Vivien Leigh >> spouse", "Laurence Olivier", "p2")],
)
FIRST = "Who played Scarlett in Gone With the Wind?"
BOTH = {"p1", "p2"}
RIGHT = replace(QUESTION, id="2hop__5_6")


def record(*hops, answer="Lady Olivier"):
    """A wrong answer's record: its hops as (sub-question, answer) pairs and its final answer."""
    return {"id": QUESTION.id, "dataset": "musique", "variant": "sunar", "question": QUESTION.question, "gold": QUESTION.answers,
            "answer": answer, "reasoning_path": [{"question": q, "answer": a} for q, a in hops], "metrics": {"cover_em": 0.0}}


@pytest.mark.parametrize(("hops", "retrieved", "kind"), [
    ((), BOTH, "no chain"),
    (((QUESTION.question, "Clark Gable"),), BOTH, "no chain"),  # the question again
    ((("Who is the spouse of the actor playing Scarlett in Gone With the Wind?", "Clark Gable"),), BOTH, "no chain"),  # hop 2 folded in
    ((("Who directed Gone With the Wind?", "Victor Fleming"),), BOTH, "first sub-question asks something else"),
    (((FIRST, "Olivia de Havilland"),), {"p2"}, "first hop wrong, its page not retrieved"),
    (((FIRST, "Olivia de Havilland"),), BOTH, "first hop misread"),
    (((FIRST, "Vivien Leigh"),), BOTH, "one hop only"),
    (((FIRST, "Vivien Leigh"), ("Who was the spouse of the actor?", "Clark Gable")), BOTH, "second sub-question drops the context"),
    (((FIRST, "Vivien Leigh"), ("Where was Vivien Leigh born?", "Darjeeling")), BOTH, "second sub-question drops the context"),
    (((FIRST, "Vivien Leigh"), ("Who was Vivien Leigh's spouse?", "Lady Olivier")), {"p1"}, "second hop's page not retrieved"),
    (((FIRST, "Vivien Leigh"), ("Who was Vivien Leigh's spouse?", "Lady Olivier")), BOTH, "second hop misread"),
    (((FIRST, "Vivien Leigh"), ("Who was Vivien Leigh's spouse?", "Laurence Olivier")), BOTH, "final step lost a right last hop"),
])
def test_each_kind(hops, retrieved, kind):
    assert classify(record(*hops), QUESTION, retrieved) == kind


def test_a_right_hop_overwritten_by_a_detour_is_lost_by_the_final_step():
    hops = ((FIRST, "Vivien Leigh"), ("Who was Vivien Leigh's spouse?", "Laurence Olivier"), (FIRST, "Vivien Leigh"))
    assert classify(record(*hops, answer="Vivien Leigh"), QUESTION, BOTH) == "final step lost a right last hop"


def test_a_right_answer_is_no_kind_of_error():
    hops = ((FIRST, "Vivien Leigh"), ("Who was Vivien Leigh's spouse?", "Laurence Olivier"))
    assert classify(record(*hops, answer="Laurence Olivier"), QUESTION, BOTH) == "other"


@pytest.mark.parametrize(("hops", "retrieved", "kind"), [
    # the whole question again, its pages not retrieved: no chain, before the first hop's page
    (((QUESTION.question, "Clark Gable"),), set(), "no chain"),
    # a first sub-question that asks something else, its page not retrieved: the question is blamed
    ((("Who directed Gone With the Wind?", "Victor Fleming"),), set(), "first sub-question asks something else"),
    # one hop only, the second page not retrieved either: the chain stopped first
    (((FIRST, "Vivien Leigh"),), {"p1"}, "one hop only"),
    # the second sub-question drops the bridge and its page is not retrieved: the question is blamed
    (((FIRST, "Vivien Leigh"), ("Who was the spouse of the actor?", "Clark Gable")), {"p1"}, "second sub-question drops the context"),
    # the second page not retrieved and the last hop wrong: retrieval before reading
    (((FIRST, "Vivien Leigh"), ("Who was Vivien Leigh's spouse?", "Clark Gable")), {"p1"}, "second hop's page not retrieved"),
])
def test_the_rules_are_taken_in_order(hops, retrieved, kind):
    assert classify(record(*hops), QUESTION, retrieved) == kind


def test_a_first_step_sharing_the_relation_of_the_second_is_not_the_whole_question():
    father = Question("2hop__3_4", "musique", "Who is the father of Edward Baring's father?", ["John Baring"], ["a", "b"],
                      [("Edward Baring >> father", "Francis Baring", "a"), ("Francis Baring >> father", "John Baring", "b")])
    assert not whole_question("Who is Edward Baring's father?", father)
    assert whole_question("Who is the father of Edward Baring's father?", father)


def test_the_bridge_is_found_by_cover_match_or_its_initials():
    assert bridge_found("the University of Zurich", "University of Zurich")
    assert bridge_found("IOC", "International Olympic Committee")
    assert not bridge_found("Ibn Sina", "Avicenna")
    assert not bridge_found("University", "University of Zurich")


def test_the_table_counts_each_graph_and_run(tmp_path):
    """Self-Ask and S's variant in each run, their wrong answers only (another variant and a right answer are left out)."""
    runs = []
    for label, variant in (("dev 1-100", "sunar+x"), ("101-217", "sunar")):
        folder = tmp_path / label.replace(" ", "")
        folder.mkdir()
        rows = [
            {**record((FIRST, "Vivien Leigh")), "variant": "self_ask", "evidence_ids": ["p1"]},
            {**record((FIRST, "Vivien Leigh"), ("Who was Vivien Leigh's spouse?", "Lady Olivier")), "variant": variant, "evidence_ids": ["p1", "p2"]},
            {**record(), "variant": "sunar" if variant != "sunar" else "ignored", "evidence_ids": []},  # not a column
            {**record((FIRST, "Vivien Leigh"), answer="Laurence Olivier"), "id": RIGHT.id, "variant": variant, "metrics": {"cover_em": 1.0}},
        ]
        (folder / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        runs.append((label, folder, variant))
    pages = {"p1": "Vivien Leigh played Scarlett O'Hara.", "p2": "Vivien Leigh was married to Laurence Olivier."}
    out = analyse(runs, {QUESTION.id: QUESTION, RIGHT.id: RIGHT}, pages)
    lines = out.splitlines()
    assert lines[0] == ("| kind | Self-Ask dev 1-100 | Self-Ask 101-217 | S dev 1-100 | S 101-217 | total S | total Self-Ask"
                        " | S: gold in no retrieved page |")
    assert "| one hop only | 1 | 1 | 0 | 0 | 0 | 2 | 0 |" in lines
    assert "| second hop misread | 0 | 0 | 1 | 1 | 2 | 0 | 0 |" in lines
    assert "| **wrong answers** | 1 | 1 | 1 | 1 | 2 | 2 |  |" in lines
    assert "| gold answer in no retrieved page | 1 | 1 | 0 | 0 | 0 | 2 |  |" in lines
    assert sum(line.startswith(f"| {kind} |") for kind in KINDS for line in lines) == len(KINDS)
    assert "- second hop misread: `2hop__1_2` 'Lady Olivier'" in out


def test_a_missed_second_page_is_ranked_among_the_first_pages_neighbours(tmp_path):
    from benchmarks.musique_errors import second_pages

    other = replace(QUESTION, id="2hop__7_8", sub_questions=[(FIRST, "Vivien Leigh", "p3"), ("Vivien Leigh >> spouse", "Laurence Olivier", "p4")])
    rows = [
        {**record((FIRST, "Vivien Leigh")), "variant": "self_ask", "evidence_ids": ["p1"]},  # one hop: no second question
        {**record((FIRST, "Vivien Leigh"), ("Who was Vivien Leigh's spouse?", "Lady Olivier")), "variant": "sunar", "evidence_ids": ["p1"]},
        {**record((FIRST, "Vivien Leigh"), ("Who was Vivien Leigh's spouse?", "Lady Olivier")), "id": other.id, "variant": "sunar", "evidence_ids": ["p3"]},
        {**record((FIRST, "Olivia de Havilland")), "id": RIGHT.id, "variant": "sunar", "evidence_ids": []},  # the bridge missed: not counted
    ]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    graph = {"p1": [("x", 0.9), ("p2", 0.8)], "p2": [], "p3": [(f"d{i}", 0.5) for i in range(20)] + [("p4", 0.1)], "p4": []}
    pages = {"p1": "Vivien Leigh, later the wife of Laurence Olivier, played Scarlett.", "p2": "Laurence Olivier married Vivien Leigh.",
             "p4": "Laurence Olivier was an actor."}
    titles = {"p1": "Vivien Leigh", "p2": "Laurence Olivier", "p4": "Laurence Olivier (actor)"}
    out = second_pages([("dev", tmp_path, "sunar")], {q.id: q for q in (QUESTION, other, RIGHT)}, lambda d: graph.get(d, []), pages, near=8,
                       titles=titles)
    assert "| within the 8 nearest (a NAR batch) | 1 |" in out  # p2 is p1's second neighbour
    assert "| within the graph's neighbours, further | 1 |" in out  # p4 is p3's 21st
    assert "| **questions** | 2 |" in out and "| of which a second sub-question was asked | 2 |" in out
    assert "| of which the second page names the bridge | 1 |" in out
    assert "| of which the pages naming the bridge are at most 8 (a NAR batch) | 1 |" in out  # p1 and p2; p4 names no Vivien Leigh
    assert "| of which the first page names the second's title (a graph of links) | 1 |" in out  # p1 names Laurence Olivier
    assert "graph of links" not in second_pages([("dev", tmp_path, "sunar")], {QUESTION.id: QUESTION}, lambda d: graph.get(d, []), pages)


def test_the_command_reads_another_questions_file_and_several_corpus_files(tmp_path, capsys):
    from benchmarks.musique_errors import main

    data = tmp_path / "data"
    data.mkdir()
    steps = [{"question": "Gone With the Wind >> Scarlett", "answer": "Vivien Leigh", "support_id": "p1"},
             {"question": "Who was #1's spouse?", "answer": "Laurence Olivier", "support_id": "p2"}]
    (data / "dev2.jsonl").write_text(json.dumps({"id": QUESTION.id, "dataset": "musique", "type": "compositional", "question": QUESTION.question,
                                                 "answers": QUESTION.answers, "supporting_ids": ["p1", "p2"], "decomposition": steps}) + "\n")
    (data / "a.jsonl").write_text(json.dumps({"id": "p1", "title": "Vivien Leigh", "text": "She played Scarlett."}) + "\n")
    (data / "b.jsonl").write_text(json.dumps({"id": "p2", "title": "Laurence Olivier", "text": "He married Vivien Leigh."}) + "\n")
    run = tmp_path / "run"
    run.mkdir()
    (run / "predictions.jsonl").write_text(json.dumps({**record((FIRST, "Vivien Leigh")), "variant": "sunar", "evidence_ids": ["p1", "p2"]}) + "\n")
    main(["--data", str(data), "--questions", "dev2.jsonl", "--corpus", "a.jsonl", "--corpus", "b.jsonl", "--run", "dev2", str(run), "sunar"])
    out = capsys.readouterr().out
    assert "| one hop only | 0 | 1 | 1 | 0 | 0 |" in out  # S's one wrong answer; its gold page is in b.jsonl, retrieved
