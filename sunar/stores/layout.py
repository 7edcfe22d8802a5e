"""The files of an index directory, shared by the code that builds it and the code that reads it.

Layout of DIR::

    manifest.json        written last, atomically: its presence means the index is complete
    build.json           while a build runs or after it was killed: what is being built (and, for
                         a --rebuild, which old collections are still to be deleted)
    build.lock           flock'ed by the process building (the kernel releases it when it dies)
    doc_ids.json         the document order shared by BM25 rows and graph rows (a JSON list)
    chroma/              the persistent Chroma store (absent with a Chroma server URL)
    bm25/                the bm25s index
    neighbours.*         the neighbour graph (see sunar.stores.neighbours)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path

from sunar.errors import IndexNotReady

MANIFEST, BUILD, LOCK, DOC_IDS = "manifest.json", "build.json", "build.lock", "doc_ids.json"
OLD_DOC_IDS = "doc_ids.txt"  # format 1: one id per line, which ids with whitespace could not survive
FORMAT_VERSION = 2


def read_json(path: Path) -> dict | None:
    """A JSON file of the index, None when absent; a damaged one says how to rebuild."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise IndexNotReady(f"{path} is damaged ({exc}); rebuild with: sunar index CORPUS --index {path.parent} --rebuild") from exc


def read_ids(path: Path) -> list[str]:
    """The document order (doc_ids.json)."""
    with contextlib.suppress(OSError, ValueError):
        ids = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(ids, list) and all(isinstance(i, str) for i in ids):
            return ids
    raise IndexNotReady(f"{path} is missing or damaged; rebuild with: sunar index CORPUS --index {path.parent} --rebuild")


def collection_name(corpus_fp: str, embedder: str) -> str:
    """The Chroma collection of a corpus embedded by a model: another corpus or model, another collection."""
    return "sunar-" + hashlib.sha1(f"{corpus_fp}\n{embedder}".encode()).hexdigest()[:16]
