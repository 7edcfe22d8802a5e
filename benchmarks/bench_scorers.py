"""Benchmark of the offline scorers in the cross-encoder role of NAR re-ranking.

``python -m benchmarks.bench_scorers [--data DIR] [--limit N] [--depth 100] [--out results.json]``

The questions and paragraphs are DIR/dev.jsonl and DIR/corpus.jsonl (DIR: ``--data`` or
``$SUNAR_DATA``) unless ``--dev`` / ``--corpus`` name other files.

BM25 (built in memory over the corpus) gives the top-``depth`` candidates of each query; every
scorer then re-ranks those candidates and Recall@10 of the gold paragraphs is reported. Query sets:

  ``musique``      original MuSiQue questions (relevant: the 2 ``supporting_ids``)
  ``2wiki``        original 2WikiMultiHopQA questions (relevant: the 2 ``supporting_ids``)
  ``musique-sub``  gold MuSiQue sub-questions, ``#k`` replaced by the gold answer of step k
                   (relevant: the step's ``support_id``); NAR scores per sub-question

Systems: ``bm25`` (first-stage order, no re-ranking), ``dense``, ``splade``, ``hybrid@w``
(``cosine + w * splade``, as HybridScorer) and the oracle ``bm25 R@depth`` (the candidates contain
the paragraph). Document representations are computed once per document id, in batches, and reused
across queries; a few queries are re-scored with the real ``score()`` methods, which both checks
that the cached numbers equal ``score()`` and measures its cost (documents scored per second).

The Markdown table goes to stdout, progress to stderr, and table plus raw numbers to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from benchmarks import add_data_argument, data_dir
from sunar.models.scorer import DenseScorer, HybridScorer, Scorer, SpladeScorer
from sunar.stores.bm25 import BM25Index
from sunar.stores.corpus import Document, read_corpus

GROUPS = ("musique", "2wiki", "musique-sub")
GROUP_TITLES = {"musique": "MuSiQue questions", "2wiki": "2Wiki questions", "musique-sub": "MuSiQue sub-questions"}
#: Hybrid weights: per-query score spreads are about 0.12 (cosine) and 3.5 (SPLADE), so w ~ 0.035
#: gives both signals equal say; the grid brackets that point by a factor of ~7 either side.
DEFAULT_WEIGHTS = (0.005, 0.01, 0.02, 0.03, 0.05, 0.1)
TOP_K = 10
_PLACEHOLDER = re.compile(r"#(\d+)")
_START = time.perf_counter()


def say(message: str) -> None:
    """Print a progress line (with elapsed seconds) to stderr.

    Args:
        message: What to report.
    """
    print(f"[{time.perf_counter() - _START:7.1f}s] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------- queries


@dataclass(frozen=True)
class Query:
    """One benchmark query.

    Attributes:
        group: The query set (one of ``GROUPS``).
        text: The query text.
        relevant: Ids of the gold paragraphs.
    """

    group: str
    text: str
    relevant: frozenset[str]


def fill_placeholders(question: str, answers: Sequence[str]) -> str:
    """Replace ``#k`` by the gold answer of step k.

    Args:
        question: A sub-question, possibly with placeholders such as ``#1``.
        answers: Gold answers of the previous steps, in order.

    Returns:
        The question with every resolvable placeholder substituted; others are left as they are.
    """

    def answer(match: re.Match[str]) -> str:
        step = int(match.group(1))
        return answers[step - 1] if 1 <= step <= len(answers) else match.group(0)

    return _PLACEHOLDER.sub(answer, question)


def sub_questions(record: dict[str, Any]) -> list[Query]:
    """The gold sub-questions of a MuSiQue record, placeholders substituted.

    Args:
        record: A dev record with a ``decomposition`` list.

    Returns:
        One query per decomposition step.
    """
    steps = record.get("decomposition") or []
    answers = [step["answer"] for step in steps]
    return [
        Query("musique-sub", fill_placeholders(step["question"], answers[:i]), frozenset({step["support_id"]}))
        for i, step in enumerate(steps)
    ]


def load_queries(path: Path, limit: int | None) -> list[Query]:
    """Original questions of the dev records, then the MuSiQue sub-questions.

    Args:
        path: The dev JSONL file.
        limit: Use only the first ``limit`` records (all when None).

    Returns:
        The queries of all three sets.
    """
    with open(path, encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()][:limit]
    originals = [Query(r["dataset"], r["question"], frozenset(r["supporting_ids"])) for r in records]
    subs = [q for r in records if r["dataset"] == "musique" for q in sub_questions(r)]
    return originals + subs


# ------------------------------------------------------------------------------ representations


def length_sorted(docs: Sequence[Document]) -> list[Document]:
    """Documents ordered by content length, so batches carry little padding.

    Args:
        docs: The documents.

    Returns:
        A new list, shortest first.
    """
    return sorted(docs, key=lambda d: len(d.content))


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    """Consecutive slices of at most ``size`` items.

    Args:
        items: The sequence to split.
        size: The slice length.

    Yields:
        The slices, in order.
    """
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass
class RepresentationCache:
    """Dense embeddings and SPLADE vectors per document id, computed once and reused.

    Attributes:
        dense: The dense scorer whose embedder makes the vectors.
        splade: The SPLADE scorer whose ``encode`` makes the sparse vectors.
        batch_size: Documents per SPLADE forward pass (its logits are batch x tokens x vocabulary).
    """

    dense: DenseScorer
    splade: SpladeScorer
    batch_size: int = 16
    rows: dict[str, int] = field(default_factory=dict)
    dense_vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    splade_vectors: sparse.csr_matrix = field(default_factory=lambda: sparse.csr_matrix((0, 0), dtype=np.float32))
    seconds: dict[str, float] = field(default_factory=dict)
    encoded: int = 0

    def build(self, docs: Sequence[Document], path: Path | None = None) -> None:
        """Encode every document not cached yet, once.

        Args:
            docs: The distinct documents to cache.
            path: Optional ``.npz`` file of representations: read first (if it exists and was made
                by the same models), then rewritten with the newly encoded documents added.
        """
        if path is not None and path.exists():
            self.load(path)
        missing = length_sorted([d for d in docs if d.id not in self.rows])
        say(f"{len(docs) - len(missing)} documents cached on disk, {len(missing)} to encode")
        if not missing:
            return
        self.dense.embedder.embed(["warm-up"])  # load both models before timing
        self.splade.encode(["warm-up"])
        texts = [d.content for d in missing]
        dense = self._timed("dense", texts, self._embed_dense)
        splade = self._timed("splade", texts, self._encode_splade)
        self._append([d.id for d in missing], dense, splade)
        if path is not None:
            self.save(path)

    @property
    def models(self) -> str:
        """Which models made the representations (a stored file must match it)."""
        return f"{self.dense.embedder.name}|{self.splade.path}|{self.splade.max_length}"

    def _append(self, ids: Sequence[str], dense: np.ndarray, splade: sparse.csr_matrix) -> None:
        if self.rows:
            dense = np.vstack([self.dense_vectors, dense])
            splade = sparse.vstack([self.splade_vectors, splade], format="csr")
        self.rows.update({doc_id: len(self.rows) + i for i, doc_id in enumerate(ids)})
        self.dense_vectors, self.splade_vectors = dense, splade

    def save(self, path: Path) -> None:
        """Write the representations to an ``.npz`` file.

        Args:
            path: The file to write.
        """
        m = self.splade_vectors
        ids = np.array(list(self.rows))
        with open(path, "wb") as f:
            arrays = {"data": m.data, "indices": m.indices, "indptr": m.indptr, "shape": np.array(m.shape)}
            np.savez(f, models=np.array(self.models), ids=ids, dense=self.dense_vectors, **arrays)
        say(f"saved {len(ids)} document representations to {path}")

    def load(self, path: Path) -> None:
        """Read representations written by ``save``; a file made by other models is ignored.

        Args:
            path: The file to read.
        """
        with np.load(path) as f:
            if str(f["models"]) != self.models:
                say(f"ignoring {path}: made by {f['models']}, not {self.models}")
                return
            splade = sparse.csr_matrix((f["data"], f["indices"], f["indptr"]), shape=tuple(f["shape"]))
            self._append([str(i) for i in f["ids"]], f["dense"], splade)

    def _timed(self, name: str, texts: list[str], encode: Callable[[list[str]], Any]) -> Any:
        start = time.perf_counter()
        result = encode(texts)
        self.seconds[name] = time.perf_counter() - start
        self.encoded = len(texts)
        say(f"{name}: {len(texts)} documents encoded in {self.seconds[name]:.1f} s")
        return result

    def _embed_dense(self, texts: list[str]) -> np.ndarray:
        parts = []
        for done, part in enumerate(chunks(texts, 1024), start=1):
            parts.append(self.dense.embedder.embed(list(part)))
            say(f"dense: {min(done * 1024, len(texts))}/{len(texts)}")
        return np.vstack(parts)

    def _encode_splade(self, texts: list[str]) -> sparse.csr_matrix:
        parts = []
        for done, part in enumerate(chunks(texts, self.batch_size), start=1):
            parts.append(sparse.csr_matrix(self.splade.encode(part)))
            if done % 64 == 0 or done * self.batch_size >= len(texts):
                say(f"splade: {min(done * self.batch_size, len(texts))}/{len(texts)}")
        return sparse.vstack(parts, format="csr")

    def scores(self, query: str, ids: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Dense cosine and SPLADE dot product of the query with cached documents.

        Args:
            query: The query text.
            ids: Ids of cached documents.

        Returns:
            (dense scores, SPLADE scores), aligned with ``ids``.
        """
        rows = [self.rows[i] for i in ids]
        dense = self.dense_vectors[rows] @ self.dense.embedder.embed([query])[0]
        splade = self.splade_vectors[rows] @ self.splade.encode([query])[0]
        return np.asarray(dense, dtype=np.float64), np.asarray(splade, dtype=np.float64)


