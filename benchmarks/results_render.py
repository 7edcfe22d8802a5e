"""Markdown tables of evaluation runs: answers, evidence, cost and how the uncertainty acted (the
figures from :mod:`benchmarks.results_runs`). Every table says what its seconds are: wall (measured
in the run) or recorded (wall + the stored seconds of the calls replayed from the cache)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from benchmarks.results_runs import DATASETS, Records, mean, of, scores, summarise, variants_of
from sunar.evals.metrics import cover_em
from sunar.signals import agrees

#: How many of the first evidence documents MER reads (l, the cpu profile's ``evidence``).
MER_READS = 5


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


def containment_table(records: Records, variants: Sequence[str] | None = None) -> str:
    """How the right answers (cover-EM) are right: exactly (EM), holding the gold answer inside a
    longer one, and only by sub-word containment ("American" for America), beside word cover-EM."""
    rows = []
    for v in variants or variants_of(records):
        s = summarise(records, v)
        rows.append([f"`{v}`", s["n"], s["right"], s["exact"], s["right"] - s["exact"], s["right"] - s["whole_words"], fmt(s["word_cover_em"], 3)])
    return table(["variant", "n", "right (cover-EM)", "exact (EM)", "gold inside a longer answer", "right only within a word", "word cover-EM"], rows)


def retrieval_table(runs: Sequence[tuple[str, Records, Sequence[str]]]) -> str:
    """Evidence recall of the gold paragraphs (R@10) by dataset, per run and variant."""
    rows = []
    for name, records, variants in runs:
        for v in variants:
            s = summarise(records, v)
            rows.append([name, f"`{v}`", s["n"], *(fmt(s["recall@10_by_dataset"][d], 3) for d, _ in DATASETS), fmt(s["recall@10"], 3)])
    return table(["run", "variant", "n", *(f"R@10 {label}" for _, label in DATASETS), "R@10 all"], rows)


def time_table(records: Records, variants: Sequence[str] | None = None) -> str:
    """Where the recorded seconds of a question go (means): LLM generation and likelihood calls,
    yes/no judgements (NLI, RA-ISF's judges), retrieval and scoring, the rest; beside the wall s."""
    rows = []
    for v in variants or variants_of(records):
        answered = [r for r in of(records, v) if not r.get("error")]
        t = {k: mean((r.get("time") or {}).get(k, 0.0) for r in answered) for k in ("total", "llm", "nli", "scoring", "rest")}
        wall = mean(r.get("wall_seconds", 0.0) for r in answered)
        share = t["llm"] / t["total"] if t["total"] else math.nan
        rows.append([f"`{v}`", fmt(wall, 1), fmt(t["total"], 1), fmt(t["llm"], 1), fmt(t["nli"], 1), fmt(t["scoring"], 1), fmt(t["rest"], 1), f"{share:.0%}"])
    return table(["variant", "wall s / q", "recorded s / q", "LLM s", "judgement s", "retrieval + scoring s", "rest s", "LLM share"], rows)


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


def stages_table(records: Records, texts: Mapping[str, str], variants: Sequence[str] | None = None, top: int = MER_READS) -> str:
    """Where the wrong answers were lost: the gold answer's text in the first ``top`` evidence
    documents (what MER reads), only lower, or in none (as :func:`sunar.evals.report.stage_lost`)."""
    from sunar.evals.report import STAGES, stage_lost

    rows = []
    for v in variants or variants_of(records):
        lost = Counter(stage_lost(r, texts, top) for r in of(records, v))
        rows.append([f"`{v}`", sum(lost[k] for k in STAGES), *(lost[k] for k in STAGES)])
    return table(["variant", "wrong answers", f"gold answer in the first {top} documents", "only lower in the evidence", "in no retrieved document"], rows)


def perfect_reader_table(rows: Sequence[tuple[str, Records]], base: str, variant: str, texts: Mapping[str, str], top: int = MER_READS) -> str:
    """Reading against finding, per question set (label, records of ``base`` and ``variant``): each
    graph's right answers, how often its evidence holds both of the data's supporting pages, its R@10,
    and its right answers had it read perfectly (right, or the gold answer's text in the first ``top``
    evidence documents, as :func:`stages_table` counts them)."""
    from sunar.evals.report import stage_lost

    def pair(graphs: tuple[Records, Records], count: Callable[[dict[str, Any]], float]) -> str:
        return " / ".join(f"{sum(count(r) for r in rs):.0f}" for rs in graphs)

    body = []
    for label, records in rows:
        graphs = of(records, base), of(records, variant)
        body.append([label, len(graphs[1]), pair(graphs, lambda r: scores(r)["cover_em"]),
                     pair(graphs, lambda r: set(r.get("supporting_ids") or []) <= set(r.get("evidence_ids") or [])),
                     " / ".join(f"{mean([scores(r)['recall@10'] for r in rs]):.3f}" for rs in graphs),
                     pair(graphs, lambda r: scores(r)["cover_em"] or stage_lost(r, texts, top) == "in_top")])
    return table(["questions", "asked", "right: Self-Ask / S", "both supporting pages in the evidence: Self-Ask / S", "R@10: Self-Ask / S",
                  f"right, or the gold answer in the first {top} documents (a perfect reader): Self-Ask / S"], body)


def branching_table(records: Records, variant: str) -> str:
    """How the uncertainty acted in a variant with hop sampling and branching: hops whose sampled
    answers fell into more than one semantic set, questions that branched (more than one chain
    ended; a question that never branched records none) and how many of those were right, and where
    the gold answer was among what they found (cover-EM against a branched question's chain
    answers, or any hop's candidate answers)."""
    rows = [r for r in of(records, variant) if not r.get("error")]

    def found(texts: Sequence[str], r: dict[str, Any]) -> bool:
        return any(cover_em(str(t), r.get("gold") or []) for t in texts)

    hops = [h for r in rows for h in r.get("reasoning_path") or []]
    branched = [r for r in rows if len(r.get("chains") or []) > 1]
    in_chains = sum(found([c["answer"] for c in r.get("chains") or []], r) for r in rows)
    in_candidates = sum(found([c["answer"] for h in r.get("reasoning_path") or [] for c in h.get("candidates") or []], r) for r in rows)
    return table(["questions (right)", "hops", "hops uncertain (> 1 set)", "questions branched (right)", "gold among their chains' answers", "gold among any hop's candidates"],
                 [[f"{len(rows)} ({int(sum(scores(r)['cover_em'] for r in rows))})", len(hops), sum(len(h.get("candidates") or []) > 1 for h in hops),
                   f"{len(branched)} ({int(sum(scores(r)['cover_em'] for r in branched))})", in_chains, in_candidates]])


def ceiling_table(rows: Sequence[tuple[str, Records]], base: str, variant: str) -> str:
    """What choosing among the answers found can reach at best, per question set (label, records of
    ``base`` and ``variant``): each graph's right answers, the questions either got right, and those
    where either did or the gold is among ``variant``'s other answers (its chains' and any hop's
    candidates); the last against ``base``'s right answers is a perfect chooser's ratio."""

    def found(r: dict[str, Any]) -> bool:
        answers = [c["answer"] for c in r.get("chains") or []]
        answers += [c["answer"] for h in r.get("reasoning_path") or [] for c in h.get("candidates") or []]
        return any(cover_em(str(a), r.get("gold") or []) for a in answers)

    body = []
    for label, records in rows:
        b = {r["id"]: r for r in of(records, base)}
        s = {r["id"]: r for r in of(records, variant) if r["id"] in b}
        right = {i: (bool(scores(b[i])["cover_em"]), bool(scores(r)["cover_em"])) for i, r in s.items()}
        either = sum(x or y for x, y in right.values())
        found_any = sum(x or y or found(s[i]) for i, (x, y) in right.items())
        first = sum(x for x, _ in right.values())
        body.append([label, len(s), first, sum(y for _, y in right.values()), either, found_any,
                     f"{found_any / first:.2f}x" if first else "-"])
    return table(["questions", "asked", "Self-Ask right", "S right", "either right", "either, or the gold among S's other answers",
                  "the last against Self-Ask's"], body)


#: The shapes a chain can take, as :func:`shapes_table` counts them.
SHAPES = ("no hop answered", "one hop, the first bridge wrong", "one hop, the first bridge found",
          "two hops or more, the first bridge wrong", "two hops or more, the first bridge found")


def shape(record: dict[str, Any], first: Mapping[str, str]) -> str:
    """A chain's shape: how many hops it took, and whether its first hop found the data's first bridge
    (``first``: question id -> the data's first-step answer; one holds the other's words)."""
    path = record.get("reasoning_path") or []
    if not path:
        return SHAPES[0]
    return SHAPES[(1 if len(path) == 1 else 3) + agrees(str(path[0]["answer"]), first[record["id"]])]


def shapes_table(records: Records, variants: Sequence[str], names: Sequence[str], first: Mapping[str, str]) -> str:
    """Per chain shape (:func:`shape`), each graph's questions of that shape and how many of them it
    answered right (cover-EM), per dataset: "questions (right)"."""
    counts: Counter[tuple[str, str, str, bool]] = Counter()
    for variant in variants:
        for r in of(records, variant):
            counts[variant, r["dataset"], shape(r, first), bool(scores(r)["cover_em"])] += 1
    body = []
    for s in SHAPES:
        if not any(counts[v, d, s, ok] for v in variants for d, _ in DATASETS for ok in (True, False)):
            continue
        cells = [f"{counts[v, d, s, True] + counts[v, d, s, False]} ({counts[v, d, s, True]})" for v in variants for d, _ in DATASETS]
        body.append([s, *cells])
    return table(["the chain", *(f"{name}, {label}: questions (right)" for name in names for _, label in DATASETS)], body)
