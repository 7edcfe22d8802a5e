"""Markdown tables of how well an answer's confidence tells right from wrong (AUROC, ECE, the
accuracy of the most trusted answers), recomputed from the signals the committed runs recorded with
:mod:`sunar.evals.calibration`, the code ``sunar calibrate`` runs."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.results_render import fmt, table
from benchmarks.results_runs import Records, correct
from sunar.evals import calibration
from sunar.evals.metrics import paired_comparison
from sunar.nodes.decompose import STANDS
from sunar.trust import COMBINED, signal_matrix


def calibrated_table(columns: Sequence[tuple[str, Records, Records] | tuple[str, Records, Records, dict[str, Any]]], alpha: float = 0.3) -> str:
    """What ``sunar calibrate`` fits on one set of answers (the combined signals, their map to a
    probability, the trust level for error rate ``alpha``), scored on answers to other questions:
    AUROC with its 95% bootstrap interval, ECE of the probability shown, accuracy of the most
    trusted, and what the trust level answers there. A column's fourth item, if any, is what
    ``fit_calibration`` is given besides (``weights``, ``shapes``)."""
    stats = []
    for _, fit_on, score_on, *given in columns:
        fitted = calibration.fit_calibration([r for r in fit_on if not r.get("error")], alpha, **(given[0] if given else {}))
        stats.append((fitted, calibration.check_calibration(fitted, [r for r in score_on if not r.get("error")])))

    def interval(c: dict[str, Any]) -> str:
        return f"{fmt(c['auroc'])} [{fmt(c['auroc_95'][0])}, {fmt(c['auroc_95'][1])}]" if c["auroc_95"] else fmt(c["auroc"])

    def level(f: dict[str, Any], c: dict[str, Any]) -> str:
        if not math.isfinite(f["threshold"]):
            return "none kept it on the fitted answers"
        return f"{f['threshold']:.2f}: answers {c['answered']} ({c['coverage']:.0%}), {fmt(c['accuracy_answered'])} right"

    def unpromised(f: dict[str, Any], c: dict[str, Any]) -> str:
        if not math.isfinite(f["level"]):
            return "none"
        at = c["at_level"]
        return f"{f['level']:.2f} ({f['level_coverage']:.0%} there): answers {at['answered']} ({at['coverage']:.0%}), {fmt(at['accuracy'])} right"

    header = ["", *(column[0] for column in columns)]
    body = [["fitted on: answers (right)", *(f"{f['n']} ({round(f['n'] * float(correct([r for r in fo if not r.get('error')]).mean()))})"
                                             for (f, _), (_, fo, *_) in zip(stats, columns, strict=True))],
            ["map to a probability; cross-fitted AUROC there", *(f"{f['mapping']['kind']}; {fmt(f['auroc_held_out'])}" for f, _ in stats)],
            ["scored on: answers (right)", *(f"{c['n']} ({round(c['accuracy'] * c['n'])})" for _, c in stats)],
            ["**AUROC [95% bootstrap]**", *(f"**{interval(c)}**" for _, c in stats)],
            ["ECE of the probability shown", *(fmt(c["ece"]) for _, c in stats)],
            ["accuracy of the most trusted 25 / 50%", *(" / ".join(fmt(c["accuracy_at"][str(k)]) for k in (0.25, 0.5)) for _, c in stats)],
            [f"trust level for at most {alpha:.0%} wrong (delta 0.1)", *(level(f, c) for f, c in stats)],
            [f"**level at which the fitted answers were at most {alpha:.0%} wrong (no guarantee)**", *(f"**{unpromised(f, c)}**" for f, c in stats)]]
    return table(header, body)


#: The judgements of ``hop_support=judge`` rated alone, each oriented so that higher means more trust.
CHAIN_SIGNALS = (("the weakest hop's support (`hop_support`)", "hop_support"), ("the final answer's fit to the question (`answer_fits`)", "answer_fits"),
                 ("**the least of the two (`chain_support`)**", "chain_support"))


def chain_table(columns: Sequence[tuple[str, Records]]) -> str:
    """The final answer judged against the whole question (``answer_fits``) and the chain's weakest
    link (``chain_support``) beside the weakest hop's support: each one's AUROC alone, the answers the
    judge said do not answer the question, and the shipped S calibration's signals cross-fitted."""
    stats = []
    for _, rows in columns:
        rows = [r for r in rows if not r.get("error")]
        y = correct(rows)
        x = signal_matrix(rows, [f for _, f in CHAIN_SIGNALS])
        fits = [(r["signals"].get("answer_fits"), ok) for r, ok in zip(rows, y, strict=True) if r["signals"].get("answer_fits") is not None]
        stats.append({"n": f"{len(rows)} ({int(y.sum())})", **{f: calibration.alone(x[:, i], y) for i, (_, f) in enumerate(CHAIN_SIGNALS)},
                      "means": " / ".join(fmt(float(np.mean([p for p, k in fits if k == want]))) if any(k == want for _, k in fits) else "-" for want in (1, 0)),
                      "no": f"{sum(p < 0.5 for p, _ in fits)} ({int(sum(k for p, k in fits if p < 0.5))})",
                      "shipped": calibration.auroc(calibration.cross_validated(rows, y, features=(*COMBINED, "whole_chain")), y)})
    header = ["", *(label for label, _ in columns)]
    body = [["answers (right)", *(s["n"] for s in stats)],
            *([f"AUROC alone: {name}", *((f"**{fmt(s[f])}**" if name.startswith("**") else fmt(s[f])) for s in stats)] for name, f in CHAIN_SIGNALS),
            ["mean `answer_fits`: right / wrong answers", *(s["means"] for s in stats)],
            ["answers judged not to answer the question (`answer_fits` < 0.5): n (right)", *(s["no"] for s in stats)],
            ["the S calibration's signals (`COMBINED` and `whole_chain`), 5-fold CV", *(fmt(s["shipped"]) for s in stats)]]
    return table(header, body)


