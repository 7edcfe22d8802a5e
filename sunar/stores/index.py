"""A complete index, opened for retrieval: Chroma (documents + vectors), BM25 (first stage) and
the neighbour graph. Building is in sunar.stores.build, the directory's files in
sunar.stores.layout, rank fusion in sunar.stores.fusion; their names other code uses are
re-exported here, the module callers have always imported.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from sunar.errors import IndexNotReady
from sunar.models.embedder import Embedder, spec_for
from sunar.stores.bm25 import BM25Index
from sunar.stores.build import build_index
from sunar.stores.chroma import ChromaStore, make_client
from sunar.stores.corpus import Document
from sunar.stores.fusion import RRF_K, fuse
from sunar.stores.layout import BUILD, DOC_IDS, FORMAT_VERSION, MANIFEST, collection_name, read_ids, read_json
from sunar.stores.neighbours import NeighbourGraph
from sunar.stores.steps import BuildStats

__all__ = ["BUILD", "FORMAT_VERSION", "MANIFEST", "RRF_K", "BuildStats", "Index", "build_index", "collection_name", "fuse"]


class Index:
    """A complete index, opened for retrieval. Stores know nothing of LLMs. ``chroma_url`` is the
    operator's: a manifest's URL is only a hint in the error when none is given."""

    def __init__(self, folder: str | Path, *, chroma_url: str = "", neighbours: int | None = None):
        self.folder = Path(folder)
        manifest = read_json(self.folder / MANIFEST)
        if manifest is None:
            if (self.folder / BUILD).exists():
                state = f"index {self.folder} is incomplete (a build was interrupted or is running)"
            elif self.folder.is_dir():
                state = f"{self.folder} holds no index (no {MANIFEST})"
            else:
                state = f"index {self.folder} does not exist"
            raise IndexNotReady(f"{state}; build it with: sunar index CORPUS --index {self.folder}")
        if manifest.get("format") != FORMAT_VERSION:
            raise IndexNotReady(
                f"index {self.folder} has format {manifest.get('format')}, this version reads {FORMAT_VERSION}; "
                f"upgrade it with: sunar index CORPUS --index {self.folder}"
            )
        self.manifest = manifest
        if manifest.get("chroma_url") and not chroma_url:  # a manifest never chooses where to connect
            raise IndexNotReady(
                f"index {self.folder} was built on a Chroma server ({json.dumps(manifest['chroma_url'])}); "
                "pass that server's URL with --chroma-url URL (chroma_url in the configuration)"
            )
        self.doc_ids = read_ids(self.folder / DOC_IDS)
        self.store = ChromaStore(make_client(str(self.folder / "chroma"), chroma_url or None), manifest["collection"], manifest["embedder"])
        self.bm25 = BM25Index.load(self.folder / "bm25", self.doc_ids)
        self.graph = NeighbourGraph.load(self.folder, self.doc_ids, min(neighbours or 10, manifest["neighbours_stored"]))
        self._embedder: Embedder | None = None

    @property
    def size(self) -> int:
        return len(self.doc_ids)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = Embedder(spec_for(self.manifest["embedder"]))
        return self._embedder

    def first_stage(self, query: str, depth: int, kind: str = "bm25") -> list[tuple[str, float]]:
        """The first-stage ranking R for ``query``: (id, score), best first. ``fused``: BM25's and
        the dense ranking's reciprocal rank fusion (:func:`fuse`), each read to ``depth``."""
        if kind == "fused":
            return fuse([self.first_stage(query, depth, "bm25"), self.first_stage(query, depth, "dense")], depth)
        if kind == "dense":
            return self.store.query(self.embedder.embed([query])[0], min(depth, self.size))
        return self.bm25.search(query, depth)

    def neighbours(self, doc_id: str) -> list[tuple[str, float]]:
        return self.graph.neighbours(doc_id)

    def documents(self, ids: Sequence[str]) -> list[Document]:
        return self.store.get(ids)
