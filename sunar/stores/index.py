"""An index directory: Chroma (documents + vectors), BM25 (first stage) and the neighbour graph.

Layout of DIR::

    manifest.json        written last, atomically: its presence means the index is complete
    build.json           while a build runs or after it was killed: what is being built (and, for
                         a --rebuild, which old collections are still to be deleted)
    build.lock           flock'ed by the process building (the kernel releases it when it dies)
    doc_ids.json         the document order shared by BM25 rows and graph rows (a JSON list)
    chroma/              the persistent Chroma store (absent with a Chroma server URL)
    bm25/                the bm25s index
    neighbours.*         the neighbour graph (see sunar.stores.neighbours)

Building is idempotent (a complete index of the same corpus and embedder is left alone) and resumes
after being killed at any point: build.json is written and the manifest removed before anything is
changed, documents already in Chroma are not embedded again, and a killed --rebuild finishes its
discarding on the next run, whether or not that run says --rebuild. With vectors computed elsewhere
(``--vectors FILE``, see sunar.stores.vectors) Chroma stores those rows instead of embedding, in the
same resumable batches; the file is checked before anything is written. One process builds in a
folder at a time (build.lock); reading an index, or confirming that it is complete, takes no lock.

Test hook: with ``SUNAR_TEST_KILL_AT=<step>`` in the environment the process SIGKILLs itself at that
checkpoint (:func:`_checkpoint`; steps in order: planned, unpublished, collection-deleted, embedded,
bm25, neighbour-graph, graph-saved, published). tests/integration/test_index_kill.py uses it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import signal
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from sunar.errors import IndexNotReady, SunarError
from sunar.files import pid_lock, write_json
from sunar.models.embedder import Embedder, spec_for
from sunar.stores.bm25 import BM25Index
from sunar.stores.chroma import ChromaStore, make_client
from sunar.stores.corpus import CorpusReport, Document, fingerprint, read_corpus
from sunar.stores.neighbours import EXACT_LIMIT, NeighbourGraph, approximate_knn, exact_knn, save_graph
from sunar.stores.vectors import load_vectors

log = logging.getLogger(__name__)

MANIFEST, BUILD, LOCK, DOC_IDS = "manifest.json", "build.json", "build.lock", "doc_ids.json"
OLD_DOC_IDS = "doc_ids.txt"  # format 1: one id per line, which ids with whitespace could not survive
FORMAT_VERSION = 2
EMBED_BATCH = 256


def _checkpoint(step: str) -> None:
    """Test hook, inert unless ``SUNAR_TEST_KILL_AT`` names this step: then die as ``kill -9`` would."""
    if os.environ.get("SUNAR_TEST_KILL_AT") == step:
        os.kill(os.getpid(), signal.SIGKILL)


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise IndexNotReady(f"{path} is damaged ({exc}); rebuild with: sunar index CORPUS --index {path.parent} --rebuild") from exc


def collection_name(corpus_fp: str, embedder: str) -> str:
    return "sunar-" + hashlib.sha1(f"{corpus_fp}\n{embedder}".encode()).hexdigest()[:16]


@contextlib.contextmanager
def _build_lock(folder: Path) -> Iterator[None]:
    """Hold the folder's build lock for the block, or fail at once with who holds it."""
    try:
        (folder / LOCK).touch()
    except OSError as exc:
        raise SunarError(f"cannot build in {folder} ({exc.strerror}); use an --index directory you can write to") from exc
    busy = f"index {folder} is being built by another process (pid {{pid}}); wait for it to finish, or stop that process and run the command again"
    with pid_lock(folder / LOCK, busy):
        yield


