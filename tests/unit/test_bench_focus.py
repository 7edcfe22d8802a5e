"""The focus benchmark (benchmarks/bench_focus.py): a first sub-question read from the pages it names
alone, from those first and then the others, and from all in their ranked order, each against the
data's first bridge."""

from benchmarks.bench_focus import ORDERS, first_step, first_steps, orders, read_each, summary

PAGES = [{"title": "Mel Brooks", "text": "Mel Brooks produced it."}, {"title": "David Lynch", "text": "Lynch was born in Missoula."},
         {"title": "Missoula", "text": "Missoula is in Montana."}]
QUESTION = "Where was David Lynch born?"


def test_the_orders_put_the_named_pages_alone_first_or_in_their_rank():
    ways = orders(QUESTION, PAGES)
    assert [[p["title"] for p in ways[name]] for name in ORDERS] == [
        ["David Lynch"], ["David Lynch", "Mel Brooks", "Missoula"], ["Mel Brooks", "David Lynch", "Missoula"]]
    assert orders("Who produced Ronnie Rocket?", PAGES) is None  # names none: one order
    assert orders("Where was David Lynch born?", PAGES[1:2]) is None  # names all: one order


def test_each_order_is_read_and_checked_against_the_first_bridge():
    def ask(question, pages):  # a reader that answers from the first page it is given
        return {"Mel Brooks": "New York", "David Lynch": "Missoula, Montana"}[pages[0]["title"]]

    row = read_each(QUESTION, PAGES, ask, "Missoula")
    assert row["named"] == 1 and row["pages"] == ["Mel Brooks", "David Lynch", "Missoula"]
    assert row["right"] == {ORDERS[0]: True, ORDERS[1]: True, ORDERS[2]: False}
    assert read_each("Who produced Ronnie Rocket?", PAGES, ask, "Mel Brooks") is None
    other = {**row, "right": {ORDERS[0]: False, ORDERS[1]: True, ORDERS[2]: True}}
    got = summary([row, other, row])
    assert got[ORDERS[0]] == {"right": 2, "read": 3}
    assert (got[ORDERS[1]]["right"], got[ORDERS[1]]["wins"], got[ORDERS[1]]["losses"]) == (3, 1, 0)
    assert (got[ORDERS[2]]["right"], got[ORDERS[2]]["wins"], got[ORDERS[2]]["losses"]) == (1, 1, 2)


def test_the_first_step_is_musiques_decomposition_or_2wikis_first_triple(tmp_path):
    assert first_step({"decomposition": [{"question": "q", "answer": "David Lynch"}]}) == "David Lynch"
    assert first_step({"decomposition": [], "evidence_triples": [["Ronnie Rocket", "director", "David Lynch"]]}) == "David Lynch"
    dev = tmp_path / "dev.jsonl"
    dev.write_text('{"id": "m", "decomposition": [{"answer": "A"}]}\n\n{"id": "w", "evidence_triples": [["x", "y", "B"]]}\n')
    assert first_steps(dev) == {"m": "A", "w": "B"}  # a blank line skipped


def test_the_stored_summary_is_a_table_of_the_orders(tmp_path):
    import json

    from benchmarks.results_stored import focus_table

    row = {"right": {ORDERS[0]: False, ORDERS[1]: True, ORDERS[2]: True}}
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"summary": summary([row, row])}))
    lines = focus_table(path).splitlines()
    assert lines[2] == f"| {ORDERS[0]} | 0 of 2 | - |"
    assert lines[3] == f"| {ORDERS[1]} | 2 of 2 | 2 / 0 (p = 0.50) |"