# -------------------------------------------------------------------------------------- systems


def combinations(weights: Sequence[float]) -> dict[str, tuple[float, float]]:
    """Re-rankers as (dense coefficient, SPLADE coefficient).

    Args:
        weights: The hybrid weights to try.

    Returns:
        System name to coefficients; ``hybrid@w`` is ``cosine + w * splade`` as in HybridScorer.
    """
    systems = {"dense": (1.0, 0.0), "splade": (0.0, 1.0)}
    systems.update({f"hybrid@{w:g}": (1.0, w) for w in weights})
    return systems


def recall(ranked: Sequence[str], relevant: frozenset[str], k: int) -> float:
    """Share of the relevant ids among the first ``k`` ranked ids.

    Args:
        ranked: Ids, best first.
        relevant: The gold ids.
        k: The cut-off.

    Returns:
        Recall@k in [0, 1].
    """
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def rerank(ids: Sequence[str], scores: np.ndarray) -> list[str]:
    """Ids by descending score; ties keep the first-stage order.

    Args:
        ids: Candidate ids in first-stage order.
        scores: One score per candidate.

    Returns:
        The re-ranked ids.
    """
    return [ids[i] for i in np.argsort(-scores, kind="stable")]


def query_recalls(
    query: Query, ids: list[str], cache: RepresentationCache, systems: dict[str, tuple[float, float]], depth: int
) -> dict[str, float]:
    """Recall@10 of every system (and the oracle) for one query.

    Args:
        query: The query.
        ids: Its BM25 candidates, best first.
        cache: Cached document representations.
        systems: Re-rankers as coefficients (see ``combinations``).
        depth: The first-stage depth (for the oracle's name).

    Returns:
        System name to recall.
    """
    result = {"bm25": recall(ids, query.relevant, TOP_K)}
    if ids:
        dense, splade = cache.scores(query.text, ids)
        for name, (a, b) in systems.items():
            result[name] = recall(rerank(ids, a * dense + b * splade), query.relevant, TOP_K)
    else:
        result.update(dict.fromkeys(systems, 0.0))
    result[f"oracle: bm25 R@{depth}"] = recall(ids, query.relevant, len(ids))
    return result


