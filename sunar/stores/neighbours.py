"""The document-neighbour graph G: the k nearest documents of every document.

Stored beside Chroma as two memory-mapped arrays and a small JSON header (the layout of
pyterrier_adaptive's corpus graphs): ``neighbours.ids.npy`` (uint32 rows into the index's document
order, n x k), ``neighbours.scores.npy`` (float16 cosine, n x k) and ``neighbours.json``
(embedding model, k, document count, corpus fingerprint, method). The k stored (default 100) can
exceed the k used by NAR (default 10): :meth:`NeighbourGraph.to_limit_k` gives the smaller graph.
"""

from __future__ import annotations

import itertools
import json
import os
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from sunar.errors import IndexNotReady
from sunar.files import write_json

IDS_FILE, SCORES_FILE, HEADER_FILE = "neighbours.ids.npy", "neighbours.scores.npy", "neighbours.json"
#: Above this many documents the exact blocked search gives way to Chroma's HNSW (approximate).
EXACT_LIMIT = 200_000
#: Similarities computed at once by the exact search (a block of rows times all n columns).
BLOCK_SIMILARITIES = 1 << 24


def exact_knn(
    vectors: np.ndarray, k: int, progress: Callable[[int], None] | None = None, block: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Exact cosine kNN of unit vectors, excluding each row itself. Returns (ids uint32 n x k,
    scores float16 n x k), best first. Blocked so that memory beyond the result stays at about
    100 MB whatever n is (a block of 2^24 similarities, 64 MB, and :func:`top_k`'s candidates);
    the time grows with n squared (EXACT_LIMIT bounds it)."""
    n = len(vectors)
    k = min(k, n - 1)
    ids = np.zeros((n, max(k, 0)), dtype=np.uint32)
    scores = np.zeros((n, max(k, 0)), dtype=np.float16)
    if k <= 0:
        return ids, scores
    block = block or max(1, min(n, BLOCK_SIMILARITIES // n))
    for start in range(0, n, block):
        stop = min(n, start + block)
        sims = vectors[start:stop] @ vectors.T
        sims[np.arange(stop - start), np.arange(start, stop)] = -np.inf  # not one's own neighbour
        top = top_k(sims, k)
        top_sims = np.take_along_axis(sims, top, axis=1)
        order = np.argsort(-top_sims, axis=1, kind="stable")
        ids[start:stop] = np.take_along_axis(top, order, axis=1)
        scores[start:stop] = np.take_along_axis(top_sims, order, axis=1)
        if progress:
            progress(stop - start)
    return ids, scores


def top_k(sims: np.ndarray, k: int) -> np.ndarray:
    """The columns of each row's k largest values, unordered. A full argpartition of every row is
    most of the exact search's time, so each row first takes a floor, its k-th largest value among
    an evenly spaced eighth of its columns: no larger than its true k-th largest, so the values at
    or above it (about 8k per row) hold the k largest, and only those are partitioned."""
    b, n = sims.shape
    sample = max(4 * k, n // 8)
    if sample * 2 > n:
        return np.argpartition(sims, n - k, axis=1)[:, n - k :]
    floor = np.partition(sims[:, :: n // sample], -k, axis=1)[:, -k]
    rows, cols = np.nonzero(sims >= floor[:, None])
    counts = np.bincount(rows, minlength=b)
    width = int(counts.max())
    if width * 2 > n:  # many equal values (repeated documents): no gain
        return np.argpartition(sims, n - k, axis=1)[:, n - k :]
    at = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)  # place within its row
    cand_cols = np.zeros((b, width), dtype=np.int64)
    cand_sims = np.full((b, width), -np.inf, dtype=sims.dtype)
    cand_cols[rows, at], cand_sims[rows, at] = cols, sims[rows, cols]
    best = np.argpartition(cand_sims, width - k, axis=1)[:, width - k :]
    return np.take_along_axis(cand_cols, best, axis=1)


def approximate_knn(
    query: Callable[[np.ndarray, int], list[list[str]]],
    vectors: np.ndarray,
    doc_ids: Sequence[str],
    k: int,
    progress: Callable[[int], None] | None = None,
    workers: int = 1,
    batch: int = 256,
) -> tuple[np.ndarray, np.ndarray]:
    """kNN through an ANN index (``query(vectors, n) -> ids per row``), for corpora too large for
    the exact search. Scores are recomputed exactly from the vectors. With ``workers`` > 1 that
    many batches are queried at once (Chroma's search runs outside the GIL: on 2 cores the graph
    of a million documents takes about half the time); results are taken in order."""
    row_of = {d: i for i, d in enumerate(doc_ids)}
    n = len(vectors)
    ids = np.zeros((n, k), dtype=np.uint32)
    scores = np.zeros((n, k), dtype=np.float16)
    starts = iter(range(0, n, batch))
    with ThreadPoolExecutor(max(1, workers)) as pool:
        pending = deque(pool.submit(query, vectors[s : s + batch], k + 1) for s in itertools.islice(starts, 2 * max(1, workers)))
        start = 0
        while pending:
            hits_of_rows = pending.popleft().result()
            pending.extend(pool.submit(query, vectors[s : s + batch], k + 1) for s in itertools.islice(starts, 1))
            for row, hits in enumerate(hits_of_rows, start=start):
                found = [row_of[h] for h in hits if h in row_of and row_of[h] != row][:k]
                found += [row] * (k - len(found))  # pad (only in degenerate tiny indexes)
                ids[row] = found
                scores[row] = vectors[found] @ vectors[row]
            stop = min(n, start + batch)
            if progress:
                progress(stop - start)
            start = stop
    return ids, scores


def _save_atomic(path: Path, array: np.ndarray) -> None:
    tmp = path.with_name(path.name + ".tmp.npy")
    np.save(tmp, array)
    os.replace(tmp, path)


def save_graph(folder: Path, ids: np.ndarray, scores: np.ndarray, header: dict) -> None:
    """Write the arrays, then the header (each atomically): a header means the arrays are whole."""
    _save_atomic(folder / IDS_FILE, ids)
    _save_atomic(folder / SCORES_FILE, scores)
    write_json(folder / HEADER_FILE, {**header, "k": int(ids.shape[1]), "documents": int(ids.shape[0])})


@dataclass
class NeighbourGraph:
    """Lookups in the memory-mapped graph."""

    doc_ids: list[str]
    ids: np.ndarray
    scores: np.ndarray
    header: dict
    k: int
    row_of: dict[str, int] = field(default_factory=dict, repr=False)  # doc id -> row, built once

    @classmethod
    def load(cls, folder: Path, doc_ids: Sequence[str], k: int | None = None) -> NeighbourGraph:
        try:
            header = json.loads((folder / HEADER_FILE).read_text())
            ids = np.load(folder / IDS_FILE, mmap_mode="r")
            scores = np.load(folder / SCORES_FILE, mmap_mode="r")
        except (OSError, ValueError) as exc:
            raise IndexNotReady(f"neighbour graph in {folder} is missing or damaged; rebuild with: sunar index CORPUS --index {folder}") from exc
        if ids.shape[0] != len(doc_ids):
            raise IndexNotReady(f"neighbour graph in {folder} covers {ids.shape[0]} documents, the index {len(doc_ids)}; rebuild it")
        graph = cls(list(doc_ids), ids, scores, header, int(ids.shape[1]))
        return graph.to_limit_k(k) if k is not None else graph

    def __post_init__(self) -> None:
        if not self.row_of:
            self.row_of = {d: i for i, d in enumerate(self.doc_ids)}

    def to_limit_k(self, k: int) -> NeighbourGraph:
        """The same graph using only the first k neighbours of each document (no rebuild)."""
        if k > self.ids.shape[1]:
            raise IndexNotReady(f"the graph stores {self.ids.shape[1]} neighbours per document; k={k} needs a rebuild with --neighbours {k}")
        return replace(self, k=k)  # shares the arrays and the id map

    def neighbours(self, doc_id: str) -> list[tuple[str, float]]:
        """The k nearest documents of ``doc_id`` as (id, cosine), best first; [] if unknown."""
        row = self.row_of.get(doc_id)
        if row is None:
            return []
        # tolist() converts the row in one C call; per-element numpy scalars cost ~100x more
        ids = self.ids[row, : self.k].tolist()
        scores = self.scores[row, : self.k].astype(np.float32).tolist()
        names = self.doc_ids
        return [(names[i], s) for i, s in zip(ids, scores, strict=True) if i != row]
