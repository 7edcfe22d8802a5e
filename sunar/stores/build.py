"""Building an index directory (``sunar index``): deciding what to build, finish or confirm, and
discarding a previous build; the stages themselves are in sunar.stores.steps, the files in
sunar.stores.layout.

Building is idempotent (a complete index of the same corpus and embedder is left alone) and resumes
after being killed at any point: build.json is written and the manifest removed before anything is
changed, documents already in Chroma are not embedded again, and a killed --rebuild finishes its
discarding on the next run, whether or not that run says --rebuild. With vectors computed elsewhere
(``--vectors FILE``, see sunar.stores.vectors) Chroma stores those rows instead of embedding, in the
same resumable batches; the file is checked before anything is written. One process builds in a
folder at a time (build.lock); reading an index, or confirming that it is complete, takes no lock.
"""

from __future__ import annotations

import contextlib
import logging
import re
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from sunar.errors import SunarError
from sunar.files import pid_lock, write_json
from sunar.models.embedder import Embedder
from sunar.stores.bm25 import has_terms
from sunar.stores.chroma import make_client
from sunar.stores.corpus import Document, fingerprint, read_corpus
from sunar.stores.layout import BUILD, DOC_IDS, FORMAT_VERSION, LOCK, MANIFEST, OLD_DOC_IDS, collection_name, read_json
from sunar.stores.steps import BuildStats, StageHook, checkpoint, run_stages
from sunar.stores.vectors import load_vectors

log = logging.getLogger(__name__)


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
    """Before anything is embedded: Chroma stores UTF-8, so a lone surrogate (a JSON escape such as
    \\ud800) cannot be stored, and BM25 needs at least one word to index."""
    for d in docs:
        try:
            f"{d.id}{d.title}{d.text}".encode()
        except UnicodeEncodeError:
            raise SunarError(f"corpus {corpus}: document {d.id!r} holds a lone surrogate escape (not valid Unicode); fix that line") from None
    if not has_terms(docs):
        raise SunarError(
            f"corpus {corpus}: none of its {len(docs)} paragraph(s) has a word to search by (only stop words, "
            "single letters or symbols); give paragraphs of text"
        )


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
    on_stage: StageHook | None = None,
) -> BuildStats:
    """Build (or finish, or confirm) the index of ``corpus`` in ``index_dir``, embedding on
    ``device``, or storing the checked ``vectors`` file's rows (:func:`load_vectors`). ``on_stage``
    is told each stage's name as it begins (benchmarks/bench_scale.py measures them with it)."""
    folder = Path(index_dir)
    stats = BuildStats()
    if on_stage:
        on_stage("read")
    docs = read_corpus(corpus, stats.report)
    _check_text(docs, corpus)
    stats.documents = len(docs)
    corpus_fp = fingerprint(Path(corpus))
    model = Embedder(embedder, device=device)

    def state() -> tuple[dict | None, dict | None, bool, bool]:
        """(manifest, build.json, rebuild?, up to date?) as the folder is now; another corpus or
        embedder is refused unless rebuilding."""
        manifest, pending = read_json(folder / MANIFEST), read_json(folder / BUILD)
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
        _build(folder, plan, docs, model, neighbours, _collections(manifest, pending) if again else [], stats, progress, given, on_stage)
    return stats


def _build(
    folder: Path, plan: dict, docs: list[Document], model: Embedder, neighbours: int, discard: list[dict], stats: BuildStats, progress: bool,
    given: np.ndarray | None, on_stage: StageHook | None,
) -> None:
    """Every step, ordered so that a kill anywhere leaves either the old index untouched or
    build.json without a manifest: the next run finishes the work. ``given``: the vectors of
    ``docs``, row for row, stored instead of embedding."""
    write_json(folder / BUILD, {**plan, "discard": discard} if discard else plan)
    checkpoint("planned")
    (folder / MANIFEST).unlink(missing_ok=True)  # from here on the index is not complete
    checkpoint("unpublished")
    if discard:
        _discard(folder, discard, plan["chroma_url"])
        write_json(folder / BUILD, plan)  # discarding done
    run_stages(folder, plan, docs, model, neighbours, stats, progress, given, on_stage)


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
        checkpoint("collection-deleted")
    for name in (DOC_IDS, OLD_DOC_IDS, "neighbours.json", "neighbours.ids.npy", "neighbours.scores.npy"):
        (folder / name).unlink(missing_ok=True)
    shutil.rmtree(folder / "bm25", ignore_errors=True)
