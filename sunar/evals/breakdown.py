"""The accuracy of an evaluation run broken down by question type (dataset and type: "musique 3hop",
"2wiki comparison") and by half of the run, each variant against the baseline with the exact sign test;
and the pieces of a report table they share with :mod:`sunar.evals.report`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sunar.evals import calibration
from sunar.evals.metrics import answer_metrics, paired_comparison

#: The answer metrics every record reports (computed for a record from before one was stored).
ANSWER_KEYS = ("cover_em", "word_cover_em", "em", "f1")
#: The variant every other one is compared with, question by question.
BASELINE = "self_ask"
#: The columns of a comparison with the baseline.
VERSUS_HEADER = (f"right where {BASELINE} was wrong", f"wrong where {BASELINE} was right", "sign test p (two-sided)")


def stored_metrics(record: dict[str, Any]) -> dict[str, float]:
    """A record's metrics; the answer metrics a run from before them did not store (word cover-EM)
    computed from its answer and gold, so old runs report them too."""
    stored = record["metrics"]
    if "answer" in record and any(k not in stored for k in ANSWER_KEYS):
        return {**answer_metrics(record["answer"], record.get("gold") or []), **stored}
    return stored


def against(rows: Sequence[dict[str, Any]], variant: str, base: str = BASELINE) -> dict[str, float] | None:
    """cover-EM of ``variant`` against ``base`` on the questions both answered (failed = wrong)."""
    if variant == base:
        return None
    baseline = {r["id"]: r for r in rows if r["variant"] == base}
    pairs = [(r, baseline[r["id"]]) for r in rows if r["variant"] == variant and r["id"] in baseline]
    if not pairs:
        return None
    return paired_comparison([calibration.right(a) for a, _ in pairs], [calibration.right(b) for _, b in pairs])


def question_type(record: dict[str, Any], types: Mapping[str, str] | None = None) -> str:
    """The record's question type with its dataset ("musique 3hop", "2wiki comparison"): the
    record's ``type``, else the one ``types`` (id -> type, from the questions file) gives it."""
    kind = record.get("type") or (types or {}).get(str(record["id"]), "")
    return f"{record['dataset']} {kind}" if kind else f"{record['dataset']} (type not recorded)"


def question_types(path: Path, records: Sequence[dict[str, Any]]) -> dict[str, str]:
    """id -> ``type`` of the questions of a questions file (the run's, or any file holding its
    questions); every question of the run must be in it."""
    from sunar.errors import SunarError
    from sunar.evals.data import read_questions

    types = {q.id: q.type for q in read_questions(path)}  # checked whole, as sunar eval checks it
    missing = list(dict.fromkeys(str(r["id"]) for r in records if str(r["id"]) not in types))
    if missing:
        raise SunarError(f"{len(missing)} question(s) of the run are not in {path} (the first: {missing[0]}); give the questions file the run was made from")
    return types


def half(records: Sequence[dict[str, Any]], at: int) -> Callable[[dict[str, Any]], str]:
    """A record's half of the run: "questions 1-at" or "questions at+1-N", its question numbered
    from 1 in the order the run took the questions (that of their first records in predictions.jsonl:
    datasets interleaved, after --skip, so a run's question 1 is the first it asked)."""
    number = {qid: k for k, qid in enumerate(dict.fromkeys(r["id"] for r in records), start=1)}

    def span(first: int, last: int) -> str:
        return f"questions {first}-{last}" if first < last else f"question {first}"

    first, second = span(1, min(at, len(number))), span(at + 1, len(number))
    return lambda r: first if number[r["id"]] <= at else second


def breakdown(records: Sequence[dict[str, Any]], group: Callable[[dict[str, Any]], str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Accuracy per group of questions (then "all") and variant: ``n``, cover-EM ``right`` (a count)
    and rate, EM (failed questions are wrong), and against :data:`BASELINE` on the group's questions
    both answered (:func:`against`; none in a group without the baseline)."""
    variants = list(dict.fromkeys(r["variant"] for r in records))
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for label in [*sorted({group(r) for r in records}), "all"]:
        rows = [r for r in records if label == "all" or group(r) == label]
        out[label] = {}
        for v in variants:
            mine = [r for r in rows if r["variant"] == v]
            if not mine:
                continue
            right = round(sum(calibration.right(r) for r in mine))
            em = sum(stored_metrics(r).get("em", 0.0) for r in mine if not r.get("error"))
            out[label][v] = {"n": len(mine), "right": right, "cover_em": right / len(mine), "em": em / len(mine)}
            if (paired := against(rows, v)) is not None:
                out[label][v][f"vs_{BASELINE}"] = paired
    return out


def breakdowns(records: Sequence[dict[str, Any]], types: Mapping[str, str] | None = None, halves: int = 0) -> dict[str, dict[str, Any]]:
    """The accuracy broken down by question type (:func:`question_type`) and, with ``halves`` (N),
    by questions 1-N and N+1 to the end of the run (:func:`half`): title -> :func:`breakdown`."""
    out = {"question type": breakdown(records, lambda r: question_type(r, types))}
    if halves:
        out["half of the run (its questions numbered from 1 in the order it took them)"] = breakdown(records, half(records, halves))
    return out


def versus(paired: dict[str, float] | None) -> list[Any]:
    """The cells of a comparison with the baseline: wins, losses, sign test p (or dashes)."""
    return [paired["wins"], paired["losses"], f"{paired['p']:.3f}"] if paired else ["-", "-", "-"]


def breakdown_section(title: str, groups: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One :func:`breakdown` as a table: a row per group and variant, the total last."""
    parts = [
        f"## Accuracy by {title}: cover-EM, EM, and against {BASELINE} on the questions both answered (the sign "
        "test counts only the questions where the two differ)",
        "",
    ]
    rows = [
        [label, v, m["n"], m["right"], f"{m['cover_em']:.3f}", f"{m['em']:.3f}", *versus(m.get(f"vs_{BASELINE}"))]
        for label, per_variant in groups.items() for v, m in per_variant.items()
    ]
    header = ["questions", "variant", "n", "right (cover-EM)", "cover-EM", "EM", *VERSUS_HEADER]
    parts += [table(header, rows), ""]
    if any(label.endswith("(type not recorded)") for label in groups):
        parts += ["The records hold no question type: give the questions file, sunar report DIR --questions FILE.", ""]
    return parts


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