def _check_text(docs: Sequence[Document], corpus: str | Path) -> None:
    """Chroma stores UTF-8: a lone surrogate (a JSON escape such as \\ud800) cannot be stored."""
    for d in docs:
        try:
            f"{d.id}{d.title}{d.text}".encode()
        except UnicodeEncodeError:
            raise SunarError(f"corpus {corpus}: document {d.id!r} holds a lone surrogate escape (not valid Unicode); fix that line") from None


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
    vectors: str | Path | None = None,
    device: str = "cpu",
) -> BuildStats:
    """Build (or finish, or confirm) the index of ``corpus`` in ``index_dir``, embedding on
    ``device``, or storing the checked ``vectors`` file's rows (:func:`load_vectors`)."""
    folder = Path(index_dir)
    stats = BuildStats()
    docs = read_corpus(corpus, stats.report)
    _check_text(docs, corpus)
    stats.documents = len(docs)
    corpus_fp = fingerprint(Path(corpus))
    model = Embedder(embedder, device=device)

    def state() -> tuple[dict | None, dict | None, bool, bool]:
        """(manifest, build.json, rebuild?, up to date?) as the folder is now; another corpus or
        embedder is refused unless rebuilding."""
        manifest, pending = _read_json(folder / MANIFEST), _read_json(folder / BUILD)
        again = rebuild or bool(pending and pending.get("discard"))  # a killed --rebuild goes on
        previous = manifest or pending
        if not previous or again:
            return manifest, pending, again, False
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
        current = (
            manifest is not None
            and manifest.get("format") == FORMAT_VERSION
            and manifest.get("neighbours_stored", 0) >= min(neighbours, len(docs) - 1)
            and manifest.get("chroma_url", "") == chroma_url
        )
        return manifest, pending, False, current

    manifest, pending, again, current = state()
    if current and not pending:  # complete: confirmed without the lock, which only builders take
        stats.up_to_date = True
        return stats
    given = None if vectors is None else load_vectors(vectors, [d.id for d in docs], model)  # before anything is written
    folder.mkdir(parents=True, exist_ok=True)
    with _build_lock(folder):
        manifest, pending, again, current = state()  # as it is now that no one else is building
        if not current and not again and not pending and _upgrade_ids(folder, manifest, docs):
            manifest, pending, again, current = state()
        if current:
            (folder / BUILD).unlink(missing_ok=True)  # left by a build killed once it was complete
            stats.up_to_date = True
            return stats
        plan = {
            "format": FORMAT_VERSION,
            "corpus": str(Path(corpus).resolve()),
            "corpus_fingerprint": corpus_fp,
            "embedder": model.name,
            "collection": collection_name(corpus_fp, model.name),
            "chroma_url": chroma_url,
        }
        if vectors is not None:
            plan |= {"vectors": "given", "vectors_sha256": fingerprint(Path(vectors))}
        _build(folder, plan, docs, model, neighbours, _collections(manifest, pending) if again else [], stats, progress, given)
    return stats


def _build(
    folder: Path, plan: dict, docs: list[Document], model: Embedder, neighbours: int, discard: list[dict], stats: BuildStats, progress: bool,
    given: np.ndarray | None = None,
) -> None:
    """Every step, ordered so that a kill anywhere leaves either the old index untouched or
    build.json without a manifest: the next run finishes the work. ``given``: the vectors of
    ``docs``, row for row, stored instead of embedding."""
    name, chroma_url = plan["collection"], plan["chroma_url"]
    write_json(folder / BUILD, {**plan, "discard": discard} if discard else plan)
    _checkpoint("planned")
    (folder / MANIFEST).unlink(missing_ok=True)  # from here on the index is not complete
    _checkpoint("unpublished")
    if discard:
        _discard(folder, discard, chroma_url)
        write_json(folder / BUILD, plan)  # discarding done

    # 1. Chroma: embed (or take from ``given``) what it does not hold yet.
    started = time.perf_counter()
    store = ChromaStore(make_client(str(folder / "chroma"), chroma_url or None), name, model.name, create=True)
    have = store.existing([d.id for d in docs])
    todo = [row for row, d in enumerate(docs) if d.id not in have]
    with tqdm(total=len(docs), initial=len(docs) - len(todo), desc="embedding", unit="doc", disable=not progress) as bar:
        for start in range(0, len(todo), EMBED_BATCH):
            rows = todo[start : start + EMBED_BATCH]
            part = [docs[row] for row in rows]
            store.add(part, model.embed([d.content for d in part]) if given is None else given[rows])
            bar.update(len(part))
            _checkpoint("embedded")
    stats.embedded = len(todo)
    stats.seconds_embed = time.perf_counter() - started

    # 2. Document order and BM25 (written under a temporary name, then renamed).
    started = time.perf_counter()
    ids = [d.id for d in docs]
    write_json(folder / DOC_IDS, ids)
    (folder / OLD_DOC_IDS).unlink(missing_ok=True)
    bm25_tmp = folder / "bm25.tmp"
    shutil.rmtree(bm25_tmp, ignore_errors=True)
    BM25Index.build(docs).save(bm25_tmp)
    shutil.rmtree(folder / "bm25", ignore_errors=True)
    _checkpoint("bm25")
    os.replace(bm25_tmp, folder / "bm25")
    stats.seconds_bm25 = time.perf_counter() - started

    # 3. Neighbour graph from the stored vectors.
    started = time.perf_counter()
    vectors = store.vectors(ids)

    def advance(n: int) -> None:
        bar.update(n)
        _checkpoint("neighbour-graph")

    with tqdm(total=len(docs), desc="neighbour graph", unit="doc", disable=not progress) as bar:
        if len(docs) <= EXACT_LIMIT:
            method = "exact"
            nbr_ids, nbr_scores = exact_knn(vectors, neighbours, advance)
        else:
            method = "hnsw"

            def query(rows, n):  # noqa: ANN001
                got = store.collection.query(query_embeddings=rows, n_results=n, include=[])
                return got["ids"]

            nbr_ids, nbr_scores = approximate_knn(query, vectors, ids, neighbours, advance)
    header = {"embedder": model.name, "corpus_fingerprint": plan["corpus_fingerprint"], "metric": "cosine", "method": method}
    save_graph(folder, nbr_ids, nbr_scores, header)
    _checkpoint("graph-saved")
    stats.seconds_graph = time.perf_counter() - started

    write_json(
        folder / MANIFEST,
        {**plan, "documents": len(docs), "dim": int(vectors.shape[1]), "neighbours_stored": int(nbr_ids.shape[1]), "built": time.strftime("%Y-%m-%dT%H:%M:%S")},
    )
    _checkpoint("published")
    (folder / BUILD).unlink(missing_ok=True)


