"""The reading-sentences benchmark (benchmarks/bench_reading_sentences.py): each dev question's gold steps
read whole and from their pages cut to the most relevant sentences, in three orders, whether the cut
orders mark a misread step and what a read costs."""

from benchmarks.bench_reading_sentences import SIGNALS, WAYS, WHOLE, read_ways, summary
from sunar.prompts.answer import answer_messages
from sunar.sentences import cut_to_sentences
from tests.unit.test_bench_reading_demos import CORPUS, steps
from tests.unit.test_focus import overlap


def test_a_step_is_read_whole_and_cut_in_three_orders_with_both_signals():
    asked = []

    def ask(prompt):  # reads right only when David Lynch's page comes first
        asked.append(prompt)
        first = prompt[-1].content.split("\n")[1]
        return "Missoula, Montana" if first.startswith("[1] David Lynch:") else "Eraserhead"

    step = steps()[1]  # "Where was David Lynch born?" from p2 among p3 and p4
    row = read_ways(step, CORPUS, ask, overlap, 2)
    shortened = cut_to_sentences(step["question"], [CORPUS[i] for i in ("p3", "p4", "p2")], overlap, 2)
    assert [p["title"] for p in shortened] == ["Eraserhead", "David Lynch"]  # Kalmar shares no word
    assert asked[0] == answer_messages(step["question"], [CORPUS[i] for i in ("p3", "p4", "p2")])  # the whole pages first
    assert asked[1] == answer_messages(step["question"], shortened) and asked[2] == answer_messages(step["question"], shortened[::-1])
    assert [row["answers"][w] for w in WAYS] == ["Eraserhead", "Eraserhead", "Missoula, Montana", "Eraserhead"]
    assert row["split"] == {name: True for name in SIGNALS}
    assert row["answers"]["vote of whole and two cut orders"] == "Eraserhead"  # one order of three read right
    assert row["cover_em"][WAYS[2]] is True and row["cover_em"][WHOLE] is False and row["em"][WAYS[2]] is True and row["em"][WAYS[1]] is False
    assert row["characters"]["cut"] < row["characters"]["whole"] and list(row["seconds"]) == list(WAYS)


def row(last, answers, golds=("Paris",)):
    shown = dict(zip(WAYS, answers, strict=True))
    voted = {f"vote of {name}": max(ways, key=lambda w, ws=ways: sum(shown[w] == shown[o] for o in ws)) for name, ways in SIGNALS.items()}
    shown |= {k: shown[w] for k, w in voted.items()}
    return {"last": last, "golds": list(golds), "answers": shown, "characters": {"whole": 100, "cut": 30 + 10 * last},
            "split": {name: len({shown[w] for w in ways}) > 1 for name, ways in SIGNALS.items()},
            "cover_em": {w: a in golds for w, a in shown.items()}, "em": {w: a in golds for w, a in shown.items()},
            "seconds": {w: 10.0 if w == WHOLE else 3.0 + last for w in WAYS}}


def test_the_summary_counts_each_way_the_cut_against_the_whole_and_the_splits():
    rows = [row(True, ["Paris"] * 4), row(True, ["Rome", "Paris", "Paris", "Paris"]), row(True, ["Paris", "Rome", "Paris", "Rome"]),
            row(False, ["Rome", "Rome", "Rome", "Rome"])]
    got = summary(rows)
    last = got["last steps"]["cover_em"]
    assert last["read"] == 3 and last["right"] == {WAYS[0]: 2, WAYS[1]: 2, WAYS[2]: 3, WAYS[3]: 2, "vote of whole and two cut orders": 3}
    assert (last["cut against whole"]["wins"], last["cut against whole"]["losses"]) == (1, 1)
    assert (last["vote against whole"]["wins"], last["vote against whole"]["losses"]) == (1, 0)
    # splits where the whole reading was right (rows 1 and 3) and wrong (row 2)
    assert last["split when right"] == {"cut orders": 1, "whole and two cut orders": 1}
    assert last["split when wrong"] == {"cut orders": 0, "whole and two cut orders": 1}
    assert got["first steps"]["em"]["right"][WHOLE] == 0 and got["first steps"]["em"]["split when wrong"] == {"cut orders": 0, "whole and two cut orders": 0}
    assert got["median seconds"] == {WAYS[0]: 10.0, WAYS[1]: 4.0, WAYS[2]: 4.0, WAYS[3]: 4.0}
    assert got["median share kept"] == 0.4
    empty = summary([])
    assert "median seconds" not in empty and empty["last steps"]["em"]["read"] == 0 and empty["first steps"]["cover_em"]["right"][WHOLE] == 0


def test_the_stored_summary_is_a_table_of_each_kind_and_the_cost(tmp_path):
    import json

    from benchmarks.results_stored import reading_sentences_table

    path = tmp_path / "results.json"
    path.write_text(json.dumps({"summary": summary([row(False, ["Rome", "Paris", "Paris", "Paris"]), row(True, ["Paris"] * 4)])}))
    lines = reading_sentences_table(path).splitlines()
    assert lines[2] == "| first steps | cover-EM | 1 | 0 | 1 | 1 | 1 | 1 | 1 / 0 (p = 1.00) | 1 / 0 (p = 1.00) | 0 / 0 | 0 / 1 |"
    assert lines[5] == "| last steps | EM | 1 | 1 | 1 | 1 | 1 | 1 | 0 / 0 (p = 1.00) | 0 / 0 (p = 1.00) | 0 / 0 | 0 / 0 |"
    assert lines[6].startswith("| (median seconds a read; the cut keeps 35% of the pages' characters) | - | - | 10.0 s | 3.5 s |")
