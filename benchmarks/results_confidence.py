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
from benchmarks.results_runs import Records, correct, scores
from sunar.evals import calibration
from sunar.evals.metrics import paired_comparison
from sunar.nodes.decompose import STANDS
from sunar.signals import agrees, known
from sunar.trust import COMBINED, FEATURES, signal_matrix


def signals_table(columns: Sequence[tuple[str, Records]], features: Sequence[str] = FEATURES, combined: bool = True) -> str:
    """AUROC (right vs wrong by cover-EM; 0.5 is chance) of the confidence shown and each signal,
    per column of answers, and the combined signals out of fold (5-fold CV, each dataset dealt to
    the folds in turn: equal weights, as shipped, and a weight per signal)."""
    stats = []
    for _, rows in columns:
        rows = [r for r in rows if not r.get("error")]
        y = correct(rows)
        x = signal_matrix(rows, features)
        per = {f: calibration.alone(x[:, i], y) for i, f in enumerate(features)}
        shown = [float(r.get("confidence") or 0.0) for r in rows]
        entry = {"n": len(rows), "right": int(y.sum()), "confidence": calibration.auroc(shown, y), "ece": calibration.ece(shown, y),
                 "at": [calibration.accuracy_at(shown, y, c) for c in calibration.COVERAGES], **per}
        if combined:
            entry["equal"] = calibration.auroc(calibration.cross_validated(rows, y), y)
            entry["fitted"] = calibration.auroc(calibration.cross_validated(rows, y, weights="fitted"), y)
        stats.append(entry)
    header = ["", *(label for label, _ in columns)]
    body = [["answers (right)", *(f"{s['n']} ({s['right']})" for s in stats)],
            ["the confidence shown (`agreement`)", *(fmt(s["confidence"]) for s in stats)],
            ["its ECE", *(fmt(s["ece"]) for s in stats)],
            ["accuracy of the most confident 25 / 50 / 75%", *(" / ".join(fmt(a) for a in s["at"]) for s in stats)]]
    body += [[f"`{f}`", *(fmt(s[f]) for s in stats)] for f in features]
    if combined:
        body += [["**combined (`COMBINED`), equal weights, 5-fold CV**", *(f"**{fmt(s['equal'])}**" for s in stats)],
                 ["the same, a weight per signal", *(fmt(s["fitted"]) for s in stats)]]
    return table(header, body)


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


def first_hop_right(record: dict[str, Any], first: dict[str, str]) -> bool | None:
    """Whether a record's first hop found the question's first bridge (``first``: question id ->
    the data's first-step answer), one holding the other's words; None without a judged first hop."""
    path = record.get("reasoning_path") or []
    if not path or path[0].get("support") is None or record["id"] not in first:
        return None
    return agrees(str(path[0]["answer"]), first[record["id"]])


#: The combinations of signals the support table rates (cross-fitted, equal weights): the shipped S
#: calibration's and it with the support judgement.
SUPPORT_SETS = (("the four signals (`COMBINED`)", COMBINED), ("and `whole_chain` (shipped for S)", (*COMBINED, "whole_chain")),
                ("and `whole_chain`, `hop_support`", (*COMBINED, "whole_chain", "hop_support")), ("and `hop_support`", (*COMBINED, "hop_support")))


def support_table(columns: Sequence[tuple[str, Records]], first: dict[str, str]) -> str:
    """The hop support judgement (``hop_support``) as a signal: of first hops, right bridge against
    wrong (the data's first step), and of final answers, the weakest hop's support alone and beside
    the combined signals (5-fold CV, equal weights, as shipped)."""
    stats = []
    for _, rows in columns:
        rows = [r for r in rows if not r.get("error")]
        hops = [(r["reasoning_path"][0]["support"], ok) for r in rows if (ok := first_hop_right(r, first)) is not None]
        p, ok = [s for s, _ in hops], [float(k) for _, k in hops]
        y = correct(rows)
        weakest = signal_matrix(rows, ["hop_support"])[:, 0]
        stats.append({"hops": f"{len(hops)} ({int(sum(ok))})", "hop": calibration.auroc(p, ok),
                      "means": " / ".join(fmt(float(np.mean([s for s, k in hops if k == want]))) if any(k == want for _, k in hops) else "-" for want in (True, False)),
                      "below": sum(s < 0.5 for s in p), "n": f"{len(rows)} ({int(y.sum())})", "final": calibration.alone(weakest, y),
                      **{name: calibration.auroc(calibration.cross_validated(rows, y, features=features), y) for name, features in SUPPORT_SETS},
                      "selected": calibration.selected(rows, 0.55, y)})
        chosen = stats[-1]["selected"]
        stats[-1]["chosen"] = calibration.auroc(calibration.cross_validated(rows, y, features=chosen), y) if chosen else None
    header = ["", *(label for label, _ in columns)]
    body = [["first hops judged (bridge right)", *(s["hops"] for s in stats)],
            ["**first hops: AUROC of P(yes), right bridge against wrong**", *(f"**{fmt(s['hop'])}**" for s in stats)],
            ["mean P(yes): right / wrong bridge", *(s["means"] for s in stats)],
            ["first hops judged no (P(yes) < 0.5)", *(str(s["below"]) for s in stats)],
            ["final answers (right)", *(s["n"] for s in stats)],
            ["**final answers: AUROC of the weakest hop's P(yes)**", *(f"**{fmt(s['final'])}**" for s in stats)],
            *([f"{name}, 5-fold CV", *(fmt(s[name]) for s in stats)] for name, _ in SUPPORT_SETS),
            ["the signals with AUROC >= 0.55 alone on these answers (`--select 0.55`)", *(", ".join(f"`{f}`" for f in s["selected"]) or "none" for s in stats)],
            ["**those, 5-fold CV (chosen on the same answers)**", *(f"**{fmt(s['chosen'])}**" for s in stats)]]
    return table(header, body)


