"""Does a calibration's probability hold on questions it was never fitted on? Each way of fitting one
(a set of signals x a way of weighing them x a map to a probability), fitted on all but one part of
the labelled answers and scored on the part left out.

The parts are the answers' datasets (MuSiQue against 2Wiki: leave one dataset out), their question
types (the records' ``type``, or the questions file's: leave one type out), or their questions'
shapes (``sunar.compare.shape``: chain, comparison, inference, where the tree has it). For each
candidate and each part left out: the part's answers and share right, the mean probability given
them, its AUROC and ECE, and the trust level at ``alpha`` (the conformal threshold with ``delta``
that :func:`sunar.evals.calibration.fit_calibration` finds on the rest) with what it answers of
the part (coverage, share wrong, and whether that stayed at most ``alpha``). A candidate is judged by
its worst part, not the mean: the lowest Brier score of its worst part first.

    PYTHONPATH=. python -m benchmarks.transfer_calibration \\
        --run evals/results/dev100-cut-uncertain-calibrated-qwen1.5b-cpu --run evals/results/confirm-cut-uncertain-qwen1.5b-cpu \\
        --variant sunar+hop_support=cut_uncertain --variant sunar \\
        --shipped sunar/data/calibration/sunar-cut-uncertain-embedded-qwen2.5-1.5b.json --parts dataset --out FILE.json

Each question counts once (the first run that answered it); a run's answers are those of the first
``--variant`` it holds. ``--questions FILE`` gives the type of records that do not hold one.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.results_runs import read_records
from sunar.evals.calibration import brier, check_calibration, fit_calibration, right
from sunar.trust import COMBINED

ALPHA, DELTA = 0.3, 0.1
#: Signals a run records that may move with the base rate: how many hops the chain took, whether it is
#: whole and its hops found their named pages, whether the answer's words are on the pages.
SHIFT_SIGNALS: tuple[tuple[str, ...], ...] = (
    ("hops",), ("whole_chain",), ("named_pages",), ("answer_in_evidence",), ("whole_chain", "named_pages"),
    ("hop_support", "answer_fits", "whole_chain", "named_pages"), ("hops", "whole_chain", "named_pages"),
)
#: The questions' shapes as signals (where :func:`sunar.compare.shape` exists): 1 for the shape named.
SHAPE_SIGNALS = ("shape_comparison", "shape_inference")
#: (weights, mapping) of the combination: see :func:`sunar.evals.calibration.fit_calibration`.
METHODS = (("equal", "best"), ("equal", "platt"), ("equal", "isotonic"), ("fitted", "best"), ("fitted", "platt"), ("fitted", "isotonic"))

Candidate = dict[str, Any]


def question_shape() -> Callable[[str], str] | None:
    """``sunar.compare.shape`` where this tree has it (None otherwise)."""
    try:
        from sunar.compare import shape
    except ImportError:
        return None
    return shape


def with_shapes(rows: Sequence[dict[str, Any]], shape: Callable[[str], str]) -> list[dict[str, Any]]:
    """The rows, each with its question's ``shape`` and the :data:`SHAPE_SIGNALS` it gives."""
    out = []
    for r in rows:
        kind = shape(str(r.get("question") or ""))
        out.append({**r, "shape": kind, "signals": {**(r.get("signals") or {}), **{s: float(s == f"shape_{kind}") for s in SHAPE_SIGNALS}}})
    return out


