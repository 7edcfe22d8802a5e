"""The index's cost curve: building and reading indexes of 10k, 100k and 1M documents (prints
figures; not a timed test).

    python -m benchmarks.bench_scale [--sizes 10000,100000,1000000] [--work DIR] [--keep] [--chroma-server]

Each size is a synthetic corpus and its vectors (benchmarks/scale_data.py: Zipf texts of ~80 words,
384-dimension unit vectors with nested cluster structure), indexed with ``build_index(...,
vectors=FILE)``, the path of ``sunar index --vectors FILE``: no embedding model runs. Reported per
size, each measured in a process of its own (so one size's memory never counts in another's):

- per build stage, seconds and peak resident memory of the building process (the kernel's high
  water mark, reset as each stage begins): read (corpus and vectors file), Chroma insert, BM25,
  neighbour graph, publish (document order and manifest). The build makes the graph as the product
  does (exact up to EXACT_LIMIT documents, Chroma's HNSW above); the other method is then timed on
  the same vectors, except the exact one above EXACT_LIMIT (its cost grows with n squared: the
  estimate from the measured sizes is printed instead);
- the HNSW graph's recall of the exact 100 (and 10) nearest neighbours on 1000 sampled documents;
- in a fresh reading process (as a server opens the index): opening time and memory, and
  per-question latency of the first stage (dense search by a query vector, BM25, their fusion, to
  depth 100), a neighbour lookup (k=10) and fetching 100 documents. Embedding the question (MiniLM,
  the same at any size) is not included.

With ``--chroma-server`` the index lives in a Chroma server this script starts (``chroma run``), as
several server processes share one index; its peak memory is reported beside the reader's.

Results go to benchmarks/results/bench_scale/results.json (one entry per size and setting, kept
across runs) and a markdown table is printed. Heavy (1M documents: about an hour, 10 GB): run it when nothing else does.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

from benchmarks.scale_data import (
    PeakMemory,
    exact_neighbours,
    query_words,
    recall,
    synthetic_vectors,
    write_corpus,
    write_vectors_file,
)

RESULTS = Path(__file__).resolve().parent / "results" / "bench_scale" / "results.json"
SAMPLE, QUESTIONS, DEPTH, K = 1000, 200, 100, 100
STAGES = ("read", "chroma", "bm25", "graph", "publish")


class Stages:
    """Seconds and peak memory of each stage, from ``build_index``'s ``on_stage`` hook (or by hand)."""

    def __init__(self) -> None:
        self.memory, self.figures, self.current, self.started = PeakMemory(), {}, "", 0.0

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        if self.current:
            self.figures[self.current] = {"seconds": round(now - self.started, 3), "peak_mb": round(self.memory.peak())}
        self.current, self.started = ("" if name == "done" else name), now
        self.memory.reset()


def data(size: int, work: Path) -> dict:
    """The synthetic corpus and its vectors file (a process of its own: the build's memory is the build's)."""
    from sunar.models.embedder import Embedder

    started = time.perf_counter()
    ids = write_corpus(work / "corpus.jsonl", size)
    write_vectors_file(work / "vectors.npz", ids, synthetic_vectors(size), Embedder("minilm").name)
    return {"synthetic_data_seconds": round(time.perf_counter() - started, 1)}


def build(size: int, work: Path, url: str = "") -> dict:
    """The build as ``sunar index --vectors`` runs it, then the other graph method and recall."""
    from sunar.stores.chroma import ChromaStore, make_client
    from sunar.stores.index import Index, build_index
    from sunar.stores.neighbours import EXACT_LIMIT, exact_knn
    from sunar.stores.steps import chroma_knn

    corpus, vectors_file = work / "corpus.jsonl", work / "vectors.npz"
    stages = Stages()
    stats = build_index(corpus, work / "index", vectors=vectors_file, neighbours=K, chroma_url=url, progress=False, on_stage=stages)
    index = Index(work / "index", neighbours=K, chroma_url=url)
    built = index.graph.header["method"]
    figures = {"documents": stats.documents, "stages": stages.figures, "graph_method": built}
    ids = index.doc_ids
    with np.load(vectors_file) as given:
        vectors = given["vectors"]  # unit rows already: the generator normalises them

    graphs = {built: np.asarray(index.graph.ids)}
    other = "hnsw" if built == "exact" else "exact"
    if other == "exact" and size > EXACT_LIMIT:
        figures["exact_graph"] = "skipped: exact search grows with n squared (see the estimate)"
    else:
        store = ChromaStore(make_client(str(work / "index" / "chroma"), url or None), index.manifest["collection"], index.manifest["embedder"])
        stages(f"graph_{other}")
        graphs[other] = exact_knn(vectors, K)[0] if other == "exact" else chroma_knn(store, vectors, ids, K)[0]
        stages("done")

    rng = np.random.default_rng(7)
    sample = rng.choice(size, min(SAMPLE, size), replace=False)
    truth = exact_neighbours(vectors, sample, K)
    figures["recall"] = {
        method: {f"at_{k}": round(recall(graph[sample, :k], truth[:, :k]), 4) for k in (10, K)} for method, graph in graphs.items()
    }
    asked = rng.choice(size, QUESTIONS, replace=False)
    noisy = vectors[asked] + rng.normal(scale=0.03, size=(QUESTIONS, vectors.shape[1])).astype(np.float32)
    docs = index.documents([ids[i] for i in asked])
    np.savez(work / "questions.npz", vectors=noisy / np.linalg.norm(noisy, axis=1, keepdims=True),
             texts=np.array([query_words(d.text, rng) for d in docs], dtype=str))
    return figures


