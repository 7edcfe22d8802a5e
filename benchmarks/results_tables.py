"""The tables of benchmarks/RESULTS.md, recomputed from the committed evaluation runs.

    .venv/bin/python benchmarks/results_tables.py             # print every table of RESULTS.md
    .venv/bin/python benchmarks/results_tables.py --check     # fail if RESULTS.md lacks one of them
    .venv/bin/python benchmarks/results_tables.py --run dev40-baselines-qwen1.5b-cpu   # one run, all variants

Each run is read from ``evals/results/<run>/predictions.jsonl.gz`` (or ``predictions.jsonl``). The
answer metrics are recomputed from each record's answer and gold answers, the evidence recall from
its ranked evidence ids and gold paragraphs, with :mod:`sunar.evals.metrics`; the signals' AUROC and
the combined score with :mod:`sunar.evals.calibration`. Two kinds of seconds per question:

- wall s: ``wall_seconds``, measured when the record was computed (in that run, or in the run it was
  copied from), without the seconds of the calls replayed from the LLM call cache;
- recorded s: ``time.total`` = wall + the stored seconds of the cached calls (each call counts with
  the seconds it took when it was first computed): what the question costs without a cache.

Variants of one run share a cache, so a variant that replays another's calls has a short wall time
but the same recorded time; comparisons of cost use recorded seconds. The benchmark outputs that keep
their raw rows (``benchmarks/results/<name>/results.json``) are summarised too.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import statistics
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sunar.evals import calibration
from sunar.evals.metrics import cover_em, exact_match, paired_comparison, retrieval_metrics, token_f1
from sunar.trust import FEATURES, signal_matrix

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "evals" / "results"
BENCH = ROOT / "benchmarks" / "results"
DATASETS = (("musique", "MuSiQue"), ("2wiki", "2Wiki"))
#: How many of the first evidence documents MER reads (l, the cpu profile's ``evidence``).
MER_READS = 5

Records = list[dict[str, Any]]


# ---------------------------------------------------------------------------------------------
# Reading runs


def read_records(run: Path) -> Records:
    """The predictions of a run folder (``predictions.jsonl``, else ``predictions.jsonl.gz``)."""
    plain, packed = run / "predictions.jsonl", run / "predictions.jsonl.gz"
    if plain.exists():
        data = plain.read_bytes()
    elif packed.exists():
        data = gzip.decompress(packed.read_bytes())
    else:
        raise FileNotFoundError(f"{run}: no predictions.jsonl(.gz)")
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def run_date(run: Path) -> str:
    """When the run folder was committed (first and last commit touching it, from git log)."""
    try:
        out = subprocess.run(
            ["git", "log", "--format=%ad", "--date=short", "--", str(run)],
            cwd=run.parent, capture_output=True, text=True, check=True,
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return "not committed"
    if not out:
        return "not committed"
    first, last = out[-1], out[0]
    return last if first == last else f"{first} to {last}"


def variants_of(records: Records) -> list[str]:
    return list(dict.fromkeys(r["variant"] for r in records))


def of(records: Records, variant: str) -> Records:
    return [r for r in records if r["variant"] == variant]


def paired(records: Records, *variants: str) -> Records:
    """The records of ``variants`` for the questions every one of them answered (a run stopped
    part-way may hold one variant's answer to its last question without the other's)."""
    ids = set.intersection(*({r["id"] for r in of(records, v)} for v in variants))
    return [r for r in records if r["variant"] in variants and r["id"] in ids]


# ---------------------------------------------------------------------------------------------
# Figures of one variant


def scores(record: dict[str, Any]) -> dict[str, float]:
    """cover-EM, EM, F1 and R@10 of one record, recomputed; a failed question is wrong, no evidence."""
    if record.get("error"):
        return {"cover_em": 0.0, "em": 0.0, "f1": 0.0, "recall@10": 0.0}
    answer, gold = str(record.get("answer") or ""), record.get("gold") or []
    ranked = retrieval_metrics(record.get("evidence_ids") or [], record.get("supporting_ids") or [], ks=(10,))
    return {
        "cover_em": cover_em(answer, gold),
        "em": exact_match(answer, gold),
        "f1": token_f1(answer, gold),
        "recall@10": ranked.get("recall@10", 0.0),
    }


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return float(statistics.mean(values)) if values else 0.0


def summarise(records: Records, variant: str, base: str | None = None) -> dict[str, Any]:
    """One variant of a run: answers and evidence (failed questions count as wrong), cost (means over
    the answered questions), and cover-EM against ``base`` question by question (exact sign test)."""
    rows = of(records, variant)
    if not rows:
        raise KeyError(f"no records of variant {variant!r}")
    n = len(rows)
    s = [scores(r) for r in rows]
    answered = [r for r in rows if not r.get("error")]
    out: dict[str, Any] = {
        "variant": variant,
        "n": n,
        "errors": n - len(answered),
        "right": int(sum(x["cover_em"] for x in s)),
        "right_by_dataset": {d: int(sum(x["cover_em"] for r, x in zip(rows, s, strict=True) if r.get("dataset") == d)) for d, _ in DATASETS},
        "n_by_dataset": {d: sum(1 for r in rows if r.get("dataset") == d) for d, _ in DATASETS},
        "cover_em": _mean(x["cover_em"] for x in s),
        "em": _mean(x["em"] for x in s),
        "f1": _mean(x["f1"] for x in s),
        "recall@10": _mean(x["recall@10"] for x in s),
        "recall@10_by_dataset": {d: _mean(x["recall@10"] for r, x in zip(rows, s, strict=True) if r.get("dataset") == d) for d, _ in DATASETS},
        "llm_calls": _mean(r.get("llm_calls", 0) for r in answered),
        "loglik_calls": _mean(r.get("loglik_calls", 0) for r in answered),
        "cached_calls": _mean(r.get("cached_calls", 0) for r in answered),
        "parse_fallbacks": _mean(r.get("parse_fallbacks", 0) for r in answered),
        "wall_seconds": _mean(r.get("wall_seconds", 0.0) for r in answered),
        "recorded_seconds": _mean((r.get("time") or {}).get("total", r.get("wall_seconds", 0.0)) for r in answered),
    }
    if base and base != variant and of(records, base):
        out.update(against(records, variant, base))
    return out


def against(records: Records, variant: str, base: str) -> dict[str, Any]:
    """cover-EM of ``variant`` against ``base`` on the questions both have (exact sign test), how many
    answers and evidence lists differ, and the cost ratios."""
    mine = {r["id"]: r for r in of(records, variant)}
    theirs = {r["id"]: r for r in of(records, base)}
    ids = [i for i in mine if i in theirs]
    paired = paired_comparison([scores(mine[i])["cover_em"] for i in ids], [scores(theirs[i])["cover_em"] for i in ids])
    b = summarise(records, base)
    m = summarise(records, variant)
    return {
        "base": base,
        "wins": paired["wins"],
        "losses": paired["losses"],
        "p": paired["p"],
        "answers_differ": sum(1 for i in ids if str(mine[i].get("answer")) != str(theirs[i].get("answer"))),
        "evidence_differ": sum(1 for i in ids if mine[i].get("evidence_ids") != theirs[i].get("evidence_ids")),
        "calls_ratio": m["llm_calls"] / b["llm_calls"] if b["llm_calls"] else math.nan,
        "recorded_ratio": m["recorded_seconds"] / b["recorded_seconds"] if b["recorded_seconds"] else math.nan,
        "wall_ratio": m["wall_seconds"] / b["wall_seconds"] if b["wall_seconds"] else math.nan,
    }


# ---------------------------------------------------------------------------------------------
# Markdown


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _f(x: float | None, digits: int = 2) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _p(p: float) -> str:
    return f"{p:.2f}" if p >= 0.01 else f"{p:.3f}"


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
        row = [f"`{v}`", s["n"], f"{by} / **{s['right']}**", _f(s["cover_em"], 3), _f(s["em"], 3), _f(s["f1"], 3), _f(s["recall@10"], 3),
               _f(s["llm_calls"], 1)]
        if with_likelihood:
            row.append(_f(s["loglik_calls"], 1))
        if with_fallbacks:
            row.append(_f(s["parse_fallbacks"], 2))
        row += [_f(s["cached_calls"], 1), _f(s["wall_seconds"], 1), _f(s["recorded_seconds"], 1)]
        if base:
            if v == base:
                row += ["1.0x", "-"] + (["-"] if differ else [])
            else:
                row += [f"{s['recorded_ratio']:.1f}x", f"{s['wins']} / {s['losses']} (p = {_p(s['p'])})"]
                if differ:
                    row.append(f"{s['answers_differ']} / {s['evidence_differ']}")
        rows.append(row)
    return table(header, rows)


def retrieval_table(runs: Sequence[tuple[str, Records, Sequence[str]]]) -> str:
    """Evidence recall of the gold paragraphs (R@10) by dataset, per run and variant."""
    rows = []
    for name, records, variants in runs:
        for v in variants:
            s = summarise(records, v)
            rows.append([name, f"`{v}`", s["n"], *(_f(s["recall@10_by_dataset"][d], 3) for d, _ in DATASETS), _f(s["recall@10"], 3)])
    return table(["run", "variant", "n", *(f"R@10 {label}" for _, label in DATASETS), "R@10 all"], rows)


def time_table(records: Records, variants: Sequence[str] | None = None) -> str:
    """Where the recorded seconds of a question go (means): LLM generation and likelihood calls,
    yes/no judgements (NLI, RA-ISF's judges), retrieval and scoring, the rest; beside the wall s."""
    rows = []
    for v in variants or variants_of(records):
        answered = [r for r in of(records, v) if not r.get("error")]
        t = {k: _mean((r.get("time") or {}).get(k, 0.0) for r in answered) for k in ("total", "llm", "nli", "scoring", "rest")}
        wall = _mean(r.get("wall_seconds", 0.0) for r in answered)
        share = t["llm"] / t["total"] if t["total"] else math.nan
        rows.append([f"`{v}`", _f(wall, 1), _f(t["total"], 1), _f(t["llm"], 1), _f(t["nli"], 1), _f(t["scoring"], 1), _f(t["rest"], 1), f"{share:.0%}"])
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
            rows.append([f"`{name}`", _f(seconds / n, 2), f"{seconds / total:.0%}" if total else "-"])
        else:
            rest += seconds
    if rest:
        rows.append(["other nodes", _f(rest / n, 2), f"{rest / total:.0%}" if total else "-"])
    rows.append(["**all (wall)**", f"**{_f(total / n, 2)}**", "100%"])
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


def chain_table(records: Records, variant: str) -> str:
    """MER's answer against the reasoning chain's last intermediate answer (cover-EM)."""
    rows = [r for r in of(records, variant) if not r.get("error")]
    mer = [scores(r)["cover_em"] for r in rows]
    last = [cover_em(str((r.get("reasoning_path") or [{}])[-1].get("answer") or ""), r.get("gold") or []) if r.get("reasoning_path") else 0.0 for r in rows]
    only_chain = sum(1 for a, b in zip(mer, last, strict=True) if b > a)
    only_mer = sum(1 for a, b in zip(mer, last, strict=True) if a > b)
    return table(["answers", "MER right", "last hop's answer right", "chain right where MER was wrong", "MER right where the chain was wrong"],
                 [[len(rows), int(sum(mer)), int(sum(last)), only_chain, only_mer]])


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


# ---------------------------------------------------------------------------------------------
# Confidence


def correct(records: Records) -> np.ndarray:
    return np.array([scores(r)["cover_em"] for r in records])


def signals_table(columns: Sequence[tuple[str, Records]], features: Sequence[str] = FEATURES, combined: bool = True) -> str:
    """AUROC (right vs wrong by cover-EM; 0.5 is chance) of the confidence shown and each signal,
    per column of answers, and the combined signals out of fold (5-fold CV, each dataset dealt to
    the folds in turn: equal weights, as shipped, and a weight per signal)."""
    stats = []
    for _, rows in columns:
        rows = [r for r in rows if not r.get("error")]
        y = correct(rows)
        x = signal_matrix(rows, features)
        per = {f: (None if np.isnan(x[:, i]).all() else calibration.auroc(np.nan_to_num(x[:, i], nan=np.nanmin(x[:, i]) - 1), y)) for i, f in enumerate(features)}
        shown = [float(r.get("confidence") or 0.0) for r in rows]
        entry = {"n": len(rows), "right": int(y.sum()), "confidence": calibration.auroc(shown, y), "ece": calibration.ece(shown, y),
                 "at": [calibration.accuracy_at(shown, y, c) for c in calibration.COVERAGES], **per}
        if combined:
            entry["equal"] = calibration.auroc(calibration.cross_validated(rows, y), y)
            entry["fitted"] = calibration.auroc(calibration.cross_validated(rows, y, weights="fitted"), y)
        stats.append(entry)
    header = ["", *(label for label, _ in columns)]
    body = [["answers (right)", *(f"{s['n']} ({s['right']})" for s in stats)],
            ["the confidence shown (`agreement`)", *(_f(s["confidence"]) for s in stats)],
            ["its ECE", *(_f(s["ece"]) for s in stats)],
            ["accuracy of the most confident 25 / 50 / 75%", *(" / ".join(_f(a) for a in s["at"]) for s in stats)]]
    body += [[f"`{f}`", *(_f(s[f]) for s in stats)] for f in features]
    if combined:
        body += [["**combined (`COMBINED`), equal weights, 5-fold CV**", *(f"**{_f(s['equal'])}**" for s in stats)],
                 ["the same, a weight per signal", *(_f(s["fitted"]) for s in stats)]]
    return table(header, body)


def calibrated_table(columns: Sequence[tuple[str, Records, Records]], alpha: float = 0.3) -> str:
    """What ``sunar calibrate`` fits on one set of answers (the combined signals, their map to a
    probability, the trust level for error rate ``alpha``), scored on answers to other questions:
    AUROC with its 95% bootstrap interval, ECE of the probability shown, accuracy of the most
    trusted, and what the trust level answers there."""
    stats = []
    for _, fit_on, score_on in columns:
        fitted = calibration.fit_calibration([r for r in fit_on if not r.get("error")], alpha)
        stats.append((fitted, calibration.check_calibration(fitted, [r for r in score_on if not r.get("error")])))

    def interval(c: dict[str, Any]) -> str:
        return f"{_f(c['auroc'])} [{_f(c['auroc_95'][0])}, {_f(c['auroc_95'][1])}]" if c["auroc_95"] else _f(c["auroc"])

    def level(f: dict[str, Any], c: dict[str, Any]) -> str:
        if not math.isfinite(f["threshold"]):
            return "none kept it on the fitted answers"
        return f"{f['threshold']:.2f}: answers {c['answered']} ({c['coverage']:.0%}), {_f(c['accuracy_answered'])} right"

    header = ["", *(label for label, _, _ in columns)]
    body = [["fitted on: answers (right)", *(f"{f['n']} ({round(f['n'] * float(correct([r for r in fo if not r.get('error')]).mean()))})"
                                             for (f, _), (_, fo, _) in zip(stats, columns, strict=True))],
            ["map to a probability; cross-fitted AUROC there", *(f"{f['mapping']['kind']}; {_f(f['auroc_held_out'])}" for f, _ in stats)],
            ["scored on: answers (right)", *(f"{c['n']} ({round(c['accuracy'] * c['n'])})" for _, c in stats)],
            ["**AUROC [95% bootstrap]**", *(f"**{interval(c)}**" for _, c in stats)],
            ["ECE of the probability shown", *(_f(c["ece"]) for _, c in stats)],
            ["accuracy of the most trusted 25 / 50%", *(" / ".join(_f(c["accuracy_at"][str(k)]) for k in (0.25, 0.5)) for _, c in stats)],
            [f"trust level for at most {alpha:.0%} wrong (delta 0.1)", *(level(f, c) for f, c in stats)]]
    return table(header, body)


def probe_table(path: Path) -> str:
    """The shipped ``sunar`` calibration with its probe on the LLM's hidden state (``sunar calibrate
    --probe``; the states need the model, so its check is stored: ``results.json``)."""
    data = json.loads(path.read_text())
    fitted, checked = data["fitted"], data["checked"]
    tried = fitted["probe_training"]["auroc_by_strength"]
    low, high = checked["auroc_95"]
    rows = [
        ["probe trained on (dev 1-100, every graph's distinct answers)", f"{fitted['probe_training']['answers']} answers to {fitted['probe_training']['questions']} questions"],
        ["probe alone, out of fold on those answers (best L2 strength)", _f(max(tried.values()))],
        ["signals + probe, cross-fitted on `sunar`'s dev 1-100 answers", f"{fitted['mapping']['kind']}; {_f(fitted['auroc_held_out'])}"],
        ["**scored on dev 101-200: AUROC [95% bootstrap]**", f"**{_f(checked['auroc'])} [{_f(low)}, {_f(high)}]**"],
        ["ECE of the probability shown", _f(checked["ece"])],
        ["accuracy of the most trusted 25 / 50%", f"{_f(checked['accuracy_at']['0.25'])} / {_f(checked['accuracy_at']['0.5'])}"],
        ["answered at the trust level for at most 30% wrong", "none (no level kept it on dev 1-100)" if not checked["answered"] else f"{checked['answered']}"],
    ]
    return table(["`sunar` with the probe", ""], rows)


def stored_table(run: Path) -> str:
    """A run without committed predictions: its own ``metrics.json``, read, not recomputed."""
    metrics = json.loads((run / "metrics.json").read_text())["all"]
    rows = []
    for v, m in metrics.items():
        paired = m.get("vs_self_ask")
        rows.append([f"`{v}`", m["n"], round(m["cover_em"] * m["n"]), _f(m["em"], 3), _f(m["recall@10"], 3), _f(m.get("llm_calls"), 1),
                     _f(m["seconds"]["total"], 0), f"{paired['wins']} / {paired['losses']} (p = {_p(paired['p'])})" if paired else "-"])
    return table(["variant", "n", "cover-EM (right)", "EM", "R@10", "LLM calls", "recorded s / q", "right / wrong where self_ask was not (sign test p)"], rows)


# ---------------------------------------------------------------------------------------------
# Benchmark outputs with their raw rows


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
                         f"{d['balanced_accuracy']:.2f} [{blo:.2f}, {bhi:.2f}]", _f(d.get("auroc")), d["positives_found"], d["negatives_found"],
                         _f(calls.get(judge)) if d.get("auroc") is not None and "LLM" in d["decision"] else "-"])
    dec = data.get("decomposition")
    if dec:
        rows.append(["decomposition", "LLM (as many sub-questions as the gold, first step half its content words)", dec["n"],
                     f"{dec['accuracy']:.3f} [{dec['ci95'][0]:.2f}, {dec['ci95'][1]:.2f}]", "-", "-", "-", "-", _f(per_call.get("decompose"))])
    return table(["judge", "decision", "n", "accuracy [95% Wilson]", "balanced accuracy [95% bootstrap]", "AUROC", "positives found", "negatives found", "s / LLM call"], rows)