#: What sends a hop to the larger model (``hop_support=escalate`` and ``escalate_uncertain``), on a first hop.
TRIGGERS = (("the judge doubts it (P(yes) < 0.5): `escalate`", lambda support, split: support < 0.5),
            ("its answers split (more than one semantic set)", lambda support, split: split),
            ("**either: `escalate_uncertain`**", lambda support, split: support < 0.5 or split))


def trigger_table(columns: Sequence[tuple[str, Records]], first: dict[str, str]) -> str:
    """Which first hops each escalation trigger flags: of the judged first hops, how many found a
    wrong bridge (the data's first step), and per trigger how many it flags, wrong and right."""
    body = []
    for label, rows in columns:
        hops = [(r["reasoning_path"][0], ok) for r in rows if not r.get("error") and (ok := first_hop_right(r, first)) is not None]
        body.append([label, "first hops judged (wrong bridge)", f"{len(hops)} ({sum(not ok for _, ok in hops)})"])
        for name, flags in TRIGGERS:
            hit = [ok for hop, ok in hops if flags(hop["support"], len([c for c in hop.get("candidates") or [] if known(c["answer"])]) > 1)]
            body.append(["", name, f"{len(hit)} ({sum(not ok for ok in hit)} / {sum(hit)})"])
    return table(["run", "first hops", "n (wrong bridge / right bridge)"], body)


def blind_table(rows: Records, first: dict[str, str]) -> str:
    """After a first hop that found the data's first bridge: what S's uncertainty saw of the steps that
    followed, for the answers that ended right and those that ended wrong (cover-EM). A later hop
    passes the judge at P(yes) >= 0.5 and the samples when its answers fall into one semantic set."""
    groups: list[list[dict[str, Any]]] = [[], []]
    for r in rows:
        if not r.get("error") and first_hop_right(r, first):
            groups[int(scores(r)["cover_em"] > 0)].append(r)
    body: list[list[str]] = [[], [], [], [], []]
    for group in (groups[1], groups[0]):
        later = [hop for r in group for hop in r["reasoning_path"][1:]]
        judged = [hop for hop in later if hop.get("support") is not None]
        one_set = [hop for hop in later if len([c for c in hop.get("candidates") or [] if known(c["answer"])]) <= 1]
        cells = [str(len(group)), str(sum(len(r["reasoning_path"]) == 1 for r in group)), str(len(later)),
                 f"{sum(hop['support'] >= 0.5 for hop in judged)} of {len(judged)}", f"{len(one_set)} of {len(later)}"]
        for row, cell in zip(body, cells, strict=True):
            row.append(cell)
    names = ["questions", "ended after the first hop", "later hops", "later hops the judge passed (P(yes) >= 0.5)",
             "later hops whose answers fell into one semantic set"]
    return table(["after the right first bridge", "answer right", "answer wrong"], [[name, *row] for name, row in zip(names, body, strict=True)])


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


def sample_vote(record: dict[str, Any], least: int) -> str:
    """The answer a vote of the answers sampled from the final evidence would give: where none of
    them agrees with the final answer (its recorded ``agreement`` is 0), the sample the most of them
    agree with (cover-EM's test both ways; the first of a tie) if at least ``least`` do, itself
    counted; else the final answer."""
    answer, samples = str(record.get("answer") or ""), [s for s in record["signals"].get("samples") or [] if known(s)]
    if record["signals"].get("agreement") != 0 or not samples:
        return answer
    backing = [sum(agrees(s, t) for t in samples) for s in samples]
    return samples[backing.index(max(backing))] if max(backing) >= least else answer


def sample_vote_table(label: str, records: Records, least: Sequence[int] = (2, 3)) -> str:
    """What a vote of the m answers sampled from the final evidence (the confidence step's) against
    the final answer would have changed, replayed on a run's recorded samples: answers changed, and
    the wins and losses against the run's own answers by cover-EM and by EM."""
    rows = [r for r in records if not r.get("error") and r["signals"].get("samples")]
    body = []
    for k in least:
        voted = [{**r, "answer": sample_vote(r, k)} for r in rows]
        changed = sum(v["answer"] != r.get("answer") for v, r in zip(voted, rows, strict=True))
        cells = []
        for metric in ("cover_em", "em"):
            c = paired_comparison([scores(v)[metric] for v in voted], [scores(r)[metric] for r in rows])
            cells.append(f"{c['wins']} / {c['losses']} (p = {c['p']:.3f})")
        body.append([f"{label}: at least {k} samples agree, none with the final answer", str(len(rows)), str(changed), *cells])
    return table(["vote", "answers", "changed", "cover-EM wins / losses", "EM wins / losses"], body)
