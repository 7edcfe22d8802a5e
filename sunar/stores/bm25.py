"""First-stage sparse retrieval R: BM25 (bm25s), persisted in the index directory.

The paper's first stage is sparse (SPLADE) and its neighbour graph dense, so the two signals
complement each other; BM25 keeps that split with a model-free sparse ranker.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sunar.errors import IndexNotReady
from sunar.stores.corpus import Document


def _tokenize(texts: Sequence[str]) -> list[list[str]]:
    import bm25s

    return bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)


class BM25Index:
    """BM25 over ``title + text``; rows are positions in the index's document order (no ids are
    stored here: they live in the index's doc_ids.json)."""

    def __init__(self, retriever, doc_ids: Sequence[str]):  # noqa: ANN001 - bm25s.BM25
        self.retriever = retriever
        self.doc_ids = list(doc_ids)

    @classmethod
    def build(cls, docs: Sequence[Document]) -> BM25Index:
        import bm25s

        retriever = bm25s.BM25()
        tokens = bm25s.tokenize([d.content for d in docs], stopwords="en", show_progress=False)
        retriever.index(tokens, show_progress=False)
        return cls(retriever, [d.id for d in docs])

    def save(self, folder: Path) -> None:
        self.retriever.save(str(folder), show_progress=False)

    @classmethod
    def load(cls, folder: Path, doc_ids: Sequence[str]) -> BM25Index:
        import bm25s

        try:
            retriever = bm25s.BM25.load(str(folder), mmap=True, show_progress=False)
        except (OSError, ValueError) as exc:
            raise IndexNotReady(f"BM25 index in {folder} is missing or damaged; rebuild with: sunar index CORPUS --index {folder.parent}") from exc
        if retriever.scores.get("num_docs") != len(doc_ids):  # rows are positions in the document order
            raise IndexNotReady(f"BM25 index in {folder} covers {retriever.scores.get('num_docs')} documents, the index {len(doc_ids)}; rebuild it")
        return cls(retriever, doc_ids)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """Top-k (id, score), best first; documents sharing no term with the query are left out."""
        tokens = _tokenize([query])
        vocab = self.retriever.vocab_dict
        tokens = [[t for t in tokens[0] if t in vocab]]
        if not tokens[0] or k <= 0:
            return []
        k = min(k, len(self.doc_ids))
        rows, scores = self.retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        return [
            (self.doc_ids[int(r)], float(s))
            for r, s in zip(np.asarray(rows[0]), np.asarray(scores[0]), strict=True)
            if s > 0
        ]
