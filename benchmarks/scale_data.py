"""Synthetic corpora for benchmarks/bench_scale.py: texts, vectors, and the measures the benchmark
reports (exact neighbours of a sample, recall, peak memory).

Embedding a million paragraphs takes hours on two CPU cores, so the scale benchmark indexes
synthetic paragraphs whose statistics were matched to the project's 24k-paragraph MuSiQue/2Wiki
corpus embedded with MiniLM (measured on it, at 24k synthetic documents in brackets):

- **texts**: 60-100 words (real: 84 on average) drawn from a Zipf-Mandelbrot law (exponent 1.1,
  offset 3) over a vocabulary of 2M words whose 33 most frequent are bm25s's English stopwords, so
  BM25 drops them as it drops real ones: 29% of the tokens are stopwords (29%); the 100th / 1000th /
  10000th word occurs 1669 / 254 / 16 times (about 1900 / 160 / 13). Real text repeats its words
  more (topics, names): 94k distinct words (about 280k), so the vocabulary, and BM25's memory for
  it, is larger here than in a real corpus of the same size;
- **vectors**: 384 dimensions, unit length, built as nested groups of documents (topics of 2048,
  then 128, 8 and 2) whose offsets share a decaying spectrum, plus noise and a common direction.
  Cosine of the 1st / 10th / 100th nearest neighbour 0.59 / 0.42 / 0.31 on the real corpus (0.64 /
  0.41 / 0.32), of a random pair 0.027 (0.035); the first 64 principal directions hold 61% of the
  variance (61%). Rows are shuffled, so the corpus order says nothing about the groups.

An approximate index's recall on such data indicates, not measures, its recall on real embeddings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np

DIM = 384
#: (documents per group, weight of the group's offset), coarse to fine; each size divides the previous.
LEVELS = ((2048, 0.6), (128, 0.6), (8, 0.6), (2, 0.8))
SPECTRUM, NOISE, COMMON = 0.35, 1.0, 0.15
CHUNK = 32 * LEVELS[0][0]  # rows generated at once: whole top-level groups
VOCABULARY, ZIPF, OFFSET = 2_000_000, 1.1, 3.0
#: bm25s's 33 English stopwords, roughly in their order of frequency in English text.
STOPWORDS = ("the", "of", "and", "in", "to", "a", "is", "was", "for", "on", "as", "by", "with", "at", "an", "that", "it", "be",
             "are", "this", "or", "not", "their", "into", "but", "they", "these", "no", "if", "such", "then", "there", "will")
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]  # 70 syllables: words of 2-4 are never stopwords


def synthetic_vectors(n: int, dim: int = DIM, seed: int = 0) -> np.ndarray:
    """``n`` unit float32 rows with the nested group structure above, in shuffled order; built in
    chunks of whole top-level groups, so the only array as large as the result is the result."""
    rng = np.random.default_rng(seed)
    scale = (np.arange(1, dim + 1, dtype=np.float32) ** -SPECTRUM).astype(np.float32)
    common = np.full(dim, COMMON / np.sqrt(dim), dtype=np.float32)
    order = rng.permutation(n)
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, CHUNK):
        rows = min(CHUNK, n - start)
        x = rng.standard_normal((rows, dim), dtype=np.float32) * (scale * NOISE)
        for size, weight in LEVELS:
            groups = -(-rows // size)
            offsets = rng.standard_normal((groups, dim), dtype=np.float32) * (scale * weight)
            x += offsets[np.arange(rows) // size]
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        x += common
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        out[order[start : start + rows]] = x
    return out


def word(rank: int) -> str:
    """The vocabulary's word of frequency rank ``rank`` (0 = most frequent): a stopword for the
    first ranks, then a distinct made-up word of two or more syllables."""
    if rank < len(STOPWORDS):
        return STOPWORDS[rank]
    r = rank - len(STOPWORDS) + len(SYLLABLES)  # at least two syllables
    parts = []
    while r:
        r, s = divmod(r, len(SYLLABLES))
        parts.append(SYLLABLES[s])
    return "".join(reversed(parts))


class Zipf:
    """Word ranks (0 = most frequent) drawn with probability proportional to
    1 / (rank + 1 + ``offset``) ** ``exponent`` (the Zipf-Mandelbrot law)."""

    def __init__(self, size: int = VOCABULARY, exponent: float = ZIPF, offset: float = OFFSET):
        weights = 1.0 / (np.arange(1, size + 1, dtype=np.float64) + offset) ** exponent
        self.cdf = np.cumsum(weights / weights.sum())
        self.words: dict[int, str] = {}

    def ranks(self, rng: np.random.Generator, count: int) -> np.ndarray:
        return np.minimum(np.searchsorted(self.cdf, rng.random(count)), len(self.cdf) - 1)

    def text(self, ranks: np.ndarray) -> str:
        words = self.words
        return " ".join([words.get(r) or words.setdefault(r, word(r)) for r in ranks.tolist()])


def synthetic_documents(n: int, seed: int = 0, words: tuple[int, int] = (60, 100)) -> Iterator[dict]:
    """``n`` corpus records ``{id, title, text}``: ids d0000000..., a title of two content words,
    a text of ``words`` (low, high) words from the Zipf law."""
    rng = np.random.default_rng(seed + 1)
    zipf = Zipf()
    width = len(str(max(n - 1, 1)))
    for start in range(0, n, 10_000):
        rows = min(10_000, n - start)
        lengths = rng.integers(words[0], words[1] + 1, rows)
        ranks = zipf.ranks(rng, int(lengths.sum()))
        titles = zipf.ranks(rng, 2 * rows) + len(STOPWORDS)
        cuts = np.cumsum(lengths)[:-1]
        for i, body in enumerate(np.split(ranks, cuts)):
            title = zipf.text(titles[2 * i : 2 * i + 2]).title()
            yield {"id": f"d{start + i:0{width}d}", "title": title, "text": zipf.text(body)}


def write_corpus(path: Path, n: int, seed: int = 0) -> list[str]:
    """The synthetic corpus as JSON Lines at ``path``; returns its ids in order."""
    ids = []
    with open(path, "w", encoding="utf-8") as f:
        for doc in synthetic_documents(n, seed):
            ids.append(doc["id"])
            f.write(json.dumps(doc) + "\n")
    return ids


def write_vectors_file(path: Path, ids: list[str], vectors: np.ndarray, embedder: str) -> None:
    """A vectors file as ``sunar index --vectors`` reads it (see sunar.stores.vectors)."""
    with open(path, "wb") as f:  # a file object: numpy adds no ".npz" to the name
        np.savez(f, ids=np.array(ids, dtype=str), vectors=vectors, embedder=np.array(embedder))


def query_words(text: str, rng: np.random.Generator, count: int = 8) -> str:
    """A question-like query: ``count`` words of a document's text, stopwords and all."""
    words = text.split()
    picks = rng.choice(len(words), min(count, len(words)), replace=False)
    return " ".join(words[i] for i in sorted(picks))


