"""Metrics, report and plots of an evaluation run (from its predictions).

metrics.json: {dataset or "all": {variant: {n, errors, answer metrics, retrieval metrics, cost,
              cover_em_ci95, vs_self_ask: {n, wins, losses, p}, wrong_answers: {stage: count}}}}
report.md:    accuracy, retrieval and cost tables side by side, where the wrong answers were lost, cost
              relative to Self-Ask; the accuracy by question type ("musique 3hop", "2wiki comparison")
              and, when asked for, by half of the run (:func:`sunar.evals.breakdown.breakdowns`)
accuracy.png, recall.png, cost.png, calibration.png (risk-coverage curves; :mod:`sunar.evals.plots`)
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sunar.configuration import Configuration
from sunar.evals import calibration
from sunar.evals.breakdown import (
    ANSWER_KEYS,
    BASELINE,
    VERSUS_HEADER,
    against,
    breakdown_section,
    breakdowns,
    question_types,
    stored_metrics,
    table,
    versus,
)
from sunar.evals.metrics import RECALL_KS, cover_em, proportion_ci
from sunar.evals.plots import plot, plot_calibration

#: cover-EM is the paper's metric (and what "right" means); word cover-EM, beside it, does not let a
#: sub-word count ("American" for "America").
RETRIEVAL_KEYS = ("recall@1", "recall@10", "ndcg@10")
COST_KEYS = ("llm_calls", "judge_calls", "loglik_calls", "prompt_tokens", "generated_tokens")
TIME_KEYS = ("total", "llm", "nli", "scoring", "rest")
#: Where a wrong answer was lost, told by where the gold answer's text is in the ranked evidence:
#: among the first ``l`` documents (in the MER variants, the documents MER read: the reasoning over
#: them failed), only lower down (retrieved, then ranked out), or nowhere (never retrieved).
STAGES = {"in_top": "in the first l documents", "lower": "only below the first l", "not_retrieved": "in no document"}


def _mean(values: Sequence[float]) -> float:
    return float(statistics.mean(values)) if values else 0.0


def summarise(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Means over the answered records; failed questions count as wrong with no evidence."""
    answered = [r for r in records if not r.get("error")]
    scores = [stored_metrics(r) for r in answered]
    n = len(records)

    def metric(key: str) -> float:
        return sum(m.get(key, 0.0) for m in scores) / n if n else 0.0

    out: dict[str, Any] = {"n": n, "errors": n - len(answered)}
    out.update({k: metric(k) for k in ANSWER_KEYS})
    out["cover_em_ci95"] = list(proportion_ci(round(out["cover_em"] * n), n))
    out.update({f"recall@{k}": metric(f"recall@{k}") for k in RECALL_KS})
    out["ndcg@10"] = metric("ndcg@10")
    out.update({k: _mean([float(r.get(k, 0)) for r in answered]) for k in (*COST_KEYS, "cached_calls", "parse_fallbacks")})
    out["seconds"] = {k: _mean([r["time"][k] for r in answered]) for k in TIME_KEYS}
    return out


def evidence_read(configuration: dict[str, Any]) -> int:
    """l: how many of the first documents MER reads under this configuration."""
    return Configuration.from_runnable_config({"configurable": configuration}).evidence


def stage_lost(record: dict[str, Any], texts: Mapping[str, str], top: int) -> str | None:
    """The :data:`STAGES` key of a wrong answer (None for a right one or a failed question): where
    the gold answer's text (or an alias, normalised as for cover-EM) appears in the evidence."""
    if record.get("error") or calibration.right(record):
        return None
    ids = record.get("evidence_ids") or []

    def holds(chunk: Sequence[str]) -> bool:
        return any(cover_em(texts.get(i, ""), record["gold"]) for i in chunk)

    return "in_top" if holds(ids[:top]) else "lower" if holds(ids[top:]) else "not_retrieved"