def nar_stop_table(path: Path) -> str:
    """NAR early stop (``bench_nar_stop`` results.json): per ``nar_patience``, means per sub-question."""
    data = json.loads(path.read_text())
    off = None
    rows = []
    for patience, items in sorted(data["rows"].items(), key=lambda kv: int(kv[0])):
        seconds = _mean(i["seconds"] for i in items)
        off = seconds if off is None else off
        rows.append([patience + (" (off)" if patience == "0" else ""), len(items), _f(_mean(i["scored"] for i in items), 1), _f(seconds, 1),
                     f"{seconds / off:.2f}x", f"{sum(bool(i['stopped_early']) for i in items)}/{len(items)}",
                     _f(_mean(i["recall@1"] for i in items), 3), _f(_mean(i["recall@10"] for i in items), 3)])
    return table(["`nar_patience`", "sub-questions", "documents scored", "scorer s", "vs off", "stopped early", "R@1", "R@10"], rows)


# ---------------------------------------------------------------------------------------------
# RESULTS.md


def corpus_texts() -> dict[str, str] | None:
    """Corpus texts (for where the wrong answers were lost): $SUNAR_DATA or ../shared/data/multihop."""
    base = Path(os.environ.get("SUNAR_DATA") or ROOT.parent / "shared" / "data" / "multihop")
    path = base / "corpus.jsonl"
    if not path.is_file():
        return None
    from sunar.stores.corpus import read_corpus

    return {d.id: d.content for d in read_corpus(path)}


