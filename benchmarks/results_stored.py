"""Markdown tables of outputs that keep no per-question records: a benchmark's ``results.json`` (its
raw rows) or ``output.txt``, and the ``metrics.json`` and ``run.json`` of runs from before the
predictions were committed. Read, not recomputed from answers; every figure still comes from a
committed file."""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Sequence
from pathlib import Path

from benchmarks.bench_scale import build_seconds, other_graph
from benchmarks.results_render import fmt, table
from benchmarks.results_runs import mean


def rescoring_table(runs: Sequence[Path], variant: str = "sunar") -> str:
    """``variant`` in runs that differ in ``rescoring`` (their ``run.json`` configuration; unset is
    the paper's), from their own ``metrics.json``."""
    rows = []
    for run in runs:
        m = json.loads((run / "metrics.json").read_text())["all"][variant]
        rescoring = json.loads((run / "run.json").read_text())["configuration"].get("rescoring", "paper")
        rows.append([f"`{run.name}`", f"`{rescoring}`", m["n"], round(m["cover_em"] * m["n"]), fmt(m["em"], 3), fmt(m["recall@10"], 3),
                     fmt(m.get("llm_calls"), 1), fmt(m["seconds"]["total"], 0)])
    return table(["run", "`rescoring`", "n", f"`{variant}` right (cover-EM)", "EM", "R@10", "LLM calls", "recorded s / q"], rows)


def first_stage_table(path: Path) -> str:
    """First-stage recall of the gold paragraphs per query set and retriever (``bench_index``'s
    ``output.txt``): R@10 / R@100, and the milliseconds per query."""
    found: dict[str, dict[str, str]] = {}
    retrievers: list[str] = []
    row = re.compile(r"^\| (?P<set>[^|]+) \| (?P<name>\w+) \((?P<ms>[\d.]+) ms/query\) \| (?P<n>\d+) \| (?P<r10>[\d.]+) \| (?P<r100>[\d.]+) \|$")
    for line in path.read_text().splitlines():
        if m := row.match(line):
            retrievers += [m["name"]] if m["name"] not in retrievers else []
            found.setdefault(f"{m['set']} ({m['n']})", {})[m["name"]] = f"{m['r10']} / {m['r100']} ({float(m['ms']):.0f} ms)"
    return table(["query set", *(f"{name} R@10 / R@100 (ms / query)" for name in retrievers)],
                 [[name, *(cells.get(r, "-") for r in retrievers)] for name, cells in found.items()])


def judges_table(path: Path) -> str:
    """RA-ISF's three judges against the dev data's labels (``bench_ra_isf_judges`` results.json)."""
    data = json.loads(path.read_text())
    per_call = data.get("seconds_per_call", {})
    calls = {"self_knowledge": per_call.get("know"), "relevance": per_call.get("relevance"), "sufficiency": per_call.get("sufficient")}
    rows = []
    for judge, decisions in data["rows"].items():
        for d in decisions:
            lo, hi = d["accuracy_ci95"]
            blo, bhi = d["balanced_ci95"]
            rows.append([judge.replace("_", "-"), d["decision"], d["n"], f"{d['accuracy']:.3f} [{lo:.2f}, {hi:.2f}]",
                         f"{d['balanced_accuracy']:.2f} [{blo:.2f}, {bhi:.2f}]", fmt(d.get("auroc")), d["positives_found"], d["negatives_found"],
                         fmt(calls.get(judge)) if d.get("auroc") is not None and "LLM" in d["decision"] else "-"])
    dec = data.get("decomposition")
    if dec:
        rows.append(["decomposition", "LLM (as many sub-questions as the gold, first step half its content words)", dec["n"],
                     f"{dec['accuracy']:.3f} [{dec['ci95'][0]:.2f}, {dec['ci95'][1]:.2f}]", "-", "-", "-", "-", fmt(per_call.get("decompose"))])
    return table(["judge", "decision", "n", "accuracy [95% Wilson]", "balanced accuracy [95% bootstrap]", "AUROC", "positives found", "negatives found", "s / LLM call"], rows)


def nar_stop_table(path: Path) -> str:
    """NAR early stop (``bench_nar_stop`` results.json): per ``nar_patience``, means per sub-question."""
    data = json.loads(path.read_text())
    off = None
    rows = []
    for patience, items in sorted(data["rows"].items(), key=lambda kv: int(kv[0])):
        seconds = mean(i["seconds"] for i in items)
        off = seconds if off is None else off
        rows.append([patience + (" (off)" if patience == "0" else ""), len(items), fmt(mean(i["scored"] for i in items), 1), fmt(seconds, 1),
                     f"{seconds / off:.2f}x", f"{sum(bool(i['stopped_early']) for i in items)}/{len(items)}",
                     fmt(mean(i["recall@1"] for i in items), 3), fmt(mean(i["recall@10"] for i in items), 3)])
    return table(["`nar_patience`", "sub-questions", "documents scored", "scorer s", "vs off", "stopped early", "R@1", "R@10"], rows)


def scale_table(path: Path) -> str:
    """The index's cost curve in brief, per size and setting (``bench_scale``'s ``results.json``; its
    full tables, every stage and latency, are ``table.md`` beside it)."""
    results = json.loads(path.read_text())

    def stage(r: dict, key: str, memory: bool = True) -> str:
        s = r["stages"].get(key)
        return "-" if s is None else f"{s['seconds']:,.0f} s" + (f", {s['peak_mb']:,} MB" if memory else "")

    rows = []
    for key in sorted(results, key=lambda k: (results[k]["documents"], k)):
        r = results[key]
        other = other_graph(r)
        graphs = {r["graph_method"]: stage(r, "graph"), **({other[6:]: stage(r, other, False)} if other else {})}
        hnsw = r["recall"].get("hnsw")
        rows.append([f"{r['documents']:,}" + (", Chroma server" if "chroma_server" in r else ""), stage(r, "chroma"), stage(r, "bm25"),
                     graphs.get("exact", "not used (n squared)"), graphs.get("hnsw", "-"),
                     f"{hnsw['at_10']:.3f} / {hnsw['at_100']:.3f}" if hnsw else "-",
                     f"{build_seconds(r) / 60:.1f} min",
                     f"{r['read']['latency_ms']['first_stage']['median']:.1f} ms", f"{r['read']['peak_rss_mb']:,} MB"])
    return table(["documents", "Chroma insert", "BM25", "exact graph", "HNSW graph", "HNSW recall @10 / @100 of exact", "whole build",
                  "first stage per question (median)", "reader's peak memory"], rows)


def first_token_table(path: Path, skip: int = 1) -> str:
    """Seconds to the first step shown, the first token of the answer and the whole answer through
    ``serve-openai`` (``bench_first_token``'s ``results.json``), median over the questions after the
    first ``skip`` (which load the models)."""
    asked = json.loads(path.read_text())["questions"][skip:]

    def median(key: str) -> float:
        return statistics.median(q[key] for q in asked)

    after = statistics.median(q["answer"] - q["first_answer_token"] for q in asked)
    label = f"median of questions {skip + 1}-{skip + len(asked)} (models loaded)"
    return table(["", "first step shown", "first token of MER's answer", "whole answer", "answer after its first token"],
                 [[label, f"{median('first_step'):.1f} s", f"{median('first_answer_token'):.1f} s", f"{median('answer'):.1f} s", f"{after:.1f} s"]])
