"""The reading-orders benchmark (benchmarks/bench_reading_orders.py): each dev question's gold steps read
from their pages in three orders, whether the orders' split marks a misread step."""

from benchmarks.bench_reading_orders import ORDERS, ordered, read_orders, split, summary, vote
from sunar.prompts.answer import answer_messages
from tests.unit.test_bench_reading_demos import CORPUS, steps


def test_the_orders_are_as_ranked_reversed_and_rotated_by_two():
    pages = [{"title": t, "text": t} for t in "abcde"]
    assert [[p["title"] for p in o] for o in ordered(pages)] == [list("abcde"), list("edcba"), list("cdeab")]


def test_the_vote_takes_what_most_orders_agree_with_and_the_first_order_on_a_tie():
    assert vote(["Montana", "Missoula", "Missoula, Montana"]) == "Missoula, Montana"  # it holds both others
    assert vote(["Knoxville", "Missoula", "Missoula"]) == "Missoula"
    assert vote(["Knoxville", "Missoula", "unknown"]) == "Knoxville"
    assert split(["Missoula", "Missoula, Montana", "missoula"]) is False
    assert split(["Missoula", "Missoula", "Knoxville"]) is True


def test_a_step_is_read_in_every_order_and_graded_with_the_vote():
    def ask(prompt):  # misreads when the gold page is not the first page shown
        first = prompt[-1].content.split("\n")[1]
        return "Missoula, Montana" if first.startswith("[1] David Lynch:") else "Eraserhead"

    step = steps()[1]
    row = read_orders(step, CORPUS, ask)
    assert list(row["answers"]) == [*ORDERS, "vote"]
    assert [row["answers"][o] for o in ORDERS] == ["Eraserhead", "Missoula, Montana", "Missoula, Montana"] and row["split"] is True
    assert row["answers"]["vote"] == "Missoula, Montana"  # the reversed and rotated orders put the gold page first
    assert row["cover_em"] == {ORDERS[0]: False, ORDERS[1]: True, ORDERS[2]: True, "vote": True}
    assert row["em"]["vote"] is True
    assert list(row["seconds"]) == list(ORDERS)  # no sample timed without a sampler
    sampled = []
    timed = read_orders(step, CORPUS, ask, sampled.append)
    assert list(timed["seconds"]) == [ORDERS[0], "a sample", *ORDERS[1:]] and len(sampled) == 1
    assert sampled[0] == answer_messages(step["question"], [CORPUS[i] for i in ("p3", "p4", "p2")])  # the first order's prompt
    assert ask(answer_messages(step["question"], [CORPUS["p2"]])) == "Missoula, Montana"


def test_the_summary_counts_each_kind_the_votes_wins_and_the_splits():
    def row(last, first, others, golds):
        answers = {ORDERS[0]: first, ORDERS[1]: others, ORDERS[2]: others, "vote": vote([first, others, others])}
        return {"last": last, "split": split(list(answers.values())[:3]), "golds": golds,
                "cover_em": {w: a == golds[0] for w, a in answers.items()}, "em": {w: a == golds[0] for w, a in answers.items()},
                "seconds": {ORDERS[0]: 10.0, "a sample": 1.0 + last, ORDERS[1]: 12.0, ORDERS[2]: 11.0}}

    rows = [row(True, "Paris", "Paris", ["Paris"]), row(True, "Rome", "Paris", ["Paris"]), row(True, "Paris", "Rome", ["Paris"]),
            row(False, "Lynch", "Lynch", ["Lynch"])]
    got = summary(rows)
    last = got["last steps"]["cover_em"]
    assert last["read"] == 3 and last["right"] == {ORDERS[0]: 2, ORDERS[1]: 2, ORDERS[2]: 2, "vote": 2}
    assert (last["wins"], last["losses"]) == (1, 1)
    assert (last["split when right"], last["split when wrong"]) == (1, 1)
    assert got["median seconds"] == {ORDERS[0]: 10.0, "a sample": 2.0, ORDERS[1]: 12.0, ORDERS[2]: 11.0}
    assert got["first steps"]["em"]["read"] == 1 and got["first steps"]["em"]["right"]["vote"] == 1


def test_reading_goes_on_where_it_stopped(tmp_path):
    from benchmarks.bench_reading_demos import read_resumably

    out, read = tmp_path / "r.json", []

    def todo(keys):
        return [(k, lambda k=k: read.append(k) or {"n": len(k)}) for k in keys]

    def total(rows):
        return {"rows": len(rows)}

    first = read_resumably(out, {"rows": {}}, todo(["a", "bb"]), total)
    assert first["summary"] == {"rows": 2} and read == ["a", "bb"]
    again = read_resumably(out, {"rows": {}}, todo(["a", "bb", "ccc"]), total)
    assert read == ["a", "bb", "ccc"] and again["rows"]["ccc"] == {"n": 3} and again["summary"] == {"rows": 3}


def test_the_stored_summary_is_a_table_of_each_kind_and_the_cost(tmp_path):
    import json

    from benchmarks.results_stored import reading_orders_table

    def row(last, first, others):
        answers = {ORDERS[0]: first, ORDERS[1]: others, ORDERS[2]: others, "vote": vote([first, others, others])}
        return {"last": last, "split": split([first, others, others]), "cover_em": {w: a == "Paris" for w, a in answers.items()},
                "em": {w: a == "Paris" for w, a in answers.items()}, "seconds": {ORDERS[0]: 20.0, "a sample": 1.5, ORDERS[1]: 19.0, ORDERS[2]: 18.0}}

    path = tmp_path / "results.json"
    path.write_text(json.dumps({"summary": summary([row(False, "Rome", "Paris"), row(True, "Paris", "Paris")])}))
    lines = reading_orders_table(path).splitlines()
    assert lines[2] == "| first steps | cover-EM | 1 | 0 | 1 | 1 | 1 | 1 / 0 (p = 1.00) | 0 / 1 |"
    assert lines[5] == "| last steps | EM | 1 | 1 | 1 | 1 | 1 | 0 / 0 (p = 1.00) | 0 / 0 |"
    assert "19.0 s" in lines[6] and "a temperature sample of the first order's prompt: 1.5 s" in lines[6]