def exact_neighbours(vectors: np.ndarray, rows: np.ndarray, k: int, block: int = 256) -> np.ndarray:
    """The exact ``k`` nearest rows (cosine, best first) of each row in ``rows``, itself excluded."""
    out = np.empty((len(rows), k), dtype=np.int64)
    for start in range(0, len(rows), block):
        part = rows[start : start + block]
        sims = vectors[part] @ vectors.T
        sims[np.arange(len(part)), part] = -np.inf
        top = np.argpartition(sims, -k, axis=1)[:, -k:]
        order = np.argsort(-np.take_along_axis(sims, top, axis=1), axis=1, kind="stable")
        out[start : start + len(part)] = np.take_along_axis(top, order, axis=1)
    return out


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    """Mean share of each row's true neighbours (``truth``, n x k) that ``found`` (n x k') holds."""
    k = truth.shape[1]
    return float(np.mean([len(set(f.tolist()) & set(t.tolist())) / k for f, t in zip(found, truth, strict=True)]))


class PeakMemory:
    """Peak resident memory (MB) of this process since the last :meth:`reset`: the kernel's high
    water mark (VmHWM), which ``/proc/self/clear_refs`` resets (Linux). Exact, no sampling."""

    STATUS, CLEAR = Path("/proc/self/status"), Path("/proc/self/clear_refs")

    def reset(self) -> None:
        self.CLEAR.write_text("5")

    def _read(self, field: str) -> float:
        found = re.search(rf"^{field}:\s+(\d+) kB", self.STATUS.read_text(), re.M)
        return int(found.group(1)) / 1024 if found else float("nan")

    def peak(self) -> float:
        return self._read("VmHWM")

    def now(self) -> float:
        return self._read("VmRSS")