def sections(results: Path = RESULTS, bench: Path = BENCH) -> list[tuple[str, str | None]]:
    """(caption, table) for every table of RESULTS.md, in its order (table None: skipped, with why)."""
    runs: dict[str, Records] = {}

    def run(name: str) -> Records:
        if name not in runs:
            runs[name] = read_records(results / name)
        return runs[name]

    corpus: list[dict[str, str] | None] = []

    def texts() -> dict[str, str] | None:
        if not corpus:
            corpus.append(corpus_texts())
        return corpus[0]

    def where(name: str) -> str:
        return f"`evals/results/{name}/` ({run_date(results / name)})"

    dev100, dev200 = "dev100-structured-qwen1.5b-cpu", "dev101-200-qwen1.5b-cpu"
    base40, pools, abl = "dev40-baselines-qwen1.5b-cpu", "dev40-given-pools-qwen1.5b-cpu", "dev40-ablations-qwen1.5b-cpu"
    dev63, dev24, json20 = "dev63-calibration-qwen1.5b-cpu", "dev24-signals-m10-qwen1.5b-cpu", "dev20-json-selfask-qwen1.5b-cpu"
    text20, old100 = "dev20-structured-qwen1.5b-cpu", "dev100-qwen1.5b-cpu"
    sunar4 = ["sunar", "sunar_no_asu", "sunar_r", "self_ask"]
    acts, acts_a = "dev41-acts-qwen1.5b-cpu", "sunar+asu_batches=false+hop_samples=3+branch_width=2+demonstrations=2"
    confirm, acts_s, demos = "dev101-217-acts-confirm-qwen1.5b-cpu", f"{acts_a}+grounded_final=true", "self_ask+demonstrations=2"
    acts2 = "dev42-100-acts-qwen1.5b-cpu"
    out: list[tuple[str, Callable[[], str | None]]] = [
        (f"SUNAR variants and Self-Ask, dev 1-100: {where(dev100)}", lambda: answers_table(run(dev100), sunar4)),
        (f"Held-out questions, dev 101-200: {where(dev200)}", lambda: answers_table(run(dev200), base=None)),
        (f"MER against the chain's last answer, `sunar`, dev 1-100: {where(dev100)}", lambda: chain_table(run(dev100), "sunar")),
        (f"Self-Ask's steps as JSON (dropped), dev 1-20: {where(json20)}", lambda: answers_table(run(json20), base=None)),
        (f"Self-Ask's steps as lines, the same 20 questions: {where(text20)}", lambda: answers_table(run(text20), base=None)),
        (f"Free-text answers, paper's rescoring (metrics.json, not recomputed): {where(old100)}", lambda: stored_table(results / old100)),
        (f"Seven graphs and `rag`, dev 1-40: {where(base40)}", lambda: answers_table(run(base40))),
        (f"GenSco with the dataset's pools, dev 1-40: {where(pools)}", lambda: answers_table(run(pools), base="rag")),
        (f"Ablations, dev 1-40: {where(abl)}", lambda: answers_table(run(abl), base="sunar", differ=True)),
        (f"Ablations on dev 1-100: {where(dev100)}",
         lambda: answers_table(run(dev100), ["sunar", "sunar_no_asu", "sunar+first_stage=bm25"], base="sunar", differ=True)),
        (f"Uncertainty that acts, against Self-Ask: {where(acts)}", lambda: answers_table(run(acts))),
        (f"Uncertainty that acts, each switch against SUNAR with hop sampling and branching: {where(acts)}",
         lambda: answers_table(run(acts), [v for v in variants_of(run(acts)) if v.startswith(acts_a)], base=acts_a, differ=True)),
        (f"Confirmation, dev 101-217 (run once the design was fixed): {where(confirm)}", lambda: answers_table(run(confirm), base=demos)),
        (f"How the uncertainty acted on the confirmation questions: {where(confirm)}", lambda: branching_table(run(confirm), acts_s)),
        (f"Wall seconds by node on the confirmation questions: {where(confirm)}", lambda: node_table(run(confirm), acts_s)),
        (f"Where the confirmation's wrong answers were lost: {where(confirm)}", lambda: (t := texts()) and stages_table(run(confirm), t)),
        (f"Every dev question run with both (dev 1-41, dev 42-100 as far as it got, dev 101-217): {where(acts)}, {where(acts2)}, {where(confirm)}",
         lambda: answers_table([*of(run(acts), demos), *of(run(acts), acts_s), *paired(run(acts2), demos, acts_s), *run(confirm)], [demos, acts_s], base=demos)),
        (f"Evidence recall by dataset: {where(dev100)}, {where(base40)}, {where(pools)}",
         lambda: retrieval_table([(dev100, run(dev100), ["sunar", "self_ask", "sunar+first_stage=bm25"]),
                                  (base40, run(base40), ["gensco", "gensco_stop", "ra_isf", "ra_isf+ra_isf_min_relevant=2", "rag"]),
                                  (pools, run(pools), variants_of(run(pools)))])),
        (f"Where the wrong answers were lost, dev 1-100: {where(dev100)}", lambda: (t := texts()) and stages_table(run(dev100), t, sunar4)),
        (f"Where the wrong answers were lost, dev 1-40: {where(base40)}",
         lambda: (t := texts()) and stages_table(run(base40), t, ["self_ask", "gensco", "gensco_stop", "ra_isf", "ra_isf+ra_isf_min_relevant=2", "rag"])),
        (f"Signals' AUROC: {where(dev63)}, {where(dev100)}, {where(dev200)}",
         lambda: signals_table([("dev63 (free text)", of(run(dev63), "sunar")), ("dev 1-100", of(run(dev100), "sunar")),
                                ("dev 101-200", of(run(dev200), "sunar")), ("all 200", [*of(run(dev100), "sunar"), *of(run(dev200), "sunar")])],
                               [f for f in FEATURES if f not in ("unknown", "fallback", "answer_logprob", "probe")])),
        (f"The probability shown, fitted on dev 1-100 and scored on questions it never saw: {where(dev100)}, {where(dev200)}",
         lambda: calibrated_table([("`sunar`: fitted on dev 1-100, scored on dev 101-200", of(run(dev100), "sunar"), of(run(dev200), "sunar"))])),
        ("The shipped calibration with the probe on the hidden state: `benchmarks/results/calibration-probe/results.json`",
         lambda: probe_table(bench / "calibration-probe" / "results.json")),
        (f"The probability shown for uncertainty that acts, fitted on dev 1-41, scored on dev 101-217: {where(acts)}, {where(confirm)}",
         lambda: calibrated_table([(f"`{v}`", of(run(acts), v), of(run(confirm), v)) for v in (acts_s, demos)])),
        (f"Ten samples and the answer's likelihood, dev 1-24: {where(dev24)} against the same questions in {where(dev63)}",
         lambda: signals_table([("m = 3 (dev63)", [r for r in of(run(dev63), "sunar") if r["id"] in {x["id"] for x in run(dev24)}]),
                                ("m = 10 (dev24-signals-m10)", of(run(dev24), "sunar"))],
                               ["agreement", "semantic_entropy", "sets", "answer_logprob"], combined=False)),
        (f"Where the recorded seconds go, dev 1-40: {where(base40)}", lambda: time_table(run(base40))),
        (f"Wall seconds by node, `sunar`, dev 101-200 (every call computed in the run): {where(dev200)}", lambda: node_table(run(dev200), "sunar")),
        ("RA-ISF's judges, dev 101-140: `benchmarks/results/ra-isf-judges/results.json`", lambda: judges_table(bench / "ra-isf-judges" / "results.json")),
        ("NAR early stop: `benchmarks/results/nar-stop-musique10/results.json`", lambda: nar_stop_table(bench / "nar-stop-musique10" / "results.json")),
    ]
    return [(caption, make()) for caption, make in out]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="the folder of the run folders (default: evals/results)")
    parser.add_argument("--run", help="print only this run's table, every variant (against self_ask when it is in the run)")
    parser.add_argument("--check", type=Path, nargs="?", const=ROOT / "benchmarks" / "RESULTS.md",
                        help="fail if a table is not verbatim in this file (default: benchmarks/RESULTS.md)")
    args = parser.parse_args(argv)
    if args.run:
        path = args.results / args.run
        print(f"{path} ({run_date(path)})\n\n{answers_table(read_records(path))}")
        return 0
    found = sections(args.results)
    if args.check:
        text = args.check.read_text()
        missing = [caption for caption, t in found if t is not None and t not in text]
        for caption in missing:
            print(f"not in {args.check}: {caption}", file=sys.stderr)
        print(f"{len(found) - len(missing)} of {len(found)} tables are in {args.check}")
        return 1 if missing else 0
    for caption, t in found:
        print(f"### {caption}\n\n{t if t is not None else '(skipped: the corpus is not at $SUNAR_DATA or ../shared/data/multihop)'}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
