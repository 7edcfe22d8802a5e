"""Whether the support judge can pick a doubted hop's answer among its pages' spans: a development run's
flagged first hops retrieved again, and every span of the pages they read judged as their answer.

Usage::

    python -m benchmarks.bench_span_judge evals/results/RUN --variant VARIANT --index INDEX_DIR [--data DIR]
        [--llm embedded:qwen2.5-1.5b] [--hops flagged|all] [--out benchmarks/results/span-judge/results.json]

S's triggers (the judge doubts a hop, or its samples split) mark 20 of the 32 wrong first bridges of its
dev 1-100 run at 3 false alarms, and on 19 of those 20 the data's bridge is written in the pages the hop
found (``benchmarks/RESULTS.md``). Reading again with the same 1.5B changes one wrong name for another;
a larger reader does not install here. Checking is easier than finding: the judge that rates the hop's
answer told the right reading from the wrong one on every first hop where a second reading disagreed.
This asks whether it can choose among all the candidates the pages hold. Each first hop of the chain
shown (``--hops flagged``: those S's triggers mark; ``all``: every one) is retrieved again as the variant
retrieves it (no LLM call); every span of the pages it reads that could answer it
(:func:`sunar.hop_support.answer_spans`: names, dates, numbers, titles, of the kind its sub-question
asks for, not one of its own names) is judged as its answer (P(yes), the hop's own judge and pages; the
prompts share their beginning, so llama.cpp reads only each span's tokens). The best-judged span is taken
when it beats the hop's recorded P(yes) by ``margin`` (:data:`MARGINS`); ``hop_support=spans`` takes it
at margin 0. A hop is right when its answer holds the data's
first step or is held by it. For development runs only (dev 1-100). Resumable.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks import add_chain_arguments, chains_of, data_dir, kept, resumed
from benchmarks.bench_focus import first_steps
from benchmarks.bench_hop_triggers import hop_pages, variant_resources
from benchmarks.bench_nar_stop import nar_graph
from sunar.configuration import Configuration
from sunar.evals.metrics import paired_comparison
from sunar.hop_support import escalating, span_ratings
from sunar.signals import agrees
from sunar.text import focus

#: How much a span's P(yes) must beat the hop's own answer's to replace it.
MARGINS = (0.0, 0.1, 0.2, 0.3)


#: The switch whose triggers the probe reads (:func:`sunar.hop_support.escalating`).
SPANS = Configuration(hop_support="spans")


def flagged(hop: Mapping[str, Any]) -> bool:
    """S's own triggers, as ``hop_support=spans`` reads them: the judge doubts the hop (P(yes) < 0.5) or its
    answers fall into more than one semantic set naming something."""
    return escalating(hop, hop.get("support"), SPANS)


def rated_spans(hop: Mapping[str, Any], pages: Sequence[Mapping[str, Any]], llm: Any, cfg: Configuration) -> dict[str, Any]:
    """A first hop's spans, each with P(yes) that the pages it read state it, best first; and the seconds."""
    read = focus(hop["question"], list(pages)) if cfg.focus_pages else list(pages)
    start = time.perf_counter()
    judged = span_ratings(hop["question"], read, llm)
    judged.sort(key=lambda sp: 1.0 if sp[1] is None else -sp[1])  # best first; a span the judge gave neither label last
    return {"question": hop["question"], "answer": hop["answer"], "support": hop.get("support"), "flagged": flagged(hop),
            "pages": [p["title"] for p in read], "spans": judged, "seconds": round(time.perf_counter() - start, 2)}


def chosen(row: Mapping[str, Any], margin: float) -> str:
    """The hop's answer, or its best-judged span where that beats the answer's P(yes) by ``margin``."""
    if not row["spans"]:
        return str(row["answer"])
    best, p = row["spans"][0]
    own = row["support"] if row["support"] is not None else 0.0
    return best if p is not None and p > own + margin and not agrees(best, str(row["answer"])) else str(row["answer"])


def summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per margin, on flagged hops and on all hops read: right first bridges before and after, and the
    wins and losses (sign test); whether the gold is among the spans at all; the median seconds."""
    out: dict[str, Any] = {"hops": len(rows), "flagged": sum(r["flagged"] for r in rows),
                           "the first step among the spans": sum(any(agrees(s, r["gold"]) for s, _ in r["spans"]) for r in rows),
                           "the first step the best-judged span": sum(bool(r["spans"]) and agrees(r["spans"][0][0], r["gold"]) for r in rows),
                           "median seconds per hop": sorted(r["seconds"] for r in rows)[len(rows) // 2] if rows else 0.0}
    for scope, pick in (("flagged hops", lambda r: r["flagged"]), ("all hops read", lambda r: True)):
        picked = [r for r in rows if pick(r)]
        before = [float(agrees(str(r["answer"]), r["gold"])) for r in picked]
        for margin in MARGINS:
            after = [float(agrees(chosen(r, margin), r["gold"])) for r in picked]
            out[f"{scope}, margin {margin}"] = {"right before": sum(before), "right after": sum(after),
                                                "changed": sum(chosen(r, margin) != str(r["answer"]) for r in picked),
                                                **paired_comparison(after, before)}
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_chain_arguments(p, "benchmarks/results/span-judge/results.json", "first hops are judged again")
    p.add_argument("--hops", choices=("flagged", "all"), default="flagged", help="the first hops S's triggers mark, or every one")
    args = p.parse_args(argv)
    gold = first_steps(data_dir(args.data) / "dev.jsonl")
    records = chains_of(args.run, args.variant)
    cfg, res = variant_resources(args)
    graph = nar_graph()
    done = resumed(args)
    for record in records:
        hop = record["reasoning_path"][0]
        if record["id"] in done["rows"] or hop.get("support") is None or (args.hops == "flagged" and not flagged(hop)):
            continue
        row = rated_spans(hop, hop_pages(graph, res, cfg.values(), hop["question"]), res.llm, cfg)
        done["rows"][record["id"]] = {**row, "gold": gold[record["id"]]}
        kept(done, args.out, summary)
    print(json.dumps(done.get("summary"), indent=1))


if __name__ == "__main__":
    main()