def _upgrade_ids(folder: Path, manifest: dict | None, docs: list[Document]) -> bool:
    """A complete format-1 index differs from format 2 only in its ids file: when the old file
    gives back exactly the corpus's ids (none held whitespace), write them as JSON and publish the
    manifest as format 2, in seconds, instead of rebuilding BM25 and the neighbour graph."""
    old = folder / OLD_DOC_IDS
    if not manifest or manifest.get("format") != 1 or not old.exists():
        return False
    ids = [d.id for d in docs]
    if old.read_text(encoding="utf-8").split() != ids:
        return False  # an id with whitespace was cut: only a build makes the index right
    write_json(folder / DOC_IDS, ids)
    write_json(folder / MANIFEST, {**manifest, "format": FORMAT_VERSION})
    old.unlink()
    return True


def _collections(*states: dict | None) -> list[dict]:
    """The Chroma collections (name and server) a --rebuild must delete: those of the complete
    index, of a build in progress, and those a killed --rebuild had not deleted yet."""
    found: list[dict] = []
    for state in states:
        if not state:
            continue
        entries = [*state.get("discard", [])]
        if state.get("collection"):
            entries.append({"collection": state["collection"], "chroma_url": state.get("chroma_url", "")})
        found += [e for e in entries if e not in found]
    return found


def _discard(folder: Path, collections: list[dict], chroma_url: str) -> None:
    """Remove a previous build: its Chroma collections (through the client, so a server's copy goes
    too and an open in-process client stays valid) and the files beside them. The manifest names
    them, so only collections named as this module names them, in the operator's Chroma, go: one on
    a server other than ``chroma_url`` is left where it is."""
    for entry in collections:
        url = entry.get("chroma_url", "")
        if not re.fullmatch(r"sunar-[0-9a-f]{16}", str(entry.get("collection"))):
            continue
        if url and url != chroma_url:
            log.warning("collection %s stays on the Chroma server %s (not the one given); delete it there if unwanted", entry["collection"], url)
            continue
        if not url and not (folder / "chroma").exists():
            continue
        client = make_client(str(folder / "chroma"), url or None)
        with contextlib.suppress(Exception):  # already gone
            client.delete_collection(entry["collection"])
        _checkpoint("collection-deleted")
    for name in (DOC_IDS, OLD_DOC_IDS, "neighbours.json", "neighbours.ids.npy", "neighbours.scores.npy"):
        (folder / name).unlink(missing_ok=True)
    shutil.rmtree(folder / "bm25", ignore_errors=True)


def _read_ids(path: Path) -> list[str]:
    with contextlib.suppress(OSError, ValueError):
        ids = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(ids, list) and all(isinstance(i, str) for i in ids):
            return ids
    raise IndexNotReady(f"{path} is missing or damaged; rebuild with: sunar index CORPUS --index {path.parent} --rebuild")


class Index:
    """A complete index, opened for retrieval. Stores know nothing of LLMs. ``chroma_url`` is the
    operator's: a manifest's URL is only a hint in the error when none is given."""

    def __init__(self, folder: str | Path, *, chroma_url: str = "", neighbours: int | None = None):
        self.folder = Path(folder)
        manifest = _read_json(self.folder / MANIFEST)
        if manifest is None:
            state = "is incomplete (a build was interrupted or is running)" if (self.folder / BUILD).exists() else "does not exist"
            raise IndexNotReady(f"index {self.folder} {state}; build it with: sunar index CORPUS --index {self.folder}")
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
        self.doc_ids = _read_ids(self.folder / DOC_IDS)
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


#: Reciprocal rank fusion's constant (Cormack et al., 2009): a document's fused score is
#: sum over rankings of 1 / (RRF_K + rank), rank counted from 1.
RRF_K = 60


def fuse(rankings: Sequence[Sequence[tuple[str, float]]], depth: int) -> list[tuple[str, float]]:
    """Reciprocal rank fusion of rankings of (id, score): the top ``depth`` by fused score, ties
    broken by the first ranking's order."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, (doc_id, _) in enumerate(ranking, start=1):
            fused[doc_id] = fused.get(doc_id, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(fused.items(), key=lambda item: -item[1])[:depth]
