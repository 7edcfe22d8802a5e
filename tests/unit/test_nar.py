"""NAR (Algorithm 1) with a table scorer and a hand-made neighbour graph."""

from types import SimpleNamespace

import pytest

from fakes import MemoryIndex, TableScorer, docs, resources, scripted_llm, self_ask_script
from sunar.graph import build_graph
from sunar.nodes.update import grow_frontier

SQ = "Who directed Ronnie Rocket?"
CORPUS = docs(*[(i, i.upper(), f"text of {i}") for i in ["r1", "r2", "r3", "r4", "r5", "n1", "n2", "n3", "n4", "n5"]])
# R: r1..r5 in first-stage order. G: r1 -> n1, n2, r3; r2 -> n3, n1; n1 -> n4, r1; n2 -> n5
GRAPH = {"r1": ["n1", "n2", "r3"], "r2": ["n3", "n1"], "n1": ["n4", "r1"], "n2": ["n5"], "n3": [], "n4": []}
RANKING = [("r1", 9.0), ("r2", 8.0), ("r3", 7.0), ("r4", 6.0), ("r5", 5.0)]
SCORES = {"r1": 0.9, "r2": 0.5, "r3": 0.4, "r4": 0.3, "r5": 0.2, "n1": 0.8, "n2": 0.6, "n3": 0.7, "n4": 0.1, "n5": 0.05}


def run(variant, budget, batch_size=2, index=None, scorer=None, **config):
    llm = scripted_llm(self_ask_script([f"Follow up: {SQ}", "So the final answer is: David Lynch"]), lambda q, i: "David Lynch")
    res = resources(llm, scorer or TableScorer(SCORES), index or MemoryIndex(CORPUS, {SQ: RANKING}, GRAPH))
    cfg = {"resources": res, "batch_size": batch_size, "budget": budget, "samples": 2, "evidence": 3, **config}
    return build_graph(variant).invoke({"question": "Where was the director of Ronnie Rocket born?"}, {"configurable": cfg}), res


def batches(out):
    return [(b["source"], b["ids"]) for b in out["hops"][0]["batches"]]


def test_batches_alternate_between_ranking_and_neighbours_with_priority():
    out, _ = run("sunar_r", budget=8)
    assert batches(out) == [
        ("ranking", ["r1", "r2"]),
        # N = neighbours of r1 (score .9) first, then of r2 (.5): n1, n2, r3, n3 (n1 already in)
        ("neighbours", ["n1", "n2"]),
        ("ranking", ["r3", "r4"]),
        # N = n3 (.5 from r2) plus n1's n4 (.8) and n2's n5 (.6), ordered by source score
        ("neighbours", ["n4", "n5"]),
    ]


def test_budget_is_never_exceeded_and_last_batch_shrinks():
    out, res = run("sunar_r", budget=5)
    scored = [i for _, ids in batches(out) for i in ids]
    assert len(scored) == 5 and len(set(scored)) == 5
    assert [len(ids) for _, ids in batches(out)] == [2, 2, 1]
    assert sum(len(ids) for q, ids in res.scorer.calls if q == SQ) == 5


def test_scored_documents_never_return():
    out, _ = run("sunar_r", budget=100)  # exhausts both pools
    scored = [i for _, ids in batches(out) for i in ids]
    assert len(scored) == len(set(scored)) == len(CORPUS)


def test_corpus_smaller_than_budget_stops_when_pools_are_empty():
    out, _ = run("sunar_r", budget=100, batch_size=16)
    assert batches(out)[0] == ("ranking", ["r1", "r2", "r3", "r4", "r5"])
    assert sum(len(ids) for _, ids in batches(out)) == len(CORPUS)


def test_self_ask_variant_never_uses_the_graph():
    out, _ = run("self_ask", budget=100)
    assert batches(out) == [("ranking", ["r1", "r2"]), ("ranking", ["r3", "r4"]), ("ranking", ["r5"])]


def test_evidence_is_top_l_of_r_plus():
    out, _ = run("sunar_r", budget=8)
    assert [e["id"] for e in out["hops"][0]["evidence"]] == ["r1", "n1", "n2"]


def test_empty_first_stage_gives_no_batches_and_still_answers():
    index = MemoryIndex(CORPUS, {}, GRAPH)
    out, _ = run("sunar_r", budget=8, index=index)
    assert out["hops"][0]["batches"] == [] and out["hops"][0]["evidence"] == []
    assert out["answer"] == "David Lynch"
    assert any("first stage found nothing" in n for n in out["notes"])