def read(work: Path, url: str = "") -> dict:
    """Opening the index and answering questions, in a fresh process, as a server would."""
    from sunar.stores.fusion import fuse
    from sunar.stores.index import Index

    memory = PeakMemory()
    started = time.perf_counter()
    index = Index(work / "index", neighbours=10, chroma_url=url)
    figures = {"open_seconds": round(time.perf_counter() - started, 3), "open_rss_mb": round(memory.now())}
    questions = np.load(work / "questions.npz")
    times: dict[str, list[float]] = {k: [] for k in ("dense", "bm25", "fusion", "first_stage", "neighbours", "documents")}
    for i, (vector, text) in enumerate(zip(questions["vectors"], questions["texts"].tolist(), strict=True)):
        clock = [time.perf_counter()]
        dense = index.store.query(vector, DEPTH)
        clock.append(time.perf_counter())
        sparse = index.bm25.search(text, DEPTH)
        clock.append(time.perf_counter())
        fused = fuse([sparse, dense], DEPTH)
        clock.append(time.perf_counter())
        index.neighbours(fused[0][0])
        clock.append(time.perf_counter())
        index.documents([d for d, _ in fused])
        clock.append(time.perf_counter())
        if i >= 10:  # the first questions warm the caches
            for key, spent in zip(("dense", "bm25", "fusion", "neighbours", "documents"), np.diff(clock).tolist(), strict=True):
                times[key].append(spent)
            times["first_stage"].append(clock[3] - clock[0])
    figures["latency_ms"] = {k: {"median": round(1000 * statistics.median(v), 2), "p95": round(1000 * float(np.percentile(v, 95)), 2)} for k, v in times.items()}
    figures["peak_rss_mb"] = round(memory.peak())
    return figures


class ChromaServer:
    """A Chroma server (``chroma run``) on a free local port for the block, as an operator runs one."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self) -> ChromaServer:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        chroma = Path(sys.executable).with_name("chroma")
        cmd = [str(chroma), "run", "--path", str(self.path), "--host", "127.0.0.1", "--port", str(port)]
        self.process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            with contextlib.suppress(OSError), urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=1):
                return self
            time.sleep(0.1)
        self.process.kill()
        raise SystemExit(f"error: the Chroma server did not answer at {self.url}")

    def memory(self) -> dict:
        """The server's resident memory now and at its peak (MB)."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return {k: round(int(re.search(rf"^{k}:\s+(\d+) kB", status, re.M).group(1)) / 1024) for k in ("VmRSS", "VmHWM")}

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def child(kind: str, size: int, work: Path, url: str = "") -> dict:
    """Run :func:`data`, :func:`build` or :func:`read` in a process of its own; its figures come back as JSON."""
    out = work / f"{kind}.json"
    cmd = [sys.executable, "-m", "benchmarks.bench_scale", "--child", kind, "--size", str(size), "--work", str(work), "--chroma-url", url]
    subprocess.run(cmd, check=True)
    return json.loads(out.read_text())


def exact_estimate(results: dict, result: dict) -> str:
    """The exact graph's time where it was skipped: the largest measured one's, times (n / n0) squared."""
    measured = [(r["documents"], r["stages"]["graph" if r["graph_method"] == "exact" else "graph_exact"]["seconds"]) for r in results.values()
                if "exact" in r["recall"]]
    if not measured:
        return "exact: skipped"
    n0, seconds = max(measured)
    return f"exact: skipped, ~{seconds * (result['documents'] / n0) ** 2 / 3600:.0f} h by n^2 from {n0:,}"


def other_graph(result: dict) -> str | None:
    """The stage key of the neighbour graph timed by the method the build did not use
    ("graph_hnsw", "graph_exact"), or None where it was skipped."""
    return next((key for key in result["stages"] if key.startswith("graph_")), None)


