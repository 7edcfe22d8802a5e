"""Chroma: the documents and their dense vectors.

Chroma's default embedding function downloads a model on first use (which fails offline), so the
collection is created with the project's own registered function: ``get_collection`` rebuilds it
from the stored config, and a query by text embeds with the same model that built the index.
Works with an embedded persistent directory or a Chroma server (``chroma run``) by URL.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlparse

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import register_embedding_function

from sunar.errors import IndexNotReady, SunarError
from sunar.models.embedder import Embedder, spec_for
from sunar.stores.corpus import Document

MAX_BATCH = 5000  # Chroma rejects batches above ~5,461 records


@register_embedding_function
class SunarEmbeddingFunction(EmbeddingFunction[Documents]):
    """Sentence-transformers embeddings, loaded from disk (never from the hub at run time). The
    model name comes from the stored collection, so it loads only as :func:`spec_for` allows."""

    def __init__(self, model: str = "minilm"):
        self.model = model
        self._embedder: Embedder | None = None

    def __call__(self, input: Documents) -> Embeddings:
        if self._embedder is None:
            self._embedder = Embedder(spec_for(self.model))
        return list(self._embedder.embed(list(input)))

    @staticmethod
    def name() -> str:
        return "sunar-sentence-transformers"

    def get_config(self) -> dict[str, Any]:
        return {"model": self.model}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> SunarEmbeddingFunction:
        return SunarEmbeddingFunction(config.get("model", "minilm"))

    def default_space(self) -> str:  # type: ignore[override]
        return "cosine"

    def is_legacy(self) -> bool:
        return False


def make_client(persist_dir: str | None = None, url: str | None = None) -> Any:
    """A Chroma client: HTTP when ``url`` is given, else persistent in ``persist_dir``."""
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    if url:
        parsed = urlparse(url if "://" in url else f"http://{url}")
        try:
            client = chromadb.HttpClient(
                host=parsed.hostname or "127.0.0.1",
                port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                ssl=parsed.scheme == "https",
                settings=settings,
            )
            client.heartbeat()
        except Exception as exc:
            raise SunarError(
                f"no Chroma server answers at {url}; start one with: chroma run --path DIR --host 127.0.0.1"
            ) from exc
        return client
    if not persist_dir:
        raise SunarError("Chroma needs a persist directory or a server URL")
    return chromadb.PersistentClient(path=persist_dir, settings=settings)


class ChromaStore:
    """One collection of documents with precomputed vectors."""

    def __init__(self, client: Any, collection: str, embedder: str, *, create: bool = False):
        self.client = client
        self.name = collection
        fn = SunarEmbeddingFunction(embedder)
        if create:
            self.collection = client.get_or_create_collection(
                collection,
                embedding_function=fn,
                configuration={"hnsw": {"space": "cosine", "ef_search": 200, "ef_construction": 200}},
                metadata={"embedder": embedder},
            )
        else:
            try:
                self.collection = client.get_collection(collection, embedding_function=fn)
            except Exception as exc:
                raise IndexNotReady(
                    f"Chroma has no collection '{collection}'; build the index with: sunar index CORPUS --index DIR"
                ) from exc
        stored = (self.collection.metadata or {}).get("embedder")
        if stored and stored != embedder:
            raise IndexNotReady(
                f"Chroma collection '{collection}' holds {stored} embeddings, not {embedder}; "
                "use another --index directory for another embedding model"
            )

    def count(self) -> int:
        return int(self.collection.count())

    def existing(self, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), MAX_BATCH):
            got = self.collection.get(ids=list(ids[start : start + MAX_BATCH]), include=[])
            found.update(got["ids"])
        return found

    def add(self, docs: Sequence[Document], vectors: np.ndarray) -> None:
        for start in range(0, len(docs), MAX_BATCH):
            part = docs[start : start + MAX_BATCH]
            self.collection.upsert(
                ids=[d.id for d in part],
                documents=[d.text for d in part],
                metadatas=[{"title": d.title} for d in part],
                embeddings=vectors[start : start + MAX_BATCH],
            )

    def get(self, ids: Sequence[str]) -> list[Document]:
        """Documents by id, in the order asked; unknown ids are left out."""
        if not ids:
            return []
        got = self.collection.get(ids=list(ids), include=["documents", "metadatas"])
        by_id = {
            i: Document(i, (meta or {}).get("title", ""), text or "")
            for i, text, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        }
        return [by_id[i] for i in ids if i in by_id]

    def vectors(self, ids: Sequence[str]) -> np.ndarray:
        """Stored vectors for ``ids`` in that order (float32, one row per id), written into one
        array as the batches come (a million vectors are 1.5 GB: no second copy is made)."""
        out: np.ndarray | None = None
        found = np.zeros(len(ids), dtype=bool)
        for start in range(0, len(ids), MAX_BATCH):
            batch = list(ids[start : start + MAX_BATCH])
            got = self.collection.get(ids=batch, include=["embeddings"])
            if not got["ids"]:
                continue
            where = {doc_id: start + k for k, doc_id in enumerate(batch)}
            rows = np.fromiter((where[i] for i in got["ids"]), dtype=np.int64, count=len(got["ids"]))
            vectors = np.asarray(got["embeddings"], dtype=np.float32)
            if out is None:
                out = np.empty((len(ids), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
            found[rows] = True
        if not found.all():
            missing = ids[int(np.argmin(found))]
            raise IndexNotReady(f"Chroma lacks vectors for {int((~found).sum())} documents (e.g. {missing}); rerun sunar index")
        return out if out is not None else np.empty((0, 0), dtype=np.float32)

    def query(self, vector: np.ndarray, n: int) -> list[tuple[str, float]]:
        """Dense search: (id, cosine similarity), best first."""
        got = self.collection.query(query_embeddings=[vector.tolist()], n_results=n, include=["distances"])
        return [(i, 1.0 - float(d)) for i, d in zip(got["ids"][0], got["distances"][0], strict=True)]