def aggregate(records: Sequence[dict[str, Any]], texts: Mapping[str, str] | None = None, top: int = 10) -> dict[str, dict[str, Any]]:
    """Metrics per dataset (and "all") and variant; with the corpus ``texts`` (id -> title and
    text), also where the wrong answers were lost (:func:`stage_lost`, first ``top`` documents)."""
    datasets = sorted({r["dataset"] for r in records})
    variants = list(dict.fromkeys(r["variant"] for r in records))
    out: dict[str, dict[str, Any]] = {}
    for dataset in [*datasets, "all"]:
        rows = [r for r in records if dataset in ("all", r["dataset"])]
        out[dataset] = {v: summarise([r for r in rows if r["variant"] == v]) for v in variants if any(r["variant"] == v for r in rows)}
        for v, summary in out[dataset].items():
            if (paired := against(rows, v)) is not None:
                summary[f"vs_{BASELINE}"] = paired
            summary["calibration"] = calibration.summary([r for r in rows if r["variant"] == v])
            if texts is not None:
                lost = Counter(stage_lost(r, texts, top) for r in rows if r["variant"] == v)
                summary["wrong_answers"] = {stage: lost[stage] for stage in STAGES}
    return out


def render(metrics: dict[str, dict[str, Any]], configuration: dict[str, Any], tables: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """report.md, with the accuracy ``tables`` of :func:`breakdowns` after the comparison with the baseline."""
    datasets = [d for d in metrics if d != "all"]
    variants = list(metrics["all"])
    parts = ["# Evaluation report", ""]
    settings = ", ".join(f"{k}={v}" for k, v in sorted(configuration.items()) if k not in {"llm_cache", "index_dir"})
    n = {v: metrics["all"][v]["n"] for v in variants}
    parts += [f"Settings: {settings}.", "", f"Questions per variant: {n}.", ""]

    parts += ["## Answers (cover-EM / word cover-EM / EM / F1)", ""]
    rows = [[v] + [" / ".join(f"{metrics[d][v][k]:.3f}" for k in ANSWER_KEYS) if v in metrics[d] else "-" for d in [*datasets, "all"]] for v in variants]
    parts += [table(["variant", *datasets, "all"], rows), ""]

    parts += ["## Retrieval of the gold paragraphs by the evidence used (R@1 / R@10 / nDCG@10)", ""]
    rows = [[v] + [" / ".join(f"{metrics[d][v][k]:.3f}" for k in RETRIEVAL_KEYS) if v in metrics[d] else "-" for d in [*datasets, "all"]] for v in variants]
    parts += [table(["variant", *datasets, "all"], rows), ""]

    parts += [
        f"## Against {BASELINE}, question by question (cover-EM; the sign test counts only the questions where the two differ)",
        "",
    ]
    rows = []
    for v in variants:
        m = metrics["all"][v]
        low, high = m["cover_em_ci95"]
        paired = m.get(f"vs_{BASELINE}")
        rows.append([v, m["n"], f"{m['cover_em']:.3f} [{low:.3f}, {high:.3f}]", f"{m['word_cover_em']:.3f}", *versus(paired)])
    header = ["variant", "questions", "cover-EM [95% Wilson CI]", "word cover-EM", *VERSUS_HEADER]
    parts += [table(header, rows), ""]
    for title, groups in (tables or {}).items():
        parts += breakdown_section(title, groups)

    if all("wrong_answers" in metrics["all"][v] for v in variants):
        top = evidence_read(configuration)
        parts += [
            f"## Where the wrong answers were lost: the gold answer's text in the ranked evidence (l = {top}; "
            "the MER variants read the first l)",
            "",
        ]
        rows = [[v, sum(metrics["all"][v]["wrong_answers"].values())] + [metrics["all"][v]["wrong_answers"][k] for k in STAGES] for v in variants]
        parts += [table(["variant", "wrong answers", *STAGES.values()], rows), ""]

    parts += calibration_section(metrics, datasets, variants)

    parts += [
        "## Cost per question (means; seconds as computed, LLM calls read from the cache count with the time they took)",
        "",
    ]
    base = metrics["all"].get(BASELINE)
    rows = []
    for v in variants:
        m, s = metrics["all"][v], metrics["all"][v]["seconds"]
        relative = f"{m['llm_calls'] / base['llm_calls']:.1f}x / {s['total'] / base['seconds']['total']:.1f}x" if base and base["llm_calls"] and base["seconds"]["total"] else "-"
        rows.append(
            [v, f"{m['llm_calls']:.1f}", f"{m['judge_calls']:.1f}", f"{m['loglik_calls']:.1f}", f"{m['prompt_tokens']:.0f}", f"{m['generated_tokens']:.0f}", f"{m.get('parse_fallbacks', 0):.2f}"]
            + [f"{s[k]:.1f}" for k in TIME_KEYS]
            + [relative, m["errors"]]
        )
    header = ["variant", "LLM calls", "yes/no judgements", "likelihood calls", "prompt tokens", "generated tokens", "parse fall-backs", "wall s", "LLM s", "judgement s (NLI, RA-ISF)", "retrieval + scoring s", "rest s", "calls / wall vs self_ask", "errors"]
    parts += [table(header, rows), ""]
    parts += ["![accuracy](accuracy.png)", "![recall](recall.png)", "![cost](cost.png)", "![calibration](calibration.png)", ""]
    return "\n".join(parts)


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def calibration_section(metrics: dict[str, dict[str, Any]], datasets: Sequence[str], variants: Sequence[str]) -> list[str]:
    """Does the confidence tell right from wrong answers: per variant and dataset, and each signal."""
    parts = [
        "## Does the confidence tell right from wrong answers? (cover-EM is right; AUROC 0.5 is chance)",
        "",
    ]
    rows = []
    for d in [*datasets, "all"]:
        for v in variants:
            c = (metrics[d].get(v) or {}).get("calibration")
            if not c:
                continue
            at = c["accuracy_at"]
            combined = [_figure(c.get(k)) for k in ("combined_auroc_cv", "combined_fitted_auroc_cv")]
            rows.append([d, v, c["n"], _figure(c["auroc"]), _figure(c["ece"])] + [_figure(at[str(k)]) for k in calibration.COVERAGES] + combined)
    header = [
        "dataset", "variant", "answers", "AUROC", "ECE", *[f"accuracy at {k:.0%} answered" for k in calibration.COVERAGES],
        "combined signals, equal weights: AUROC (5-fold CV)", "a weight per signal",
    ]
    parts += [
        table(header, rows), "",
        f"The combined signals: {', '.join(calibration.COMBINED)}, standardised, with equal weights (what sunar calibrate fits) "
        "or a weight per signal, each made a probability by a logistic regression fitted on the other folds.", "",
    ]
    with_signals = [v for v in variants if metrics["all"][v].get("calibration", {}).get("signals")]
    if with_signals:
        parts += ["Each signal alone (AUROC over all questions; oriented so that higher means more trust):", ""]
        rows = [[f] + [_figure(metrics["all"][v]["calibration"]["signals"].get(f)) for v in with_signals] for f in calibration.FEATURES]
        parts += [table(["signal", *with_signals], rows), ""]
    return parts


def write_report(
    out: Path, records: Sequence[dict[str, Any]], configuration: dict[str, Any], texts: Mapping[str, str] | None = None,
    tables: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """metrics.json, report.md (the accuracy ``tables``; by default by question type) and the plots."""
    if not records:
        return {}
    metrics = aggregate(records, texts, evidence_read(configuration))
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    (out / "report.md").write_text(render(metrics, configuration, breakdowns(records) if tables is None else tables))
    plot(metrics, out)
    plot_calibration(records, out)
    return metrics


def report_run(
    run: Path, questions: Path | None = None, halves: int = 0, corpus: Path | None = None, write: bool = False
) -> str:
    """``sunar report``: the report of a run folder from its predictions, nothing run again: the
    questions' types from the records, else from the ``questions`` file; with ``halves``, also by
    half (:func:`half`); with the ``corpus``, where the wrong answers were lost. ``write`` writes
    metrics.json, report.md and the plots again, as ``sunar eval`` does."""
    from sunar.errors import SunarError
    from sunar.evals.predictions import latest, read_predictions
    from sunar.stores.corpus import read_corpus

    records = list(latest(read_predictions(run / "predictions.jsonl")).values())
    if not records:
        raise SunarError(f"{run} holds no predictions (predictions.jsonl or predictions.jsonl.gz); sunar eval --out {run} writes them")
    asked = len({r["id"] for r in records})
    if halves < 0 or halves >= asked:
        raise SunarError(f"--halves {halves}: the run has {asked} questions; split them at 1 to {asked - 1}")
    described = json.loads((run / "run.json").read_text(encoding="utf-8")) if (run / "run.json").exists() else {}
    configuration = described.get("configuration") or {}
    types = question_types(questions, records) if questions else None
    tables = breakdowns(records, types, halves)
    texts = {d.id: d.content for d in read_corpus(corpus)} if corpus else None
    if write:
        write_report(run, records, configuration, texts, tables)
        return (run / "report.md").read_text()
    return render(aggregate(records, texts, evidence_read(configuration)), configuration, tables)
