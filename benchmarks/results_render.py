"""Markdown tables of evaluation runs: answers, evidence and cost (the
figures from :mod:`benchmarks.results_runs`). Every table says what its seconds are: wall (measured
in the run) or recorded (wall + the stored seconds of the calls replayed from the cache)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from benchmarks.results_runs import DATASETS, Records, of, summarise, variants_of


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def fmt(x: float | None, digits: int = 2) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def fmt_p(p: float) -> str:
    """A sign test's p as the tables write it: "p = 0.02", "p = 0.004", "p < 0.001"."""
    return "p < 0.001" if p < 0.0005 else f"p = {p:.2f}" if p >= 0.01 else f"p = {p:.3f}"


def versus(s: dict[str, Any]) -> str:
    """Wins / losses against the base with the sign test's p."""
    return f"{s['wins']} / {s['losses']} ({fmt_p(s['p'])})"


def answers_table(records: Records, variants: Sequence[str] | None = None, base: str | None = "self_ask", differ: bool = False) -> str:
    """Per variant: questions, cover-EM by dataset (count) and rate, EM, F1, R@10, LLM calls (and
    likelihood calls and replies that broke their format, where any), calls replayed from the
    cache, wall and recorded seconds per question; against ``base`` (when in the
    run): recorded time ratio and wins / losses with the sign test p; with ``differ``, how many
    answers and evidence lists differ from the base's."""
    variants = list(variants or variants_of(records))
    base = base if base and of(records, base) else None
    header = ["variant", "n", "cover-EM MuSiQue / 2Wiki / all", "cover-EM", "EM", "F1", "R@10", "LLM calls", "cached calls",
              "wall s / q", "recorded s / q"]
    with_likelihood = any(summarise(records, v)["loglik_calls"] for v in variants)
    with_fallbacks = any(summarise(records, v)["parse_fallbacks"] for v in variants)
    if with_fallbacks:
        header.insert(8, "parse fall-backs")
    if with_likelihood:
        header.insert(8, "likelihood calls")
    if base:
        header += [f"recorded s vs {base}", f"right / wrong where {base} was not (sign test p)"]
        if differ:
            header += [f"answers / evidence unlike {base}"]
    rows = []
    for v in variants:
        s = summarise(records, v, base)
        by = " / ".join(f"{s['right_by_dataset'][d]}" for d, _ in DATASETS)
        row = [f"`{v}`", s["n"], f"{by} / **{s['right']}**", fmt(s["cover_em"], 3), fmt(s["em"], 3), fmt(s["f1"], 3), fmt(s["recall@10"], 3),
               fmt(s["llm_calls"], 1)]
        if with_likelihood:
            row.append(fmt(s["loglik_calls"], 1))
        if with_fallbacks:
            row.append(fmt(s["parse_fallbacks"], 2))
        row += [fmt(s["cached_calls"], 1), fmt(s["wall_seconds"], 1), fmt(s["recorded_seconds"], 1)]
        if base:
            if v == base:
                row += ["1.0x", "-"] + (["-"] if differ else [])
            else:
                row += [f"{s['recorded_ratio']:.1f}x", versus(s)]
                if differ:
                    row.append(f"{s['answers_differ']} / {s['evidence_differ']}")
        rows.append(row)
    return table(header, rows)


Comparison = tuple[str, Records, str, str] | tuple[str, Records, str, str, bool]


def headline_table(rows: Sequence[Comparison], names: tuple[str, str] = ("Self-Ask", "SUNAR")) -> str:
    """One row per comparison (label, records, base, variant[, timed]): right answers of each by
    cover-EM and by EM, the variant's recorded seconds against the base's (not ``timed``: the two
    ran apart, so no ratio), and its wins / losses by each (sign test); ``names``: what the columns
    call the base and the variant."""
    body = []
    for label, records, base, variant, *timed in rows:
        b, s = summarise(records, base), summarise(records, variant, base)
        ratio = f"{s['recorded_ratio']:.1f}x" if timed != [False] else "- (apart)"
        body.append([label, f"{b['right']} / {s['right']}", f"{b['exact']} / {s['exact']}", str(s["n"]), ratio,
                     versus(s), f"{s['em_wins']} / {s['em_losses']} ({fmt_p(s['em_p'])})"])
    base, variant = names
    return table(["questions", f"right (cover-EM): {base} / {variant}", f"exact (EM): {base} / {variant}", "asked", f"recorded s vs {base}",
                  f"{variant} right / wrong where {base} was not, cover-EM (sign test p)", "the same, EM"], body)


def by_dataset_table(rows: Sequence[Comparison], names: tuple[str, str] = ("without", "with it")) -> str:
    """:func:`headline_table`'s comparisons split by dataset: per dataset, the right answers of each
    (cover-EM) and the variant's wins / losses (a part kept only if it loses on neither)."""
    body = []
    for label, records, base, variant, *_ in rows:
        row = [label]
        for d, _ in DATASETS:
            part = [r for r in records if r.get("dataset") == d]
            if not of(part, variant):
                row += ["-", "-"]
                continue
            b, s = summarise(part, base), summarise(part, variant, base)
            row += [f"{b['right']} / {s['right']}", f"{s['wins']} / {s['losses']}"]
        body.append(row)
    base, variant = names
    return table(["questions", *(h for _, label in DATASETS for h in (f"{label}: {base} / {variant}", f"{label}: right / wrong where {base} was not"))], body)


def retrieval_table(runs: Sequence[tuple[str, Records, Sequence[str]]]) -> str:
    """Evidence recall of the gold paragraphs (R@10) by dataset, per run and variant."""
    rows = []
    for name, records, variants in runs:
        for v in variants:
            s = summarise(records, v)
            rows.append([name, f"`{v}`", s["n"], *(fmt(s["recall@10_by_dataset"][d], 3) for d, _ in DATASETS), fmt(s["recall@10"], 3)])
    return table(["run", "variant", "n", *(f"R@10 {label}" for _, label in DATASETS), "R@10 all"], rows)


def node_table(records: Records, variant: str, least: float = 0.5) -> str:
    """Wall seconds per question in each graph node (``node_seconds``; cached calls take no wall
    time, so read this on a run that computed its calls), nodes under ``least`` s folded into one row."""
    answered = [r for r in of(records, variant) if not r.get("error")]
    nodes = Counter[str]()
    for r in answered:
        nodes.update({k: float(v) for k, v in (r.get("node_seconds") or {}).items()})
    total = sum(nodes.values())
    n = len(answered) or 1
    rows, rest = [], 0.0
    for name, seconds in nodes.most_common():
        if seconds / n >= least:
            rows.append([f"`{name}`", fmt(seconds / n, 2), f"{seconds / total:.0%}" if total else "-"])
        else:
            rest += seconds
    if rest:
        rows.append(["other nodes", fmt(rest / n, 2), f"{rest / total:.0%}" if total else "-"])
    rows.append(["**all (wall)**", f"**{fmt(total / n, 2)}**", "100%"])
    return table(["node", "wall s / question", "share"], rows)