def test_graph_missing_documents_and_store_missing_ids():
    index = MemoryIndex({k: v for k, v in CORPUS.items() if k != "r2"}, {SQ: RANKING}, {"r1": ["ghost", "n1"]})
    out, _ = run("sunar_r", budget=100, index=index)
    assert batches(out)[0] == ("ranking", ["r1"])  # r2 is not in the store
    assert out["hops"][0]["batches"][0]["missing"] == ["r2"]
    scored = [i for _, ids in batches(out) for i in ids]
    assert "ghost" not in scored and "r2" not in scored and len(scored) == len(set(scored))


def test_grow_frontier_keeps_best_priority_and_skips_scored():
    frontier = grow_frontier([("a", 0.2)], {"x": 0.9, "y": 0.5}, {"x": 0.9, "y": 0.5, "s": 1.0}, lambda d: {"x": [("s", 1), ("a", 1)], "y": [("b", 1), ("a", 1)]}[d])
    assert frontier == [("a", 0.9), ("b", 0.5)]


@pytest.mark.parametrize("variant", ["sunar", "sunar_no_asu"])
def test_asu_variants_loop_the_same_way(variant):
    out, _ = run(variant, budget=8)
    assert [s for s, _ in batches(out)] == ["ranking", "neighbours", "ranking", "neighbours"]


def test_early_stop_ends_nar_when_the_last_batch_adds_nothing_to_the_top_l():
    # top 3 after each batch: r1 r2 | r1 n1 n2 | r1 n1 n2 (r3 .4, r4 .3 add nothing): stop there
    out, res = run("sunar_r", budget=100, nar_patience=1)
    assert batches(out) == [("ranking", ["r1", "r2"]), ("neighbours", ["n1", "n2"]), ("ranking", ["r3", "r4"])]
    assert sum(len(ids) for q, ids in res.scorer.calls if q == SQ) == 6
    assert any("NAR stopped early" in n and "6 of 100" in n for n in out["notes"])
    assert [e["id"] for e in out["hops"][0]["evidence"]] == ["r1", "n1", "n2"]  # the same evidence as without it


def test_early_stop_waits_for_patience_batches_in_a_row():
    # r3 r4 and then n4 n5 (.1, .05) both miss the top 3: patience 2 stops after the 4th batch,
    # with r5 and n3 still unscored
    out, _ = run("sunar_r", budget=100, nar_patience=2)
    assert batches(out) == [
        ("ranking", ["r1", "r2"]), ("neighbours", ["n1", "n2"]), ("ranking", ["r3", "r4"]), ("neighbours", ["n4", "n5"]),
    ]
    assert any("NAR stopped early" in n and "8 of 100" in n for n in out["notes"])


def test_early_stop_is_off_by_default_and_leaves_no_note():
    out, _ = run("sunar_r", budget=100)
    assert sum(len(ids) for _, ids in batches(out)) == len(CORPUS)
    assert not any("NAR stopped early" in n for n in out["notes"])


def test_no_early_stop_note_when_the_budget_ends_nar_anyway():
    out, _ = run("sunar_r", budget=6, nar_patience=1)
    assert len(batches(out)) == 3 and not any("NAR stopped early" in n for n in out["notes"])


class OneSecondPerCall(TableScorer):
    """A table scorer that takes one second (of ``clock``) per call, whatever the batch."""

    def __init__(self, table, clock):
        super().__init__(table)
        self.clock = clock

    def score(self, query, docs):
        self.clock[0] += 1.0
        return super().score(query, docs)


def test_nar_stop_benchmark_runs_the_graphs_own_nar_loop_and_reuses_scores(monkeypatch):
    from benchmarks import bench_nar_stop
    from benchmarks.bench_nar_stop import TimedScores, nar_graph

    clock = [0.0]
    monkeypatch.setattr(bench_nar_stop, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    scorer = TimedScores(OneSecondPerCall(SCORES, clock))
    res = resources(scripted_llm(lambda p: "", lambda q, i: ""), scorer, MemoryIndex(CORPUS, {SQ: RANKING}, GRAPH))
    graph = nar_graph()
    runs = {}
    for patience in (0, 1):
        cfg = {"resources": res, "batch_size": 2, "budget": 100, "evidence": 3, "nar_patience": patience}
        state = graph.invoke({"question": "q", "sub_question": SQ}, {"configurable": cfg})
        runs[patience] = [b["ids"] for b in state["batches"]]
    assert runs[1] == [["r1", "r2"], ["n1", "n2"], ["r3", "r4"]]  # as in the whole graph
    assert runs[0][:3] == runs[1] and sum(map(len, runs[0])) == len(CORPUS)
    assert sum(len(ids) for _, ids in scorer.scorer.calls) == len(CORPUS)  # the second run scored nothing new
    # a batch's second is shared by its documents: r1 and n1 came in batches of two
    assert scorer.seconds(SQ, ["r1", "n1"]) == pytest.approx(1.0)
    assert scorer.seconds(SQ, list(CORPUS)) == pytest.approx(len(scorer.scorer.calls))
