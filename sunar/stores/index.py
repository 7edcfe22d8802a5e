"""An index directory: Chroma (documents + vectors), BM25 (first stage) and the neighbour graph.

Layout of DIR::

    manifest.json        written last, atomically: its presence means the index is complete
    build.json           while a build runs or after it was killed: what is being built
    doc_ids.txt          the document order shared by BM25 rows and graph rows
    chroma/              the persistent Chroma store (absent with a Chroma server URL)
    bm25/                the bm25s index
    neighbours.*         the neighbour graph (see sunar.stores.neighbours)

Building is idempotent (a complete index of the same corpus and embedder is left alone) and resumes
after being killed: documents already in Chroma are not embedded again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from sunar.errors import IndexNotReady, SunarError
from sunar.models.embedder import Embedder, spec_for
from sunar.stores.bm25 import BM25Index
from sunar.stores.chroma import ChromaStore, make_client
from sunar.stores.corpus import CorpusReport, Document, fingerprint, read_corpus
from sunar.stores.neighbours import EXACT_LIMIT, NeighbourGraph, approximate_knn, exact_knn, save_graph

MANIFEST, BUILD, DOC_IDS = "manifest.json", "build.json", "doc_ids.txt"
FORMAT_VERSION = 1
EMBED_BATCH = 256


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    os.replace(tmp, path)


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise IndexNotReady(f"{path} is damaged ({exc}); rebuild with: sunar index CORPUS --index {path.parent} --rebuild") from exc


def collection_name(corpus_fp: str, embedder: str) -> str:
    return "sunar-" + hashlib.sha1(f"{corpus_fp}\n{embedder}".encode()).hexdigest()[:16]


@dataclass
class BuildStats:
    documents: int = 0
    embedded: int = 0  # embedded in this run (the rest were already in Chroma)
    seconds_embed: float = 0.0
    seconds_bm25: float = 0.0
    seconds_graph: float = 0.0
    up_to_date: bool = False
    report: CorpusReport = field(default_factory=CorpusReport)


def build_index(
    corpus: str | Path,
    index_dir: str | Path,
    *,
    embedder: str = "minilm",
    neighbours: int = 100,
    chroma_url: str = "",
    rebuild: bool = False,
    progress: bool = True,
) -> BuildStats:
    """Build (or finish, or confirm) the index of ``corpus`` in ``index_dir``."""
    folder = Path(index_dir)
    stats = BuildStats()
    docs = read_corpus(corpus, stats.report)
    stats.documents = len(docs)
    corpus_fp = fingerprint(Path(corpus))
    model = Embedder(embedder)

    manifest = _read_json(folder / MANIFEST)
    pending = _read_json(folder / BUILD)
    previous = manifest or pending
    if previous and not rebuild:
        if previous.get("embedder") != model.name:
            raise SunarError(
                f"index {folder} holds {previous.get('embedder')} embeddings, not {model.name}; one index never mixes "
                "embedding models: use another --index directory, or --rebuild to replace it"
            )
        if previous.get("corpus_fingerprint") != corpus_fp:
            raise SunarError(
                f"index {folder} was built from another corpus ({previous.get('corpus')}); "
                "use another --index directory, or --rebuild to replace it"
            )
        if manifest and manifest.get("neighbours_stored", 0) >= min(neighbours, len(docs) - 1) and manifest.get("chroma_url", "") == chroma_url:
            stats.up_to_date = True
            return stats
    if rebuild and previous:
        _discard(folder, previous, chroma_url)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANIFEST).unlink(missing_ok=True)  # from here on the index is not complete
    name = collection_name(corpus_fp, model.name)
    plan = {
        "format": FORMAT_VERSION,
        "corpus": str(Path(corpus).resolve()),
        "corpus_fingerprint": corpus_fp,
        "embedder": model.name,
        "collection": name,
        "chroma_url": chroma_url,
    }
    _write_json(folder / BUILD, plan)

    # 1. Chroma: embed what it does not hold yet.
    started = time.perf_counter()
    store = ChromaStore(make_client(str(folder / "chroma"), chroma_url or None), name, model.name, create=True)
    have = store.existing([d.id for d in docs])
    todo = [d for d in docs if d.id not in have]
    with tqdm(total=len(docs), initial=len(docs) - len(todo), desc="embedding", unit="doc", disable=not progress) as bar:
        for start in range(0, len(todo), EMBED_BATCH):
            part = todo[start : start + EMBED_BATCH]
            store.add(part, model.embed([d.content for d in part]))
            bar.update(len(part))
    stats.embedded = len(todo)
    stats.seconds_embed = time.perf_counter() - started

    # 2. Document order and BM25 (written under a temporary name, then renamed).
    started = time.perf_counter()
    ids_tmp = folder / (DOC_IDS + ".tmp")
    ids_tmp.write_text("\n".join(d.id for d in docs) + "\n")
    os.replace(ids_tmp, folder / DOC_IDS)
    bm25_tmp = folder / "bm25.tmp"
    shutil.rmtree(bm25_tmp, ignore_errors=True)
    BM25Index.build(docs).save(bm25_tmp)
    shutil.rmtree(folder / "bm25", ignore_errors=True)
    os.replace(bm25_tmp, folder / "bm25")
    stats.seconds_bm25 = time.perf_counter() - started

    # 3. Neighbour graph from the stored vectors.
    started = time.perf_counter()
    ids = [d.id for d in docs]
    vectors = store.vectors(ids)
    with tqdm(total=len(docs), desc="neighbour graph", unit="doc", disable=not progress) as bar:
        if len(docs) <= EXACT_LIMIT:
            method = "exact"
            nbr_ids, nbr_scores = exact_knn(vectors, neighbours, bar.update)
        else:
            method = "hnsw"

            def query(rows, n):  # noqa: ANN001
                got = store.collection.query(query_embeddings=rows, n_results=n, include=[])
                return got["ids"]

            nbr_ids, nbr_scores = approximate_knn(query, vectors, ids, neighbours, bar.update)
    save_graph(folder, nbr_ids, nbr_scores, {"embedder": model.name, "corpus_fingerprint": corpus_fp, "metric": "cosine", "method": method})
    stats.seconds_graph = time.perf_counter() - started

    _write_json(
        folder / MANIFEST,
        {**plan, "documents": len(docs), "dim": int(vectors.shape[1]), "neighbours_stored": int(nbr_ids.shape[1]), "built": time.strftime("%Y-%m-%dT%H:%M:%S")},
    )
    (folder / BUILD).unlink(missing_ok=True)
    return stats


def _discard(folder: Path, previous: dict, chroma_url: str) -> None:
    """Remove a previous build: its Chroma collection (through the client, so a server's copy goes
    too and an open in-process client stays valid) and the files beside it."""
    client = make_client(str(folder / "chroma"), previous.get("chroma_url") or chroma_url or None)
    with contextlib.suppress(Exception):  # already gone
        client.delete_collection(previous["collection"])
    for name in (MANIFEST, BUILD, DOC_IDS, "neighbours.json", "neighbours.ids.npy", "neighbours.scores.npy"):
        (folder / name).unlink(missing_ok=True)
    shutil.rmtree(folder / "bm25", ignore_errors=True)


class Index:
    """A complete index, opened for retrieval. Stores know nothing of LLMs."""

    def __init__(self, folder: str | Path, *, chroma_url: str = "", neighbours: int | None = None):
        self.folder = Path(folder)
        manifest = _read_json(self.folder / MANIFEST)
        if manifest is None:
            state = "is incomplete (a build was interrupted)" if (self.folder / BUILD).exists() else "does not exist"
            raise IndexNotReady(f"index {self.folder} {state}; build it with: sunar index CORPUS --index {self.folder}")
        if manifest.get("format") != FORMAT_VERSION:
            raise IndexNotReady(f"index {self.folder} has format {manifest.get('format')}, this version reads {FORMAT_VERSION}; rebuild it with sunar index --rebuild")
        self.manifest = manifest
        url = chroma_url or manifest.get("chroma_url", "")
        self.doc_ids = (self.folder / DOC_IDS).read_text().split()
        self.store = ChromaStore(make_client(str(self.folder / "chroma"), url or None), manifest["collection"], manifest["embedder"])
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
        """The first-stage ranking R for ``query``: (id, score), best first."""
        if kind == "dense":
            return self.store.query(self.embedder.embed([query])[0], min(depth, self.size))
        return self.bm25.search(query, depth)

    def neighbours(self, doc_id: str) -> list[tuple[str, float]]:
        return self.graph.neighbours(doc_id)

    def documents(self, ids: Sequence[str]) -> list[Document]:
        return self.store.get(ids)