# ------------------------------------------------------------------------ verification and cost


def sample_positions(queries: Sequence[Query], per_group: int) -> list[int]:
    """Positions of the first ``per_group`` queries of each set: the fixed sample.

    Args:
        queries: All queries.
        per_group: How many to take from each set.

    Returns:
        Positions in ``queries``.
    """
    return [n for g in GROUPS for n in [n for n, q in enumerate(queries) if q.group == g][:per_group]]


def expected_scores(scorer_name: str, weight: float, dense: np.ndarray, splade: np.ndarray) -> np.ndarray:
    """What ``score()`` should return, from cached representations.

    Args:
        scorer_name: ``dense``, ``splade`` or ``hybrid``.
        weight: The hybrid weight.
        dense: Cached dense scores.
        splade: Cached SPLADE scores.

    Returns:
        The expected scores.
    """
    return {"dense": dense, "splade": splade, "hybrid": dense + weight * splade}[scorer_name]


def verify_and_time(
    scorers: dict[str, Scorer], cache: RepresentationCache, sample: Sequence[tuple[Query, list[Document]]]
) -> dict[str, dict[str, float]]:
    """Run each scorer's ``score()`` on the sample: assert it equals the cache and time it.

    Args:
        scorers: ``dense``, ``splade`` and ``hybrid`` scorers sharing the cache's models.
        cache: Cached representations.
        sample: Queries with their candidate documents.

    Returns:
        Per scorer: documents scored per second and the largest absolute difference to the cache.
    """
    stats = {}
    for name, scorer in scorers.items():
        seconds, docs_scored, worst = 0.0, 0, 0.0
        for query, docs in sample:
            start = time.perf_counter()
            got = np.asarray(scorer.score(query.text, docs))
            seconds += time.perf_counter() - start
            docs_scored += len(docs)
            dense, splade = cache.scores(query.text, [d.id for d in docs])
            want = expected_scores(name, getattr(scorer, "weight", 0.0), dense, splade)
            assert np.allclose(got, want, rtol=1e-4, atol=1e-4), f"{name}: cached scores differ from score()"
            worst = max(worst, float(np.max(np.abs(got - want))))
        stats[name] = {"docs_per_second": docs_scored / seconds, "max_abs_diff": worst, "docs": docs_scored}
        say(f"{name}.score(): {docs_scored / seconds:.1f} docs/s, max |score() - cached| = {worst:.2e}")
    return stats