#: How a doubted final answer acted (``unfit_answer``), by the note the check left in the record.
ACTED = (("another answer found replaced it (`choose`)", "the judge doubted the final answer "),
         ("its chain of one hop went one step further (`go_on`)", "does not answer the question, and its chain asked only "))
#: The answer the check doubted, as its first note quotes it.
DOUBTED = re.compile(r"the (?:judge doubted the )?final answer (['\"])(.*?)\1 (?:\(p =|does not answer)")


def acting_notes(record: dict[str, Any]) -> list[str]:
    """A record's notes, without those of a chain that found no next step (the check did not act)."""
    return [n for n in record.get("notes") or [] if STANDS not in n]


def doubted(record: dict[str, Any]) -> str | None:
    """The final answer before the check acted on it (None: it did not act, or its chain found no next step)."""
    return next((m.group(2) for n in acting_notes(record) if (m := DOUBTED.search(n))), None)


def acted_table(columns: Sequence[tuple[str, Records]]) -> str:
    """What the answers the judge doubted became (``unfit_answer``): how many were replaced by another
    answer found or went one step further, how many of those are right now and were right before
    (the answer the check doubted, scored against the gold), the two compared by a sign test, and
    the answers still judged not to answer the question."""
    rows_of = [[r for r in rows if not r.get("error")] for _, rows in columns]
    body = [["answers (right)", *(f"{len(rows)} ({_right(rows)})" for rows in rows_of)]]
    for name, said in ACTED:
        acted = [[r for r in rows if any(said in n for n in acting_notes(r))] for rows in rows_of]
        body.append([f"{name}: n (right now; right before)", *(f"{len(a)} ({_right(a)}; {_right(_before(a))})" for a in acted)])
    changed = [[r for r in rows if doubted(r) is not None] for rows in rows_of]
    compared = [paired_comparison(list(correct(c)), list(correct(_before(c)))) if c else None for c in changed]
    body.append(["acting against keeping the doubted answer: wins / losses (sign test p)",
                 *(f"{c['wins']} / {c['losses']} (p = {c['p']:.2f})" if c else "-" for c in compared)])
    still = [[r for r in rows if (r["signals"].get("answer_fits") is not None and r["signals"]["answer_fits"] < 0.5)] for rows in rows_of]
    body.append(["answers still judged not to answer the question: n (right)", *(f"{len(s)} ({_right(s)})" for s in still)])
    return table(["", *(label for label, _ in columns)], body)


def _before(records: Records) -> Records:
    """The records with the answers the check doubted instead of their final ones."""
    return [{**r, "answer": doubted(r)} for r in records]


def _right(records: Records) -> int:
    """How many of ``records`` are right (cover-EM)."""
    return int(correct(records).sum()) if records else 0