def build_seconds(result: dict) -> float:
    """The whole build's seconds: its stages, without the other method's graph."""
    return sum(v["seconds"] for k, v in result["stages"].items() if k in STAGES)


def table(results: dict) -> str:
    """The markdown tables of all sizes in ``results``."""
    sizes = sorted(results, key=lambda key: (results[key]["documents"], key))
    head = "| | " + " | ".join(f"{results[s]['documents']:,} docs{' (Chroma server)' if 'chroma_server' in results[s] else ''}" for s in sizes)
    head += " |\n|---|" + "---|" * len(sizes) + "\n"

    def row(name: str, cell) -> str:  # noqa: ANN001
        return f"| {name} | " + " | ".join(cell(results[s]) for s in sizes) + " |\n"

    def stage(key: str):  # noqa: ANN202
        return lambda r: f"{r['stages'][key]['seconds']:.1f} s, {r['stages'][key]['peak_mb']} MB" if key in r["stages"] else "-"

    out = "### Build: seconds, peak RSS of the building process\n\n" + head
    names = {"read": "read corpus + vectors file", "chroma": "Chroma insert", "bm25": "BM25", "publish": "publish (ids, manifest)"}
    for key in STAGES:
        if key == "graph":
            out += row("neighbour graph (as built)", lambda r: f"{r['graph_method']}: " + stage("graph")(r))
            out += row("neighbour graph, other method", lambda r: f"{m[6:]}: " + stage(m)(r) if (m := other_graph(r)) else exact_estimate(results, r))
        else:
            out += row(names[key], stage(key))
    out += row("whole build", lambda r: f"{build_seconds(r):.1f} s")
    out += row("HNSW recall@10 / @100 of exact", lambda r: "{at_10:.3f} / {at_100:.3f}".format(**r["recall"]["hnsw"]) if "hnsw" in r["recall"] else "-")
    out += "\n### Reading (a fresh process, as a server): median (p95) ms per question\n\n" + head
    out += row("open the index", lambda r: f"{r['read']['open_seconds']:.2f} s, {r['read']['open_rss_mb']} MB")
    for key, name in (("dense", "dense search, depth 100"), ("bm25", "BM25, depth 100"), ("fusion", "fusion"), ("first_stage", "first stage (the three)"),
                      ("neighbours", "neighbour lookup, k=10"), ("documents", "fetch 100 documents")):
        out += row(name, lambda r, key=key: "{median:.1f} ({p95:.1f})".format(**r["read"]["latency_ms"][key]))
    out += row("peak RSS of the reader", lambda r: f"{r['read']['peak_rss_mb']} MB")
    out += row("peak RSS of the Chroma server", lambda r: f"{r['chroma_server']['VmHWM']} MB" if "chroma_server" in r else "(in the reader)")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="corpus sizes, comma-separated")
    parser.add_argument("--work", type=Path, default=None, help="folder for the corpora and indexes (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the corpora and indexes")
    parser.add_argument("--results", type=Path, default=RESULTS, help="the JSON file of results, updated per size (default: %(default)s)")
    parser.add_argument("--chroma-server", action="store_true", help="keep the index in a Chroma server (started here) instead of in-process")
    parser.add_argument("--child", choices=("data", "build", "read"), help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--chroma-url", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run = {"data": lambda: data(args.size, args.work), "build": lambda: build(args.size, args.work, args.chroma_url),
               "read": lambda: read(args.work, args.chroma_url)}
        figures = run[args.child]()
        (args.work / f"{args.child}.json").write_text(json.dumps(figures, indent=2))
        return

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    root = args.work or Path(tempfile.mkdtemp(prefix="sunar-bench-scale-"))
    results = json.loads(args.results.read_text()) if args.results.exists() else {}
    for size in sizes:
        work = root / str(size)
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        started = time.perf_counter()
        with ChromaServer(work / "chroma-server") if args.chroma_server else contextlib.nullcontext() as server:
            url = server.url if server else ""
            figures = child("data", size, work) | child("build", size, work, url) | {"read": child("read", size, work, url)}
            if server:
                figures["chroma_server"] = server.memory()
        figures["wall_seconds"] = round(time.perf_counter() - started, 1)
        figures["load_average_after"] = round(os.getloadavg()[0], 2)  # others' work on the machine slows every stage
        results[f"{size}{' chroma-server' if args.chroma_server else ''}"] = figures
        args.results.parent.mkdir(parents=True, exist_ok=True)
        args.results.write_text(json.dumps(results, indent=2) + "\n")
        print(f"{size:,} documents: {figures['wall_seconds']:.0f} s in all", flush=True)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if not args.keep and args.work is None:
        shutil.rmtree(root, ignore_errors=True)
    print(table(results))


if __name__ == "__main__":
    main()
