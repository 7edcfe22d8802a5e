"""The reading-demonstrations benchmark (benchmarks/bench_reading_demos.py): each dev question's last
gold step read from its gold page among distractors, with and without worked readings of similar steps."""

from langchain_core.messages import AIMessage, HumanMessage

from benchmarks.bench_reading_demos import (
    WAYS,
    demonstrations,
    messages,
    page_of,
    pages_for,
    read_both,
    steps_of,
    summary,
)
from sunar.prompts.answer import answer_messages

CORPUS = {
    "p1": {"title": "Ronnie Rocket", "text": "Ronnie Rocket is a film by David Lynch."},
    "p2": {"title": "David Lynch", "text": "David Lynch was born in Missoula, Montana."},
    "p3": {"title": "Eraserhead", "text": "Eraserhead is a film by David Lynch."},
    "p4": {"title": "Kalmar", "text": "Kalmar is a city."},
    "q1": {"title": "The Hateful Eight", "text": "The Hateful Eight is a film by Quentin Tarantino."},
    "q2": {"title": "Quentin Tarantino", "text": "Quentin Tarantino was born in Knoxville, Tennessee."},
}
MUSIQUE = {"id": "m", "question": "Where was the director of Ronnie Rocket born?", "answers": ["Missoula", "Missoula, Montana"],
           "supporting_ids": ["p1", "p2"], "pool_ids": ["p1", "p2", "p3", "p4"],
           "decomposition": [{"question": "Who directed Ronnie Rocket?", "answer": "David Lynch", "support_id": "p1"},
                             {"question": "Where was #1 born?", "answer": "Missoula", "support_id": "p2"}]}
WIKI = {"id": "w", "question": "Where was the director of film The Hateful Eight born?", "answers": ["Knoxville"],
        "supporting_ids": ["q2", "q1"], "pool_ids": ["q1", "q2", "p4"],
        "evidence_triples": [["The Hateful Eight", "director", "Quentin Tarantino"], ["Quentin Tarantino", "place of birth", "Knoxville"]]}
POOL = [(MUSIQUE["question"], [("Who directed Ronnie Rocket?", "David Lynch"), ("Where was David Lynch born?", "Missoula")], "Missoula"),
        (WIKI["question"], [("Who directed The Hateful Eight?", "Quentin Tarantino"), ("Where was Quentin Tarantino born?", "Knoxville")], "Knoxville")]  # as load_pool reads them
TITLES = {i: d["title"] for i, d in CORPUS.items()}


def steps():
    return steps_of(POOL, {r["question"]: r for r in (MUSIQUE, WIKI)}, TITLES)


def test_a_step_s_gold_page_is_musiques_support_or_the_2wiki_page_titled_by_its_subject():
    assert [page_of(MUSIQUE, k, TITLES) for k in (0, 1)] == ["p1", "p2"]
    assert [page_of(WIKI, k, TITLES) for k in (0, 1)] == ["q1", "q2"]  # by title, not by the supporting order
    got = steps()
    assert [(s["id"], s["page"], s["last"]) for s in got] == [("m", "p1", False), ("m", "p2", True), ("w", "q1", False), ("w", "q2", True)]
    assert got[1]["golds"] == MUSIQUE["answers"] and got[0]["golds"] == ["David Lynch"]  # the last step is graded by the question's answers


def test_the_gold_page_is_read_among_distractors_of_its_own_pool():
    pages = pages_for(steps()[1], CORPUS)
    assert sorted(p["title"] for p in pages) == ["David Lynch", "Eraserhead", "Kalmar"]  # not the other gold page
    assert pages == pages_for(steps()[1], CORPUS)  # the same place each time


def test_demonstrations_never_come_from_a_question_sharing_a_gold_page():
    all_steps = steps()
    shown = demonstrations(all_steps[1], all_steps, 2)
    assert [d["question"] for d in shown] == ["Who directed The Hateful Eight?", "Where was Quentin Tarantino born?"]  # closest last
    sibling = {**all_steps[2], "supporting": ["p2"]}  # another question over the same bridge page
    assert demonstrations(all_steps[1], [*all_steps, sibling], 3)[-1]["question"] == "Where was Quentin Tarantino born?"
    assert sibling not in demonstrations(all_steps[1], [*all_steps, sibling], 5)


def test_the_demonstrations_are_worked_turns_just_before_the_question():
    step, pages = steps()[1], pages_for(steps()[1], CORPUS)
    demo = steps()[3]
    plain, shown = messages(step, pages, [], CORPUS), messages(step, pages, [demo], CORPUS)
    assert plain == answer_messages(step["question"], pages)
    assert shown[:-3] == plain[:-1] and shown[-1] == plain[-1]
    assert isinstance(shown[-3], HumanMessage) and "Quentin Tarantino was born in Knoxville" in shown[-3].content
    assert isinstance(shown[-2], AIMessage) and '"Knoxville"' in shown[-2].content


def test_each_way_is_graded_and_the_demonstrations_counted_against_the_product():
    def ask(prompt):  # answers the city with demonstrations, the city and state without
        return "Missoula" if len(prompt) > len(answer_messages("x", [])) else "Missoula, Montana, USA"

    all_steps = steps()
    row = read_both(all_steps[1], all_steps, CORPUS, 2, ask)
    assert row["answers"] == {WAYS[0]: "Missoula, Montana, USA", WAYS[1]: "Missoula"}
    assert row["cover_em"] == {WAYS[0]: True, WAYS[1]: True} and row["em"] == {WAYS[0]: False, WAYS[1]: True}
    worse = {**row, "cover_em": {WAYS[0]: True, WAYS[1]: False}, "em": {WAYS[0]: True, WAYS[1]: False}}
    got = summary([row, row, worse])
    assert got["em"]["right"] == {WAYS[0]: 1, WAYS[1]: 2} and (got["em"]["wins"], got["em"]["losses"]) == (2, 1)
    assert got["cover_em"]["right"] == {WAYS[0]: 3, WAYS[1]: 2} and (got["cover_em"]["wins"], got["cover_em"]["losses"]) == (0, 1)


def test_the_data_files_are_read_line_by_line_skipping_blank_ones(tmp_path):
    from benchmarks.bench_reading_demos import records

    (tmp_path / "dev.jsonl").write_text('{"id": "m"}\n\n{"id": "w"}\n')
    assert records(tmp_path / "dev.jsonl") == [{"id": "m"}, {"id": "w"}]