def pooled(runs: Sequence[dict[str, Any]], variants: Sequence[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """Each question's first labelled answer with signals over ``runs`` (each a list of records), of
    the first of ``variants`` each run holds; and the variant taken from each run ("" where none)."""
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    taken = []
    for records in runs:
        held = {r.get("variant") for r in records}
        variant = next((v for v in variants if v in held), "")
        taken.append(variant)
        for r in records:
            if r.get("variant") == variant and variant and not r.get("error") and r.get("signals") and str(r["id"]) not in seen:
                rows.append(r)
                seen.add(str(r["id"]))
    return rows, taken


def part_of(kind: str) -> Callable[[dict[str, Any]], str]:
    """What part of the answers a record is in, for ``kind`` (dataset, type, shape or collection)."""
    return lambda r: str(r.get(kind) or "(none)")


def candidates(base: Sequence[str], shipped: dict[str, Any] | None, shapes: bool) -> list[Candidate]:
    """The ways of fitting compared: the shipped file's (its signals, weights and the mapping its fit
    chooses), then ``base`` with every :data:`METHODS`, with each :data:`SHIFT_SIGNALS` group added,
    with the prior of questions shaped alike, and (``shapes``) with the questions' shapes."""
    out: list[Candidate] = []
    if shipped is not None:
        features = [f for f in shipped["features"] if f != "shape_prior"]
        out.append({"name": "shipped", "features": features, "weights": shipped.get("weights", "equal"), "mapping": "best",
                    "shapes": "shape_prior" in shipped["features"]})
    said = "+".join(base)
    out += [{"name": f"{said} {w} {m}", "features": list(base), "weights": w, "mapping": m, "shapes": False} for w, m in METHODS]
    added = (tuple(f for f in g if f not in base) for g in (*SHIFT_SIGNALS, *((SHAPE_SIGNALS,) if shapes else ())))
    groups = [g for g in dict.fromkeys(added) if g]  # each group's signals the base does not hold, once
    for w in ("equal", "fitted"):
        out += [{"name": f"{said}+{'+'.join(g)} {w} best", "features": [*base, *g], "weights": w, "mapping": "best", "shapes": False} for g in groups]
        out.append({"name": f"{said}+shape_prior {w} best", "features": list(base), "weights": w, "mapping": "best", "shapes": True})
    return out


def held_out(candidate: Candidate, train: Sequence[dict[str, Any]], test: Sequence[dict[str, Any]], alpha: float, delta: float) -> dict[str, Any]:
    """``candidate`` fitted on ``train`` and scored on ``test``: n, share right, mean probability,
    AUROC (None: one class), ECE, Brier, and the level at ``alpha``: what share it answers, the share
    of those wrong (None: none answered) and whether that held (answered some, at most ``alpha`` wrong).
    A fit that cannot be made (too few answers, or all right or all wrong) gives the reason."""
    y = np.array([right(r) for r in test])
    out: dict[str, Any] = {"n": len(test), "right": float(y.mean()) if len(y) else None}
    try:
        calibration = fit_calibration(train, alpha, delta, candidate["weights"], features=candidate["features"], shapes=candidate["shapes"],
                                      mapping=candidate["mapping"])
        checked = check_calibration(calibration, test)
    except ValueError as exc:
        return {**out, "error": str(exc)}
    p = np.array(checked["scores"])
    answered = checked["answered"]
    risk = None if checked["accuracy_answered"] is None else 1 - checked["accuracy_answered"]
    return {
        **out,
        "mean_probability": float(p.mean()),
        "auroc": checked["auroc"],
        "ece": checked["ece"],
        "brier": brier(p, y),
        "mapping": calibration["mapping"]["kind"],
        "level": calibration["threshold"],
        "level_answered": answered,
        "level_coverage": checked["coverage"],
        "level_risk": risk,
        "level_held": bool(answered and risk is not None and risk <= alpha),
    }


def worst(parts: dict[str, dict[str, Any]], alpha: float) -> dict[str, Any]:
    """A candidate's worst part on each measure (None where no part has it): the highest Brier and
    ECE, the lowest AUROC and level coverage, the highest level risk, and the parts its level held on."""
    scored = [p for p in parts.values() if "error" not in p]

    def most(key: str, pick: Callable[..., Any]) -> float | None:
        values = [p[key] for p in scored if p.get(key) is not None]
        return pick(values) if values else None

    return {
        "parts": len(parts), "fitted": len(scored),
        "brier": most("brier", max), "ece": most("ece", max), "auroc": most("auroc", min),
        "level_coverage": most("level_coverage", min), "level_risk": most("level_risk", max),
        "level_held": sum(p["level_held"] for p in scored), "alpha": alpha,
    }


def rank_key(summary: dict[str, Any]) -> tuple[float, float, float]:
    """Best first: every part fitted, then the lowest worst-part Brier, then the lowest worst-part ECE."""
    missing = math.inf
    return (summary["parts"] - summary["fitted"], summary["brier"] if summary["brier"] is not None else missing,
            summary["ece"] if summary["ece"] is not None else missing)


def transfer(rows: Sequence[dict[str, Any]], kinds: Sequence[str], cands: Sequence[Candidate], alpha: float = ALPHA,
             delta: float = DELTA) -> dict[str, Any]:
    """Every candidate left out by each part of each ``kinds`` (dataset, type, shape): per part and
    its worst, ranked best first (:func:`rank_key`). A kind with one part leaves nothing out (skipped)."""
    out: dict[str, Any] = {"n": len(rows), "right": float(np.mean([right(r) for r in rows])) if rows else None, "alpha": alpha, "delta": delta,
                           "kinds": {}}
    for kind in kinds:
        part = part_of(kind)
        names = sorted({part(r) for r in rows})
        if len(names) < 2:
            out["kinds"][kind] = {"skipped": f"one part only ({', '.join(names) or 'no answers'}): nothing to leave out"}
            continue
        results = []
        for c in cands:
            parts = {n: held_out(c, [r for r in rows if part(r) != n], [r for r in rows if part(r) == n], alpha, delta) for n in names}
            results.append({**c, "parts": parts, "worst": worst(parts, alpha)})
        results.sort(key=lambda c: rank_key(c["worst"]))
        out["kinds"][kind] = {"candidates": results, "chosen": results[0]["name"]}
    return out


def _f(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and math.isinf(value):
        return "none"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def markdown(report: dict[str, Any], detail: Sequence[str] = ("shipped",)) -> str:
    """The ranking of every kind (worst part per candidate), then each part of the best candidate and of those named in ``detail``."""
    alpha = report["alpha"]
    lines = [f"{report['n']} answers, {_f(report['right'])} right; level: conformal threshold at alpha {alpha}, delta {report['delta']}, fitted on the rest.", ""]
    for kind, found in report["kinds"].items():
        lines += [f"### Leave one {kind} out", ""]
        if "skipped" in found:
            lines += [f"Skipped: {found['skipped']}.", ""]
            continue
        lines += ["| candidate | worst Brier | worst ECE | worst AUROC | least level coverage | most level risk | level held on |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for c in found["candidates"]:
            w = c["worst"]
            lines.append(f"| {c['name']} | {_f(w['brier'], 3)} | {_f(w['ece'])} | {_f(w['auroc'])} | {_f(w['level_coverage'])} | {_f(w['level_risk'])} | "
                         f"{w['level_held']} of {w['parts']} |")
        lines += ["", "| candidate | left out | n | right | mean p | AUROC | ECE | Brier | map | level | coverage | risk | held |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        shown = [found["candidates"][0], *(c for c in found["candidates"][1:] if c["name"] in detail)]
        for c in shown:
            for name, p in c["parts"].items():
                if "error" in p:
                    lines.append(f"| {c['name']} | {name} | {p['n']} | {_f(p['right'])} | not fitted: {p['error']} |" + " |" * 8)
                    continue
                lines.append(f"| {c['name']} | {name} | {p['n']} | {_f(p['right'])} | {_f(p['mean_probability'])} | {_f(p['auroc'])} | {_f(p['ece'])} | "
                             f"{_f(p['brier'], 3)} | {p['mapping']} | {_f(p['level'])} | {_f(p['level_coverage'])} | {_f(p['level_risk'])} | "
                             f"{'yes' if p['level_held'] else 'no'} |")
        lines.append("")
    return "\n".join(lines)


def collection(run: Path) -> str:
    """The stem of the questions file a run read (its ``run.json``); "(none)" when it does not say."""
    try:
        said = json.loads((run / "run.json").read_text()).get("questions") or {}
    except (OSError, ValueError):
        return "(none)"
    name = said.get("file") if isinstance(said, dict) else None
    return Path(name).name.removesuffix(".jsonl") if name else "(none)"


def read_rows(runs: Sequence[str], variants: Sequence[str], questions: str | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """The pooled answers of ``runs`` (:func:`pooled`), saying on stderr which variant each gave, each with its
    ``collection`` (the stem of the questions file its run read: dev, dev_b, dev2) and the ``type`` a ``questions``
    file gives records without one; and the variants taken."""
    rows, taken = pooled([[{**r, "collection": collection(Path(run))} for r in read_records(Path(run))] for run in runs], variants)
    for run, variant in zip(runs, taken, strict=True):
        print(f"{run}: {variant or 'none of the variants'}", file=sys.stderr)
    if questions:
        from sunar.evals.breakdown import question_types

        types = question_types(Path(questions), rows)
        rows = [{**r, "type": r.get("type") or types[str(r["id"])]} for r in rows]
    return rows, taken


def write_report(report: dict[str, Any], table: str, out: str | None) -> None:
    """Print ``table``; with ``out``, write the report there as JSON and the table beside it (.md)."""
    print(table)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(report, indent=1, default=float) + "\n")
        Path(out).with_suffix(".md").write_text(table + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="append", required=True, help="an evaluation run folder (repeat to pool)")
    parser.add_argument("--variant", action="append", required=True, help="the graph's variant (repeat: each run's first one it holds)")
    parser.add_argument("--parts", choices=("dataset", "type", "shape", "both", "all"), default="dataset",
                        help="what is left out: dataset, type, shape (sunar.compare.shape), both (dataset and type) or all three")
    parser.add_argument("--shipped", help="a calibration file: its way of fitting is the first candidate")
    parser.add_argument("--signals", nargs="+", help=f"the signals every candidate combines (default: the shipped file's, else {'+'.join(COMBINED)})")
    parser.add_argument("--questions", help="a questions file giving the type of records without one")
    parser.add_argument("--alpha", type=float, default=ALPHA)
    parser.add_argument("--delta", type=float, default=DELTA)
    parser.add_argument("--out", help="write the report as JSON here (and the table beside it, .md)")
    args = parser.parse_args(argv)
    rows, taken = read_rows(args.run, args.variant, args.questions)
    shape = question_shape()
    if shape is not None:
        rows = with_shapes(rows, shape)
    kinds = {"both": ("dataset", "type"), "all": ("dataset", "type", "shape")}.get(args.parts, (args.parts,))
    if "shape" in kinds and shape is None:
        kinds = tuple(k for k in kinds if k != "shape")
        print("no sunar.compare.shape in this tree: the shape part is left out", file=sys.stderr)
    shipped = json.loads(Path(args.shipped).read_text()) if args.shipped else None
    base = args.signals or ([f for f in shipped["features"] if f != "shape_prior"] if shipped else list(COMBINED))
    report = {"runs": args.run, "variants": taken, **transfer(rows, kinds, candidates(base, shipped, shape is not None), args.alpha, args.delta)}
    write_report(report, markdown(report), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
