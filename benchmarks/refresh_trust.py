"""Refresh the ``trust`` fields of committed predictions with today's calibrations.

A record's ``trust`` (and ``abstained``) is what its run computed with the calibration that
matched then; calibrations have since been refitted and keyed by graph, model and settings
(:func:`sunar.trust.choose`). This gives each record what a run today would: the shipped calibration
that matches its graph and settings applied to its stored signals, with the probe read from the
embedded model's hidden state where the calibration has one, or null where none matches. Nothing
else in a record changes; the compressed copy is rewritten beside it.

    python -m benchmarks.refresh_trust evals/results/RUN [...]      # prints what changed per run
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import sys
from pathlib import Path
from typing import Any

from sunar import trust
from sunar.evals.predictions import read_predictions
from sunar.evals.run import variant_graph, variant_settings
from sunar.graph import build_graph, unread_fields
from sunar.signals import from_trace


def verdict(record: dict[str, Any], calibration: dict[str, Any] | None, llm: Any) -> dict[str, Any]:
    """``trust`` and ``abstained`` as the confidence step gives them (min_trust 0)."""
    if calibration is None:
        return {"trust": None, "abstained": False}
    signals = {**from_trace(record), **trust.held_signals(calibration, llm, record["question"], record["answer"])}
    found = trust.judge(signals, calibration)
    return {"trust": found["trust"], "abstained": found["abstained"]}


def refresh(run: Path, llm: Any) -> collections.Counter:
    """Rewrite ``run``'s predictions with today's trust; returns counts of what changed, by variant."""
    meta = json.loads((run / "run.json").read_text())
    recorded = meta["configuration"]
    path = run / "predictions.jsonl"
    records = read_predictions(path)
    chosen: dict[str, dict[str, Any] | None] = {}
    counts: collections.Counter = collections.Counter()
    for record in records:
        if record.get("error"):
            continue
        variant = record["variant"]
        if variant not in chosen:
            graph = variant_graph(variant)
            schema = build_graph(graph).context_schema
            unread = unread_fields(graph)
            values = {k: v for k, v in schema.as_recorded({**recorded, **variant_settings(variant)}).items() if k not in unread}
            chosen[variant] = trust.choose("auto", graph, values, schema.as_recorded)[0]
        new = verdict(record, chosen[variant], llm)
        counts[(variant, "calibrated" if chosen[variant] else "none matches", "changed" if new["trust"] != record.get("trust") else "same")] += 1
        record.update(new)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    packed = run / "predictions.jsonl.gz"
    if not records:  # a run that keeps only its metrics
        return counts
    if path.exists():
        path.write_text(text, encoding="utf-8")
    if packed.exists() or not path.exists():  # a run kept plain stays plain
        packed.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--llm", default="embedded:qwen2.5-1.5b", help="the model whose hidden state a calibration's probe reads")
    args = parser.parse_args(argv)
    models: list[Any] = []

    def llm() -> Any:  # loaded only when a matching calibration has a probe
        if not models:
            from sunar.models.providers import make_llm

            models.append(make_llm(args.llm))
        return models[0]

    for run in args.runs:
        for (variant, how, changed), n in sorted(refresh(run, llm).items()):
            print(f"{run.name}\t{variant}\t{how}\t{changed}\t{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
