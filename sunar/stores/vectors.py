"""Paragraph vectors computed elsewhere (a GPU, a batch job) for ``sunar index --vectors FILE``.

Embedding a million paragraphs with MiniLM on two CPU cores takes hours; a GPU takes minutes. The
file that carries the vectors over is an ``.npz`` (numpy's zip of arrays, read without pickle)::

    ids        the corpus's ids as strings (a numpy unicode array), in the corpus's order: the
               paragraphs ``sunar index`` keeps (bad lines, empty texts and repeated ids skipped)
    vectors    float32, shape (len(ids), the embedder's dimension), row i the vector of ids[i];
               normalised to unit length on load (so they may be given unnormalised)
    embedder   the embedder's canonical name (``Embedder(spec).name``, e.g.
               sentence-transformers/all-MiniLM-L6-v2): queries are embedded with it

``sunar vectors CORPUS OUT.npz [--embedder E] [--device cuda]`` writes one with this code, which
embeds what an index embeds (a paragraph's title, then its text). :func:`load_vectors` checks a file
against the corpus and the index's embedder before anything is written, each failure one line.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tqdm import tqdm

from sunar.errors import SunarError
from sunar.models.embedder import Embedder
from sunar.stores.corpus import CorpusReport, read_corpus

KEYS = ("ids", "vectors", "embedder")
BATCH = 1024


def write_vectors(
    corpus: str | Path, out: str | Path, *, embedder: str = "minilm", device: str = "cpu", progress: bool = True, report: CorpusReport | None = None
) -> tuple[int, int, str]:
    """Embed ``corpus`` into the vectors file ``out`` (written whole, then renamed into place, so a
    killed run leaves no file that looks complete): (paragraphs, dimension, embedder name)."""
    model = Embedder(embedder, device=device)  # an unknown device fails before the corpus is read
    docs = read_corpus(corpus, report)
    vectors = np.empty((len(docs), model.dim), dtype=np.float32)
    with tqdm(total=len(docs), desc="embedding", unit="doc", disable=not progress) as bar:
        for start in range(0, len(docs), BATCH):
            part = docs[start : start + BATCH]
            vectors[start : start + len(part)] = model.embed([d.content for d in part])
            bar.update(len(part))
    out = Path(out)
    part_file = out.with_name(out.name + ".part")
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(part_file, "wb") as f:  # a file object: numpy adds no ".npz" to the name
            np.savez(f, ids=np.array([d.id for d in docs], dtype=str), vectors=vectors, embedder=np.array(model.name))
        os.replace(part_file, out)
    except BaseException:
        part_file.unlink(missing_ok=True)
        raise
    return len(docs), vectors.shape[1], model.name


def load_vectors(path: str | Path, ids: Sequence[str], model: Embedder) -> np.ndarray:
    """The vectors of ``path`` for the corpus ``ids`` (float32, unit rows), once they are checked:
    the embedder, the dimension, the count, the order and finite, nonzero values."""
    again = f"write it again from this corpus with: sunar vectors CORPUS {path} --embedder EMBEDDER"
    try:
        with np.load(path, allow_pickle=False) as data:
            missing = [k for k in KEYS if k not in data.files]
            if missing:
                raise SunarError(f"vectors file {path} lacks {', '.join(missing)} (it needs ids, vectors and embedder); {again}")
            given_ids, embedder = data["ids"], data["embedder"]
            if embedder.size != 1 or given_ids.ndim != 1 or given_ids.dtype.kind != "U":
                raise SunarError(f"vectors file {path} must hold embedder as one string and ids as a 1-D string array; {again}")
            if str(embedder.item()) != model.name:
                raise SunarError(
                    f"vectors file {path} holds {embedder.item()} vectors, but this index embeds queries with {model.name}; "
                    f"index with that --embedder, or {again}"
                )
            vectors = data["vectors"]
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:  # absent, not a zip, or pickled objects
        raise SunarError(f"cannot read vectors file {path} ({str(exc).splitlines()[0]}); {again}") from exc
    if vectors.dtype.kind != "f" or vectors.ndim != 2 or vectors.shape[1] != model.dim:
        raise SunarError(f"vectors file {path} holds {vectors.dtype} vectors of shape {vectors.shape}, but {model.name} gives {model.dim} dimensions; {again}")
    if len(vectors) != len(given_ids) or len(given_ids) != len(ids):
        raise SunarError(
            f"vectors file {path} holds {len(given_ids)} ids and {len(vectors)} vectors for a corpus of {len(ids)} paragraphs "
            f"(after skipping bad lines); {again}"
        )
    differs = next((i for i, (a, b) in enumerate(zip(given_ids, ids, strict=True)) if a != b), None)
    if differs is not None:
        raise SunarError(
            f"vectors file {path} is not in the corpus's order: row {differs} is {str(given_ids[differs])!r}, the corpus has {ids[differs]!r}; {again}"
        )
    vectors = vectors.astype(np.float32, copy=False)
    norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))  # no temporary as large as the vectors
    bad = np.flatnonzero(~np.isfinite(norms) | (norms == 0))  # a NaN or infinity anywhere in a row shows here
    if bad.size:
        raise SunarError(
            f"vectors file {path}: the vector of {ids[bad[0]]!r} (row {bad[0]}) is not finite (NaN or infinity) or is zero"
            f"{f', and {bad.size - 1} more' if bad.size > 1 else ''}; {again}"
        )
    vectors /= norms[:, None]
    return vectors
