"""The committed evaluation runs, read and summarised: what every table of RESULTS.md is made of.

Each run is read from ``evals/results/<run>/predictions.jsonl.gz`` (or ``predictions.jsonl``). The
answer metrics are recomputed from each record's answer and gold answers, the evidence recall from
its ranked evidence ids and gold paragraphs, with :mod:`sunar.evals.metrics`, never taken from the
metrics a record stored (a metric's definition may have changed since). Two kinds of seconds per
question:

- wall s: ``wall_seconds``, measured when the record was computed (in that run, or in the run it was
  copied from), without the seconds of the calls replayed from the LLM call cache;
- recorded s: ``time.total`` = wall + the stored seconds of the cached calls (each call counts with
  the seconds it took when it was first computed): what the question costs without a cache.

Variants of one run share a cache, so a variant that replays another's calls has a short wall time
but the same recorded time; comparisons of cost use recorded seconds.
"""

from __future__ import annotations

import gzip
import json
import math
import statistics
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from sunar.evals.metrics import cover_em, exact_match, paired_comparison, retrieval_metrics, token_f1
from sunar.evals.predictions import latest
from sunar.signals import with_trace_signals

DATASETS = (("musique", "MuSiQue"), ("2wiki", "2Wiki"))

Records = list[dict[str, Any]]


def read_records(run: Path, committed: bool = False) -> Records:
    """The predictions of a run folder. The plain ``predictions.jsonl`` first: it is the working copy
    of a run in progress or resumed, the fullest. One record per (question, variant), the one a
    resumed run keeps (:func:`sunar.evals.predictions.latest`). With ``committed``, the file as the repository's
    HEAD holds it (``predictions.jsonl.gz``, or a plain file committed as it is): a run going on
    beside it, which rewrites both files, does not change what RESULTS.md reports until its new
    file is committed. Outside a repository, or for a run not committed yet, the packed file first.
    Each record's signals include those its trace gives where the run predates them."""
    plain, packed = run / "predictions.jsonl", run / "predictions.jsonl.gz"
    order = (packed, plain) if committed else (plain, packed)
    found = next(((p, d) for p in order if (d := committed_bytes(p)) is not None), None) if committed else None
    if found is None:
        path = next((p for p in order if p.exists()), None)
        if path is None:
            raise FileNotFoundError(f"{run}: no predictions.jsonl(.gz)")
        found = (path, path.read_bytes())
    path, data = found
    data = gzip.decompress(data) if path.suffix == ".gz" else data
    return with_trace_signals(latest([json.loads(line) for line in data.splitlines() if line.strip()]).values())


def committed_bytes(path: Path) -> bytes | None:
    """The file as the HEAD commit of its repository holds it; None if it holds none (or no git)."""
    try:
        done = subprocess.run(["git", "show", f"HEAD:./{path.name}"], cwd=path.parent, capture_output=True, check=False)
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


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
    """cover-EM, EM, F1 and R@10 of one record, recomputed; a failed question is wrong, with no
    evidence."""
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


def correct(records: Records) -> np.ndarray:
    """1 for each right answer (cover-EM), else 0."""
    return np.array([scores(r)["cover_em"] for r in records])


def recorded_seconds(record: dict[str, Any]) -> float:
    """A record's recorded seconds: ``time.total`` (wall + the stored seconds of its cached calls), else its wall seconds."""
    return float((record.get("time") or {}).get("total", record.get("wall_seconds", 0.0)))


def mean(values: Iterable[float]) -> float:
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
        "exact": int(sum(x["em"] for x in s)),
        "cover_em": mean(x["cover_em"] for x in s),
        "em": mean(x["em"] for x in s),
        "f1": mean(x["f1"] for x in s),
        "recall@10": mean(x["recall@10"] for x in s),
        "recall@10_by_dataset": {d: mean(x["recall@10"] for r, x in zip(rows, s, strict=True) if r.get("dataset") == d) for d, _ in DATASETS},
        "llm_calls": mean(r.get("llm_calls", 0) for r in answered),
        "loglik_calls": mean(r.get("loglik_calls", 0) for r in answered),
        "cached_calls": mean(r.get("cached_calls", 0) for r in answered),
        "parse_fallbacks": mean(r.get("parse_fallbacks", 0) for r in answered),
        "wall_seconds": mean(r.get("wall_seconds", 0.0) for r in answered),
        "recorded_seconds": mean(recorded_seconds(r) for r in answered),
    }
    if base and base != variant and of(records, base):
        out.update(against(records, variant, base))
    return out


def against(records: Records, variant: str, base: str) -> dict[str, Any]:
    """cover-EM and EM of ``variant`` against ``base`` on the questions both have (exact sign tests),
    how many answers and evidence lists differ, and the cost ratios."""
    mine = {r["id"]: r for r in of(records, variant)}
    theirs = {r["id"]: r for r in of(records, base)}
    ids = [i for i in mine if i in theirs]
    compared = paired_comparison([scores(mine[i])["cover_em"] for i in ids], [scores(theirs[i])["cover_em"] for i in ids])
    exact = paired_comparison([scores(mine[i])["em"] for i in ids], [scores(theirs[i])["em"] for i in ids])
    b = summarise(records, base)
    m = summarise(records, variant)
    return {
        "base": base,
        "wins": compared["wins"],
        "losses": compared["losses"],
        "p": compared["p"],
        "em_wins": exact["wins"],
        "em_losses": exact["losses"],
        "em_p": exact["p"],
        "answers_differ": sum(1 for i in ids if str(mine[i].get("answer")) != str(theirs[i].get("answer"))),
        "evidence_differ": sum(1 for i in ids if mine[i].get("evidence_ids") != theirs[i].get("evidence_ids")),
        "calls_ratio": m["llm_calls"] / b["llm_calls"] if b["llm_calls"] else math.nan,
        "recorded_ratio": m["recorded_seconds"] / b["recorded_seconds"] if b["recorded_seconds"] else math.nan,
        "wall_ratio": m["wall_seconds"] / b["wall_seconds"] if b["wall_seconds"] else math.nan,
    }