# ---------------------------------------------------------------------------------------- report


def mean_by_group(per_query: Sequence[dict[str, float]], queries: Sequence[Query]) -> dict[str, dict[str, float]]:
    """Average per-query recalls within each query set.

    Args:
        per_query: System-to-recall maps, aligned with ``queries``.
        queries: The queries.

    Returns:
        System name to query set to mean recall.
    """
    table: dict[str, dict[str, float]] = {name: {} for name in per_query[0]}
    for group in GROUPS:
        rows = [r for r, q in zip(per_query, queries, strict=True) if q.group == group]
        for name in table:
            table[name][group] = float(np.mean([r[name] for r in rows])) if rows else float("nan")
    return table


def throughput_of(system: str, timing: dict[str, dict[str, float]]) -> str:
    """The ``score()`` throughput cell of a system.

    Args:
        system: The system name.
        timing: Output of ``verify_and_time``.

    Returns:
        Documents per second, or a dash for systems that are not scorers.
    """
    kind = system.split("@")[0]
    return f"{timing[kind]['docs_per_second']:.1f}" if kind in timing else "–"


def markdown_table(
    table: dict[str, dict[str, float]], counts: dict[str, int], timing: dict[str, dict[str, float]]
) -> str:
    """Recall@10 per system and query set, the best re-ranker of each column in bold.

    Args:
        table: Output of ``mean_by_group``.
        counts: Queries per set.
        timing: Output of ``verify_and_time``.

    Returns:
        The Markdown table.
    """
    rankers = [n for n in table if not n.startswith("oracle")]
    best = {g: max(table[n][g] for n in rankers) for g in GROUPS}
    header = [f"{GROUP_TITLES[g]} R@{TOP_K} (n={counts[g]})" for g in GROUPS]
    lines = ["| system | " + " | ".join(header) + " | score() docs/s |", "|---" * (len(GROUPS) + 2) + "|"]
    for name, row in table.items():
        cells = [f"**{row[g]:.3f}**" if name in rankers and row[g] == best[g] else f"{row[g]:.3f}" for g in GROUPS]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {throughput_of(name, timing)} |")
    return "\n".join(lines)


def cost_table(timing: dict[str, dict[str, float]], cache: RepresentationCache) -> str:
    """Scoring cost: ``score()`` per batch of candidates and batched, cached encoding.

    Args:
        timing: Output of ``verify_and_time``.
        cache: The cache (its encode times).

    Returns:
        The Markdown table.
    """
    seconds = dict(cache.seconds, hybrid=sum(cache.seconds.values()))
    batched = {k: f"{cache.encoded / v:.1f}" if v else "–" for k, v in seconds.items()}
    lines = [
        "| scorer | score() docs/s (fixed sample) | batched encode docs/s (cache) | max abs diff to cache |",
        "|---|---|---|---|",
    ]
    for name, stats in timing.items():
        lines.append(
            f"| {name} | {stats['docs_per_second']:.1f} | {batched.get(name, '–')} | {stats['max_abs_diff']:.1e} |"
        )
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options.

    Args:
        argv: Arguments (``sys.argv[1:]`` when None).

    Returns:
        The parsed options.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_argument(parser)
    parser.add_argument("--dev", type=Path, default=None, help="dev questions (JSONL; default: DIR/dev.jsonl)")
    parser.add_argument("--corpus", type=Path, default=None, help="corpus paragraphs (JSONL; default: DIR/corpus.jsonl)")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N dev records")
    parser.add_argument("--depth", type=int, default=100, help="BM25 candidates per query")
    parser.add_argument("--weights", type=float, nargs="+", default=list(DEFAULT_WEIGHTS), help="hybrid weights")
    parser.add_argument("--sample", type=int, default=1, help="queries per set re-scored with score() (check, cost)")
    parser.add_argument("--splade-batch", type=int, default=16, help="documents per SPLADE forward pass")
    parser.add_argument("--cache", type=Path, default=None, help="reuse/extend document representations (.npz)")
    parser.add_argument("--out", type=Path, default=None, help="write the tables and raw numbers here (JSON)")
    args = parser.parse_args(argv)
    if not (args.dev and args.corpus):
        folder = data_dir(args.data)
        args.dev = args.dev or folder / "dev.jsonl"
        args.corpus = args.corpus or folder / "corpus.jsonl"
    return args


