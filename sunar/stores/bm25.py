"""First-stage sparse retrieval R: BM25 (bm25s), persisted in the index directory.

The paper's first stage is sparse (SPLADE) and its neighbour graph dense, so the two signals
complement each other; BM25 keeps that split with a model-free sparse ranker.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import numpy as np

from sunar.errors import IndexNotReady
from sunar.stores.corpus import Document


def _bm25s() -> ModuleType:
    """bm25s, imported where first needed. Its import sets its own logger to DEBUG ("Building index from
    IDs objects" on every build, under ``sunar``'s quiet setting for it); the level chosen before is put back."""
    log = logging.getLogger("bm25s")
    chosen = log.level
    import bm25s

    log.setLevel(chosen)
    return bm25s


def _tokenize(texts: Sequence[str]) -> list[list[str]]:
    bm25s = _bm25s()
    return bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)


def has_terms(docs: Sequence[Document]) -> bool:
    """Whether any document has a word BM25 indexes (two letters or more, not an English stop word):
    without one bm25s cannot build. Stops at the first such document, so a real corpus costs one."""
    return any(_tokenize([d.content])[0] for d in docs)


class BM25Index:
    """BM25 over ``title + text``; rows are positions in the index's document order (no ids are
    stored here: they live in the index's doc_ids.json)."""

    def __init__(self, retriever, doc_ids: Sequence[str]):  # noqa: ANN001 - bm25s.BM25
        self.retriever = retriever
        self.doc_ids = list(doc_ids)

    @classmethod
    def build(cls, docs: Sequence[Document]) -> BM25Index:
        bm25s = _bm25s()
        retriever = bm25s.BM25()
        tokens = bm25s.tokenize([d.content for d in docs], stopwords="en", show_progress=False)
        retriever.index(tokens, show_progress=False)
        return cls(retriever, [d.id for d in docs])

    def save(self, folder: Path) -> None:
        self.retriever.save(str(folder), show_progress=False)

    @classmethod
    def load(cls, folder: Path, doc_ids: Sequence[str]) -> BM25Index:
        bm25s = _bm25s()
        try:
            retriever = bm25s.BM25.load(str(folder), mmap=True, show_progress=False)
        except (OSError, ValueError) as exc:
            raise IndexNotReady(f"BM25 index in {folder} is missing or damaged; rebuild with: sunar index CORPUS --index {folder.parent}") from exc
        if retriever.scores.get("num_docs") != len(doc_ids):  # rows are positions in the document order
            raise IndexNotReady(f"BM25 index in {folder} covers {retriever.scores.get('num_docs')} documents, the index {len(doc_ids)}; rebuild it")
        return cls(retriever, doc_ids)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """Top-k (id, score), best first, equal scores in the corpus's order; documents sharing no
        term with the query are left out.

        The scores are bm25s's own (its precomputed score matrix, each query term's postings added
        in float32 in the query's order), but the addition and the top k are done here: bm25s adds
        with ``np.add.at`` (a term's postings name each document once, so one indexed addition
        gives the same sums, several times faster) and takes the top k with an argpartition of all
        n scores, which numpy makes slow when most of them are zero, as they are for any query in
        a large corpus (460 ms at 1M documents). Only the documents the query matches are ranked
        here, and ties are broken by the corpus order instead of by that partition's accidents."""
        vocab = self.retriever.vocab_dict
        terms = [vocab[t] for t in _tokenize([query])[0] if t in vocab]
        if not terms or k <= 0:
            return []
        matrix = self.retriever.scores
        data, indices, indptr = matrix["data"], matrix["indices"], matrix["indptr"]
        scores = np.zeros(matrix["num_docs"], dtype=self.retriever.dtype)
        for term in terms:
            start, stop = indptr[term], indptr[term + 1]
            scores[indices[start:stop]] += data[start:stop]
        if self.retriever.nonoccurrence_array is not None:  # BM25L and BM25+ (not the default Lucene variant)
            scores += self.retriever.nonoccurrence_array[terms].sum()
        return [(self.doc_ids[r], float(scores[r])) for r in top_rows(scores, k).tolist()]


def top_rows(scores: np.ndarray, k: int) -> np.ndarray:
    """The rows of the ``k`` largest positive scores, best first, equal scores in row order."""
    rows = np.flatnonzero(scores > 0)
    values = scores[rows]
    if len(rows) > k:
        kth = np.partition(values, len(values) - k)[len(values) - k]  # the k-th largest
        rows, values = rows[values >= kth], values[values >= kth]  # all tied with it too, cut below
    return rows[np.lexsort((rows, -values))][:k]
