import numpy as np
import pytest

from sunar.errors import IndexNotReady
from sunar.stores.neighbours import NeighbourGraph, approximate_knn, exact_knn, save_graph, top_k


def unit_vectors(n, d=8, seed=0):
    v = np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def brute_force(v, k):
    sims = v @ v.T
    np.fill_diagonal(sims, -np.inf)
    return np.argsort(-sims, axis=1, kind="stable")[:, :k]


def test_exact_knn_matches_brute_force_and_excludes_self():
    v = unit_vectors(300)
    ids, scores = exact_knn(v, 7)
    assert ids.dtype == np.uint32 and scores.dtype == np.float16 and ids.shape == (300, 7)
    assert (ids == brute_force(v, 7)).mean() > 0.99  # ties aside, identical
    assert not (ids == np.arange(300)[:, None]).any()
    assert np.all(np.diff(scores.astype(np.float32), axis=1) <= 1e-3)  # best first


def test_exact_knn_blocks_give_the_same_answer():
    v = unit_vectors(50)
    whole_ids, whole_scores = exact_knn(v, 5)
    seen = []
    ids, scores = exact_knn(v, 5, progress=seen.append, block=7)
    assert (ids == whole_ids).all() and (scores == whole_scores).all()
    assert seen == [7] * 7 + [1]


def test_k_larger_than_corpus_is_capped():
    ids, _ = exact_knn(unit_vectors(4), 10)
    assert ids.shape == (4, 3)


def test_approximate_knn_with_an_ann_query_function():
    v = unit_vectors(40)
    doc_ids = [f"d{i}" for i in range(40)]
    truth = brute_force(v, 5)

    def query(rows, n):  # a perfect "ANN" that also returns the row itself first
        sims = rows @ v.T
        return [[doc_ids[j] for j in np.argsort(-s)[:n]] for s in sims]

    ids, scores = approximate_knn(query, v, doc_ids, 5)
    assert (ids == truth).all()
    assert np.allclose(scores.astype(np.float32), np.take_along_axis(v @ v.T, truth.astype(int), 1), atol=1e-2)


def test_save_load_lookup_and_limit_k(tmp_path):
    v = unit_vectors(20)
    doc_ids = [f"d{i}" for i in range(20)]
    ids, scores = exact_knn(v, 6)
    save_graph(tmp_path, ids, scores, {"embedder": "test"})
    graph = NeighbourGraph.load(tmp_path, doc_ids)
    assert graph.k == 6 and graph.header["documents"] == 20 and graph.header["embedder"] == "test"
    full = graph.neighbours("d3")
    assert [d for d, _ in full] == [doc_ids[i] for i in ids[3]]
    small = graph.to_limit_k(2)
    assert small.neighbours("d3") == full[:2]
    assert graph.neighbours("unknown") == []
    with pytest.raises(IndexNotReady, match="rebuild"):
        graph.to_limit_k(7)
    with pytest.raises(IndexNotReady, match="covers 20 documents"):
        NeighbourGraph.load(tmp_path, doc_ids[:5])


def test_missing_graph_is_a_clear_error(tmp_path):
    with pytest.raises(IndexNotReady, match="missing or damaged"):
        NeighbourGraph.load(tmp_path, ["a"])


def test_top_k_by_a_floor_gives_the_k_largest_of_each_row():
    rng = np.random.default_rng(3)
    sims = rng.normal(size=(50, 4000)).astype(np.float32)
    sims[np.arange(50), np.arange(50)] = -np.inf
    got = top_k(sims, 30)
    want = np.argsort(-sims, axis=1)[:, :30]
    assert got.shape == (50, 30) and (np.sort(got, axis=1) == np.sort(want, axis=1)).all()


def test_top_k_with_many_equal_values_still_gives_k_of_the_largest():
    sims = np.zeros((4, 1000), dtype=np.float32)  # every document the same: a floor keeps them all
    sims[:, 7] = 1.0
    got = top_k(sims, 5)
    assert got.shape == (4, 5) and (got == 7).sum(axis=1).tolist() == [1] * 4 and len(set(got[0])) == 5


def test_approximate_knn_with_batches_queried_in_parallel_gives_the_same_graph_in_order():
    v = unit_vectors(40)
    doc_ids = [f"d{i}" for i in range(40)]
    truth = brute_force(v, 5)

    def query(rows, n):
        sims = rows @ v.T
        return [[doc_ids[j] for j in np.argsort(-s)[:n]] for s in sims]

    seen = []
    ids, _ = approximate_knn(query, v, doc_ids, 5, seen.append, workers=3, batch=7)
    assert (ids == truth).all() and seen == [7] * 5 + [5]
