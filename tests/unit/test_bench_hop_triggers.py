"""The hop-triggers benchmark (benchmarks/bench_hop_triggers.py): a run's recorded hops read again from
their pages cut short and reversed, and which hops each trigger marks, wrong and right."""

from types import SimpleNamespace

from benchmarks.bench_hop_triggers import TRIGGERS, marked, read_hop, read_record, split_samples, summary
from sunar.configuration import Configuration
from sunar.prompts.answer import answer_messages
from sunar.sentences import cut_to_sentences
from tests.fakes import ScriptedLLM
from tests.unit.test_bench_reading_demos import CORPUS
from tests.unit.test_focus import overlap

PAGES = [{"id": i, **CORPUS[i]} for i in ("p3", "p2", "p4")]  # Eraserhead, David Lynch, Kalmar


def reader(asked):
    """Reads "Missoula, Montana" only when David Lynch's page comes first."""

    def script(prompt, i):
        if "Proposed answer:" in prompt:  # the support judge: only Missoula is stated
            return "yes" if prompt.rsplit("Proposed answer: ", 1)[1].startswith("Missoula, Montana") else "no"
        asked.append(prompt)
        first = prompt.rsplit("\n[1] ", 1)[-1]  # the last message's pages (the worked example has its own)
        return '{"answer": "Missoula, Montana"}' if first.startswith("David Lynch:") else '{"answer": "Eraserhead"}'

    return ScriptedLLM(script)


def test_a_hop_is_read_once_more_from_its_pages_cut_short_and_reversed():
    asked = []
    res = SimpleNamespace(llm=reader(asked), scorer=SimpleNamespace(score=overlap))
    cfg = Configuration(hop_sentences=2)
    hop = {"question": "Where was David Lynch born?", "answer": "Eraserhead", "support": 0.9, "candidates": [{"answer": "Eraserhead", "share": 1.0}]}
    got = read_hop(hop, PAGES, res, cfg, lambda q, a, b: a != b)
    shortened = cut_to_sentences(hop["question"], PAGES, overlap, 2)
    assert [p["title"] for p in shortened] == ["Eraserhead", "David Lynch"]  # Kalmar shares no word with the question
    assert len(asked) == 1 and asked[0].endswith(answer_messages(hop["question"], shortened[::-1])[-1].content)  # one reading, reversed
    assert got["cut"] == "Missoula, Montana" and got["disagrees"] is True and got["split"] is False and got["support"] == 0.9
    assert got["cut_support"] is not None and got["cut_support"] > 0.5  # judged where it disagrees
    again = read_hop({**hop, "answer": "Missoula, Montana"}, PAGES, res, cfg, lambda q, a, b: a != b)
    assert again["disagrees"] is False and "cut_support" not in again


def test_the_samples_split_when_two_sets_name_something():
    assert split_samples({"candidates": [{"answer": "Paris", "share": 0.5}, {"answer": "Rome", "share": 0.5}]})
    assert not split_samples({"candidates": [{"answer": "Paris", "share": 0.5}, {"answer": "unknown", "share": 0.5}]})
    assert not split_samples({})


def test_a_record_s_hops_are_each_read_and_its_first_bridge_looked_for_on_its_pages():
    found = []

    def find(question):
        found.append(question)
        return PAGES

    record = {"id": "m", "question": "Where was the director of Eraserhead born?", "metrics": {"cover_em": 0.0}, "gold": ["Missoula"],
              "reasoning_path": [{"question": "Who directed Eraserhead?", "answer": "Kalmar", "support": 0.4},
                                 {"question": "Where was Kalmar born?", "answer": "Sweden", "support": 0.8}]}
    row = read_record(record, "David Lynch", find, lambda hop, pages: {"question": hop["question"], "cut": "David Lynch"})
    assert found == ["Who directed Eraserhead?", "Where was Kalmar born?"] and len(row["hops"]) == 2
    assert row["first_right"] is False and row["right"] is False and row["golds"] == ["Missoula"]
    assert row["bridge_on_pages"] == {"a title": True, "in a text": True}
    absent = read_record(record, "Alan Splet", find, lambda hop, pages: {})
    assert absent["bridge_on_pages"] == {"a title": False, "in a text": False}


def hop(support=0.9, split=False, disagrees=False, cut="x", seconds=5.0):
    return {"question": "Who directed Ronnie Rocket?", "answer": "x", "support": support, "split": split, "disagrees": disagrees, "cut": cut, "seconds": seconds}


