"""The stages of an index build, in order: Chroma (documents and vectors), BM25, the neighbour
graph, then the document order and the manifest that publishes the index.

sunar.stores.build decides what to build (or resume, or discard) and calls :func:`run_stages`.
Each stage is resumable or rewritten whole: Chroma gets only the documents it lacks, BM25 and the
graph are written under temporary names and renamed, and the manifest comes last.

Test hook: with ``SUNAR_TEST_KILL_AT=<step>`` in the environment the process SIGKILLs itself at that
checkpoint (:func:`checkpoint`; steps in order: planned, unpublished, collection-deleted, embedded,
bm25, neighbour-graph, graph-saved, published). tests/integration/test_index_kill.py uses it.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from sunar.files import write_json
from sunar.models.embedder import Embedder
from sunar.stores.bm25 import BM25Index
from sunar.stores.chroma import ChromaStore, make_client
from sunar.stores.corpus import CorpusReport, Document
from sunar.stores.layout import BUILD, DOC_IDS, MANIFEST, OLD_DOC_IDS
from sunar.stores.neighbours import EXACT_LIMIT, approximate_knn, exact_knn, save_graph

EMBED_BATCH = 256  # documents embedded (or stored) between two resumable checkpoints; larger batches store no faster

#: Told the name of each stage as it begins ("read", "chroma", "bm25", "graph", "publish"), then
#: "done" when a build ran (an index found complete ends after "read").
StageHook = Callable[[str], None]


def checkpoint(step: str) -> None:
    """Test hook, inert unless ``SUNAR_TEST_KILL_AT`` names this step: then die as ``kill -9`` would."""
    if os.environ.get("SUNAR_TEST_KILL_AT") == step:
        os.kill(os.getpid(), signal.SIGKILL)


@dataclass
class BuildStats:
    documents: int = 0
    embedded: int = 0  # embedded (or stored from given vectors) in this run; the rest were already in Chroma
    seconds_embed: float = 0.0
    seconds_bm25: float = 0.0
    seconds_graph: float = 0.0
    up_to_date: bool = False
    report: CorpusReport = field(default_factory=CorpusReport)


def run_stages(
    folder: Path, plan: dict, docs: list[Document], model: Embedder, neighbours: int, stats: BuildStats, progress: bool,
    given: np.ndarray | None = None, on_stage: StageHook | None = None,
) -> None:
    """Chroma, BM25, the graph and the manifest, for a build planned in build.json. ``given``: the
    vectors of ``docs``, row for row, stored instead of embedding (and read back from nowhere)."""
    stage = on_stage or (lambda name: None)
    stage("chroma")
    started = time.perf_counter()
    store = ChromaStore(make_client(str(folder / "chroma"), plan["chroma_url"] or None), plan["collection"], model.name, create=True)
    stats.embedded = store_documents(store, docs, model, given, progress)
    stats.seconds_embed = time.perf_counter() - started

    stage("bm25")
    started = time.perf_counter()
    bm25_tmp = folder / "bm25.tmp"
    shutil.rmtree(bm25_tmp, ignore_errors=True)
    BM25Index.build(docs).save(bm25_tmp)
    shutil.rmtree(folder / "bm25", ignore_errors=True)
    checkpoint("bm25")
    os.replace(bm25_tmp, folder / "bm25")
    stats.seconds_bm25 = time.perf_counter() - started

    stage("graph")
    started = time.perf_counter()
    ids = [d.id for d in docs]
    vectors = store.vectors(ids) if given is None else given  # given rows are what Chroma holds
    with tqdm(total=len(docs), desc="neighbour graph", unit="doc", disable=not progress) as bar:

        def advance(n: int) -> None:
            bar.update(n)
            checkpoint("neighbour-graph")

        method = "exact" if len(docs) <= EXACT_LIMIT else "hnsw"
        nbr_ids, nbr_scores = exact_knn(vectors, neighbours, advance) if method == "exact" else chroma_knn(store, vectors, ids, neighbours, advance)
    header = {"embedder": model.name, "corpus_fingerprint": plan["corpus_fingerprint"], "metric": "cosine", "method": method}
    save_graph(folder, nbr_ids, nbr_scores, header)
    checkpoint("graph-saved")
    stats.seconds_graph = time.perf_counter() - started

    stage("publish")
    write_json(folder / DOC_IDS, ids)
    (folder / OLD_DOC_IDS).unlink(missing_ok=True)
    built = time.strftime("%Y-%m-%dT%H:%M:%S")
    write_json(folder / MANIFEST, {**plan, "documents": len(docs), "dim": int(vectors.shape[1]), "neighbours_stored": int(nbr_ids.shape[1]), "built": built})
    checkpoint("published")
    (folder / BUILD).unlink(missing_ok=True)
    stage("done")


def store_documents(store: ChromaStore, docs: list[Document], model: Embedder, given: np.ndarray | None, progress: bool) -> int:
    """Put into Chroma the documents it does not hold yet, embedded in batches or taken from
    ``given``; returns how many. A checkpoint after each batch, so a killed build resumes."""
    have = store.existing([d.id for d in docs])
    todo = [row for row, d in enumerate(docs) if d.id not in have]
    with tqdm(total=len(docs), initial=len(docs) - len(todo), desc="embedding" if given is None else "storing", unit="doc", disable=not progress) as bar:
        for start in range(0, len(todo), EMBED_BATCH):
            rows = todo[start : start + EMBED_BATCH]
            part = [docs[row] for row in rows]
            store.add(part, model.embed([d.content for d in part]) if given is None else given[rows])
            bar.update(len(part))
            checkpoint("embedded")
    return len(todo)


def chroma_knn(store: ChromaStore, vectors: np.ndarray, ids: Sequence[str], k: int, progress: Callable[[int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The neighbour graph through Chroma's HNSW index (approximate; for corpora above EXACT_LIMIT),
    queried from a thread per core."""

    def query(rows: np.ndarray, n: int) -> list[list[str]]:
        return store.collection.query(query_embeddings=rows, n_results=n, include=[])["ids"]

    return approximate_knn(query, vectors, ids, k, progress, workers=len(os.sched_getaffinity(0)))
