"""The scale benchmark's helpers (benchmarks/scale_data.py, benchmarks/bench_scale.py) at tiny sizes:
the synthetic corpus and vectors have the shape and statistics the benchmark claims, recall is
measured right, and per-stage figures come from the build's own stage hook."""

import json
import re

import numpy as np
import pytest
from bm25s.stopwords import STOPWORDS_EN

from benchmarks.bench_scale import Stages, exact_estimate, table
from benchmarks.scale_data import (
    STOPWORDS,
    Zipf,
    exact_neighbours,
    query_words,
    recall,
    synthetic_documents,
    synthetic_vectors,
    word,
    write_corpus,
    write_vectors_file,
)
from sunar.models.embedder import Embedder
from sunar.stores.corpus import read_corpus
from sunar.stores.vectors import load_vectors


def test_vectors_are_unit_float32_deterministic_and_clustered():
    v = synthetic_vectors(8192)  # four topics of 2048
    assert v.shape == (8192, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert (synthetic_vectors(8192) == v).all() and not (synthetic_vectors(8192, seed=1) == v).all()
    sims = v[:300] @ v.T
    sims[np.arange(300), np.arange(300)] = -1
    nearest, typical = np.sort(sims, axis=1)[:, -1].mean(), sims.mean()
    assert nearest > 0.5 and abs(typical) < 0.1  # groups of near documents, unrelated documents far apart


def test_vectors_are_shuffled_so_the_order_says_nothing_about_groups():
    v = synthetic_vectors(8192)
    adjacent = float(np.mean(np.einsum("ij,ij->i", v[:-1], v[1:])))
    assert adjacent < 0.15  # in group order (pairs, eights... side by side) about 0.5


def test_words_are_distinct_and_the_first_ranks_are_bm25s_stopwords():
    assert set(STOPWORDS) == set(STOPWORDS_EN)
    words = [word(r) for r in range(20_000)]
    assert len(set(words)) == len(words)
    assert all(re.fullmatch(r"[a-z]{2,}", w) for w in words[len(STOPWORDS):])


def test_zipf_ranks_follow_the_law():
    ranks = Zipf(size=1000, exponent=1.0, offset=0).ranks(np.random.default_rng(0), 200_000)
    counts = np.bincount(ranks, minlength=1000)
    assert counts.argmax() == 0 and ranks.min() >= 0 and ranks.max() < 1000
    assert 8 < counts[0] / counts[9] < 12  # frequency proportional to 1 / rank


def test_documents_have_ids_titles_and_about_80_words():
    docs = list(synthetic_documents(500))
    assert [d["id"] for d in docs[:3]] == ["d000", "d001", "d002"] and len({d["id"] for d in docs}) == 500
    lengths = [len(d["text"].split()) for d in docs]
    assert min(lengths) >= 60 and max(lengths) <= 100 and 75 < np.mean(lengths) < 85
    assert all(len(d["title"].split()) == 2 for d in docs)
    words = " ".join(d["text"] for d in docs).split()
    assert 0.2 < sum(w in STOPWORDS for w in words) / len(words) < 0.35


def test_the_corpus_and_vectors_file_pass_the_products_checks(tmp_path):
    ids = write_corpus(tmp_path / "c.jsonl", 50)
    assert [d.id for d in read_corpus(tmp_path / "c.jsonl")] == ids
    model = Embedder("minilm")
    write_vectors_file(tmp_path / "v.npz", ids, synthetic_vectors(50), model.name)
    assert load_vectors(tmp_path / "v.npz", ids, model).shape == (50, 384)


def test_exact_neighbours_and_recall():
    v = synthetic_vectors(400)
    rows = np.array([0, 5, 399])
    truth = exact_neighbours(v, rows, 10)
    sims = v[rows] @ v.T
    sims[np.arange(3), rows] = -np.inf
    assert (truth == np.argsort(-sims, axis=1)[:, :10]).all()
    assert recall(truth, truth) == 1.0
    half = truth.copy()
    half[:, 5:] = rows[:, None]  # half the neighbours replaced by the row itself, never its own neighbour
    assert recall(half, truth) == pytest.approx(0.5)
    assert recall(truth[:, ::-1], truth) == 1.0  # order does not matter


def test_query_words_come_from_the_text():
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
    query = query_words(text, np.random.default_rng(0), count=4)
    assert len(query.split()) == 4 and set(query.split()) <= set(text.split())


PEAK_CHECK = """
import numpy as np
from benchmarks.scale_data import PeakMemory
memory = PeakMemory()
memory.reset()
before = memory.peak()
block = np.ones(50_000_000 // 8)  # 50 MB, touched
assert memory.peak() - before > 40, (before, memory.peak())
del block
memory.reset()
assert memory.peak() - before < 20, (before, memory.peak())
"""


def test_peak_memory_sees_an_allocation_and_resets():
    # in a fresh process: after other tests this one's freed heap would hold the 50 MB without new pages
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run([sys.executable, "-c", PEAK_CHECK], cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_stages_time_each_stage_from_the_hook():
    stages = Stages()
    for name in ("read", "chroma", "done"):
        stages(name)
    assert set(stages.figures) == {"read", "chroma"} and all(f["seconds"] >= 0 and f["peak_mb"] > 0 for f in stages.figures.values())


def result(n, method, graph_seconds):
    stages = {s: {"seconds": 1.0, "peak_mb": 100} for s in ("read", "chroma", "bm25", "publish")}
    stages["graph"] = {"seconds": graph_seconds, "peak_mb": 200}
    latency = {k: {"median": 1.0, "p95": 2.0} for k in ("dense", "bm25", "fusion", "first_stage", "neighbours", "documents")}
    return {"documents": n, "graph_method": method, "stages": stages, "recall": {method: {"at_10": 1.0, "at_100": 1.0}},
            "read": {"open_seconds": 0.1, "open_rss_mb": 100, "latency_ms": latency, "peak_rss_mb": 120}}


def test_the_exact_graph_skipped_at_a_size_is_estimated_by_n_squared():
    results = {"1000": result(1000, "exact", 36.0), "10000": result(10_000, "hnsw", 5.0)}
    assert exact_estimate(results, results["10000"]) == "exact: skipped, ~1 h by n^2 from 1,000"  # 36 s x 100
    printed = table(json.loads(json.dumps(results)))
    assert "| 1,000 docs | 10,000 docs |" in printed and "exact: skipped" in printed