def test_each_trigger_counts_the_hops_it_marks_wrong_and_right():
    rows = [
        {"first_right": False, "right": False, "first_step": "Avon", "bridge_on_pages": {"a title": True, "in a text": True},
         "hops": [hop(disagrees=True, cut="Avon"), hop()]},  # a wrong bridge the cut reading marks (and reads right)
        {"first_right": False, "right": False, "first_step": "B", "bridge_on_pages": {"a title": False, "in a text": True},
         "hops": [hop(support=0.2)]},  # one the judge marks
        {"first_right": True, "right": True, "first_step": "C", "bridge_on_pages": {}, "hops": [hop(split=True), hop(disagrees=True)]},
        {"first_right": True, "right": False, "first_step": "D", "bridge_on_pages": {}, "hops": [hop(), hop(), hop(seconds=7.0)]},
        {"first_right": None, "right": False, "first_step": "E", "bridge_on_pages": {}, "hops": [hop(disagrees=True)]},  # not judged
    ]
    got = summary(rows)
    first = got["first hops (labelled by the first step)"]
    assert (first["hops"], first["wrong"]) == (4, 2)
    assert first["the cut reading disagrees"] == {"wrong": 1, "right": 0}
    assert first["the judge doubts it (P(yes) < 0.5)"] == {"wrong": 1, "right": 0}
    assert first["its samples split"] == {"wrong": 0, "right": 1}
    assert first["judge or samples (`escalate_uncertain` today)"] == {"wrong": 1, "right": 1}
    assert first["judge, samples or cut reading"] == {"wrong": 2, "right": 1}
    later = got["later hops after a right first bridge (labelled by the answer)"]
    assert (later["hops"], later["wrong"]) == (3, 2) and later["the cut reading disagrees"] == {"wrong": 0, "right": 1}
    assert got["wrong first bridges: the first step on their pages"] == {"a title": 1, "in a text": 2}
    assert got["wrong first bridges: the cut reading holds the first step"] == 1
    assert got["median seconds of a cut reading"] == 5.0 and got["questions"] == 5
    assert set(first) == {"hops", "wrong", *TRIGGERS}
    assert marked([], lambda r: [])["hops"] == 0


def test_the_stored_summary_is_a_table_of_first_and_later_hops(tmp_path):
    import json

    from benchmarks.results_stored import hop_triggers_table

    rows = [{"first_right": False, "right": False, "first_step": "A", "bridge_on_pages": {}, "hops": [hop(disagrees=True), hop(split=True)]},
            {"first_right": True, "right": True, "first_step": "C", "bridge_on_pages": {}, "hops": [hop(support=0.1), hop()]}]
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"summary": summary(rows)}))
    lines = hop_triggers_table(path).splitlines()
    assert lines[0].startswith("| hops | n | the judge doubts it (P(yes) < 0.5): marks wrong / right |") and len(lines) == 4
    assert lines[2] == "| first hops | 2 (1 wrong bridge / 1 right bridge) | 0 / 1 | 0 / 0 | 1 / 0 | 0 / 1 | 1 / 1 | 1 / 1 |"
    assert lines[3] == "| later hops after a right first bridge | 1 (0 answer wrong / 1 answer right) | 0 / 0 | 0 / 0 | 0 / 0 | 0 / 0 | 0 / 0 | 0 / 0 |"


def test_a_cut_reading_judged_better_supported_is_counted_by_what_it_would_take():
    from benchmarks.bench_hop_triggers import POLICIES, step_gold, switches

    rows = [
        {"first_step": "Philip Braham", "golds": ["London"], "hops": [  # a doubted first hop: the cut reading takes the right bridge
            {**hop(support=0.1, disagrees=True, cut="Philip Braham"), "answer": "Django Reinhardt", "cut_support": 0.6},
            {**hop(support=0.9, disagrees=True, cut="Paris"), "answer": "London", "cut_support": 0.95}]},  # a last hop: right for wrong lost
        {"first_step": "Julie Andrews", "golds": ["x"], "hops": [
            {**hop(support=0.7, disagrees=True, cut="Emily Blunt"), "answer": "Julie Andrews", "cut_support": 0.5},  # judged worse: kept
            {**hop(support=0.6, disagrees=True, cut="B"), "answer": "A", "cut_support": 0.8},  # a hop between: no step
            {**hop(support=0.6), "answer": "x"}]},
    ]
    assert step_gold(rows[1], 0) == ["Julie Andrews"] and step_gold(rows[1], 1) is None and step_gold(rows[1], 2) == ["x"]
    got = switches(rows)
    assert set(got) == set(POLICIES)
    every = got["every hop"]
    assert (every["read"], every["taken"], every["right for wrong"], every["wrong for right"], every["no step"]) == (5, 3, 1, 1, 1)
    assert got["a first hop"] == {"read": 2, "taken": 1, "right for wrong": 1, "wrong for right": 0, "neither right": 0, "both right": 0, "no step": 0}
    assert got["a doubted or split hop"]["taken"] == 1 and got["a doubted or split first hop"]["read"] == 1


def test_the_stored_switches_are_a_table_per_set_of_hops(tmp_path):
    import json

    from benchmarks.bench_hop_triggers import switches
    from benchmarks.results_stored import hop_cut_table

    rows = [{"first_step": "Philip Braham", "golds": ["London"], "hops": [
        {**hop(support=0.1, disagrees=True, cut="Philip Braham"), "answer": "Django Reinhardt", "cut_support": 0.6}]}]
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"summary": {"the cut reading taken where it is judged better supported": switches(rows)}}))
    lines = hop_cut_table(path).splitlines()
    assert len(lines) == 6 and lines[2] == "| every hop | 1 | 1 | 1 | 0 | 0 | 0 | 0 |"
