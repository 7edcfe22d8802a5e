"""Benchmark of the stores (prints figures; not a timed test).

    python -m benchmarks.bench_index --data DIR --index INDEX_DIR [--fresh]
        [--corpus corpus.jsonl] [--questions dev.jsonl]

DIR is the multi-hop data folder (``corpus.jsonl``, ``dev.jsonl``; default ``$SUNAR_DATA``);
``--corpus`` / ``--questions`` name other files. INDEX_DIR is where the index is built (or found).

Reports indexing throughput and peak memory (when it builds), the neighbour graph's build time,
neighbour lookup latency for 100 documents, and first-stage Recall@10/@100 of the gold paragraphs
for the original questions and the gold MuSiQue sub-questions (BM25, dense, and their reciprocal
rank fusion).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import time

import numpy as np

from benchmarks import add_data_argument, data_dir
from sunar.evals.data import read_questions
from sunar.stores.index import Index, build_index


def recall(ranked: list[str], relevant: list[str], k: int) -> float:
    return len(set(ranked[:k]) & set(relevant)) / max(1, len(relevant))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_argument(parser)
    parser.add_argument("--corpus", default=None, help="corpus JSONL (default: DIR/corpus.jsonl)")
    parser.add_argument("--questions", default=None, help="questions JSONL (default: DIR/dev.jsonl)")
    parser.add_argument("--index", required=True, help="index directory (built there, or reused when complete)")
    parser.add_argument("--fresh", action="store_true", help="delete the index first and time a full build")
    args = parser.parse_args()
    if not (args.corpus and args.questions):
        folder = data_dir(args.data)
        args.corpus = args.corpus or str(folder / "corpus.jsonl")
        args.questions = args.questions or str(folder / "dev.jsonl")

    if args.fresh:
        shutil.rmtree(args.index, ignore_errors=True)
    started = time.perf_counter()
    stats = build_index(args.corpus, args.index, progress=False)
    total = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("## Indexing")
    if stats.up_to_date:
        print(f"index already complete ({stats.documents} documents); run with --fresh to time a build")
    else:
        print(f"- documents: {stats.documents}, embedded now: {stats.embedded}")
        print(f"- embedding + Chroma: {stats.seconds_embed:.1f} s ({stats.embedded / max(stats.seconds_embed, 1e-9):.1f} docs/s)")
        print(f"- BM25: {stats.seconds_bm25:.1f} s; neighbour graph (k=100, exact): {stats.seconds_graph:.1f} s")
        print(f"- whole build: {total:.1f} s; peak memory (max RSS of this process): {peak_mb:.0f} MB")

    index = Index(args.index, neighbours=100)
    rng = np.random.default_rng(0)
    sample = [index.doc_ids[i] for i in rng.choice(index.size, 100, replace=False)]
    index.neighbours(sample[0])  # page in
    timings = []
    for _ in range(5):
        t = time.perf_counter()
        for doc_id in sample:
            index.neighbours(doc_id)
        timings.append(time.perf_counter() - t)
    print(f"- neighbour lookup, 100 documents x 100 neighbours: {statistics.median(timings) * 1000:.2f} ms (median of 5)")

    questions = read_questions(args.questions)
    print("\n## First-stage recall of the gold paragraphs")
    print("| query set | retriever | queries | R@10 | R@100 |")
    print("|---|---|---|---|---|")
    for kind in ("bm25", "dense", "fused"):
        sets = {
            "MuSiQue questions": [(q.question, q.supporting_ids) for q in questions if q.dataset == "musique"],
            "2Wiki questions": [(q.question, q.supporting_ids) for q in questions if q.dataset == "2wiki"],
            "MuSiQue gold sub-questions": [(s, [sid]) for q in questions for s, _, sid in q.sub_questions if sid],
        }
        for name, queries in sets.items():
            t = time.perf_counter()
            ranked = [[d for d, _ in index.first_stage(text, 100, kind)] for text, _ in queries]
            per_query = (time.perf_counter() - t) / max(1, len(queries)) * 1000
            r10 = statistics.mean(recall(r, rel, 10) for r, (_, rel) in zip(ranked, queries, strict=True))
            r100 = statistics.mean(recall(r, rel, 100) for r, (_, rel) in zip(ranked, queries, strict=True))
            print(f"| {name} | {kind} ({per_query:.1f} ms/query) | {len(queries)} | {r10:.3f} | {r100:.3f} |")


if __name__ == "__main__":
    main()