def first_stage(index: BM25Index, queries: Sequence[Query], depth: int) -> list[list[str]]:
    """BM25 candidates of every query.

    Args:
        index: The BM25 index.
        queries: The queries.
        depth: Candidates per query.

    Returns:
        Candidate ids per query, best first.
    """
    return [[doc_id for doc_id, _ in index.search(q.text, depth)] for q in queries]


def evaluate(
    queries: Sequence[Query], candidates: Sequence[list[str]], cache: RepresentationCache, args: argparse.Namespace
) -> list[dict[str, float]]:
    """Per-query recalls of all systems.

    Args:
        queries: The queries.
        candidates: Their BM25 candidates.
        cache: Cached representations.
        args: Options (weights, depth).

    Returns:
        System-to-recall maps, aligned with ``queries``.
    """
    systems = combinations(args.weights)
    results = []
    for n, (query, ids) in enumerate(zip(queries, candidates, strict=True), start=1):
        results.append(query_recalls(query, ids, cache, systems, args.depth))
        if n % 100 == 0 or n == len(queries):
            say(f"re-ranked {n}/{len(queries)} queries")
    return results


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print the Markdown tables.

    Args:
        argv: Command-line arguments (``sys.argv[1:]`` when None).
    """
    args = parse_args(argv)
    start = time.perf_counter()
    docs = {d.id: d for d in read_corpus(args.corpus)}
    queries = load_queries(args.dev, args.limit)
    counts = {g: sum(q.group == g for q in queries) for g in GROUPS}
    say(f"{len(docs)} paragraphs; queries per set: {counts}")
    index = BM25Index.build(list(docs.values()))
    candidates = first_stage(index, queries, args.depth)
    unique = sorted({i for ids in candidates for i in ids})
    say(f"BM25 ready; {len(unique)} distinct candidate paragraphs")

    dense, splade = DenseScorer(), SpladeScorer()
    cache = RepresentationCache(dense, splade, batch_size=args.splade_batch)
    cache.build([docs[i] for i in unique], args.cache)
    scorers: dict[str, Scorer] = {"dense": dense, "splade": splade, "hybrid": HybridScorer(dense=dense, splade=splade)}
    sample = [(queries[n], [docs[i] for i in candidates[n]]) for n in sample_positions(queries, args.sample)]
    timing = verify_and_time(scorers, cache, sample)

    per_query = evaluate(queries, candidates, cache, args)
    table = mean_by_group(per_query, queries)
    markdown = markdown_table(table, counts, timing) + "\n\n" + cost_table(timing, cache)
    print(markdown)
    wall = time.perf_counter() - start
    say(f"done in {wall:.1f} s")
    if args.out:
        write_json(args, markdown, table, counts, timing, cache, queries, per_query, wall)


def write_json(
    args: argparse.Namespace,
    markdown: str,
    table: dict[str, dict[str, float]],
    counts: dict[str, int],
    timing: dict[str, dict[str, float]],
    cache: RepresentationCache,
    queries: Sequence[Query],
    per_query: Sequence[dict[str, float]],
    wall: float,
) -> None:
    """Write the tables and raw numbers to ``args.out``.

    Args:
        args: Options (also recorded).
        markdown: The printed tables.
        table: Mean recall per system and set.
        counts: Queries per set.
        timing: ``score()`` throughput and verification differences.
        cache: The cache (encode times, document count).
        queries: The queries.
        per_query: Per-query recalls.
        wall: Wall time of the run in seconds.
    """
    options = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
    payload = {
        "options": options,
        "markdown": markdown,
        f"recall@{TOP_K}": table,
        "queries_per_set": counts,
        "score_throughput": timing,
        "cache": {"documents": len(cache.rows), "encoded": cache.encoded, "encode_seconds": cache.seconds},
        "wall_seconds": wall,
        "per_query": [{"group": q.group, "query": q.text, **r} for q, r in zip(queries, per_query, strict=True)],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    say(f"wrote {args.out}")


if __name__ == "__main__":
    main()
