"""Does a probability read above each answer's chance floor hold on a shape, a type or a dataset it
was never fitted on, and does a trust level found per shape keep its promise there?

Each candidate is a set of signals combined with one weight for all (:func:`sunar.evals.floored.fit_floored`),
with the floor of :mod:`sunar.choice` (a comparison answered by one of its two options: one half) or
without it (then it is :func:`sunar.trust.fit_equal_weights` with the logistic map), fitted on every
shape of the answers but the part left out, and scored on that part as
:mod:`benchmarks.transfer_calibration` does (AUROC, ECE, Brier). Beside the ECE, the ECE a perfectly
calibrated probability would show on as few answers (``ECE noise``: the mean over draws of answers
right with the probability given): on a dozen answers an ECE of 0.2 is chance.

Two trust levels at ``alpha`` (the conformal threshold with ``delta`` of
:func:`sunar.evals.selective.conformal_threshold`, on cross-fitted probabilities of the answers fitted
on): one for all shapes (pooled), and one per shape with at least ``--minimum`` labelled answers
(:func:`sunar.evals.selective.shape_levels`), where a shape without one is promised nothing and so not
answered. Per part left out: what each answers (coverage), the share of those wrong (risk), and whether
it held (some answered, at most ``alpha`` wrong). The first candidate is the shipped way of fitting
(:data:`sunar.trust.TRANSFER`, equal weights, the map its fit chooses; its pooled level only), scored by
:func:`benchmarks.transfer_calibration.held_out`.

    PYTHONPATH=. python -m benchmarks.transfer_shapes \\
      --run evals/results/dev100-cut-uncertain-calibrated-qwen1.5b-cpu --run evals/results/confirm-cut-uncertain-qwen1.5b-cpu \\
      --run evals/results/devb-shapes-qwen1.5b-cpu --variant sunar+hop_support=cut_uncertain --variant sunar \\
      --out benchmarks/results/transfer/s-floor.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import transfer_calibration as tc
from sunar.choice import floor, floored
from sunar.compare import shape
from sunar.evals.calibration import auroc, brier, dealt, ece, right
from sunar.evals.floored import fit_floored, probability
from sunar.evals.selective import conformal_threshold, shape_levels
from sunar.trust import TRANSFER, signal_matrix

#: (name, signals, whether read above the floor) of each candidate after the shipped way.
CANDIDATES: tuple[tuple[str, tuple[str, ...], bool], ...] = tuple(
    (f"{'+'.join(s)} equal {'floor' if f else 'no floor'}", s, f)
    for s in (("chain_support",), ("chain_support", "hops"), TRANSFER, (*TRANSFER, "hops")) for f in (False, True)
)
MINIMUM = 30
FOLDS = 5


def with_floors(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows, each with its question's ``shape`` and its answer's ``floor`` (:func:`sunar.choice.floor`)."""
    return [{**r, "shape": shape(str(r.get("question") or "")), "floor": floor(str(r.get("question") or ""), str(r.get("answer") or ""))}
            for r in rows]


def fitted(rows: Sequence[dict[str, Any]], features: Sequence[str], floors: bool) -> Any:
    """A function giving the probability of answers, fitted on ``rows``."""
    f = [r["floor"] if floors else 0.0 for r in rows]
    model = fit_floored(signal_matrix(rows, features), np.array([right(r) for r in rows]), f)
    return lambda test: probability(model, signal_matrix(test, features), [r["floor"] if floors else 0.0 for r in test])


def cross_fitted(rows: Sequence[dict[str, Any]], features: Sequence[str], floors: bool) -> np.ndarray:
    """Each row's probability from a fit on the other folds (each dataset's rows dealt out in turn)."""
    fold, out = dealt(rows, FOLDS), np.full(len(rows), np.nan)
    for k in range(FOLDS):
        train = [r for r, j in zip(rows, fold, strict=True) if j != k]
        test = [r for r, j in zip(rows, fold, strict=True) if j == k]
        if test and len({right(r) for r in train}) == 2:
            out[fold == k] = fitted(train, features, floors)(test)
    return out


def ece_noise(p: np.ndarray, draws: int = 200, seed: int = 0) -> float:
    """The mean ECE of answers drawn right with exactly the probability given: what sampling alone shows."""
    rng = np.random.default_rng(seed)
    return float(np.mean([ece(p, (rng.random(len(p)) < p).astype(float)) for _ in range(draws)])) if len(p) else 0.0


def answered(p: np.ndarray, y: np.ndarray, thresholds: np.ndarray, alpha: float) -> dict[str, Any]:
    """What a level answers of a part: coverage, the share wrong (None: none answered), whether it held."""
    given = p >= thresholds
    risk = float(1 - y[given].mean()) if given.any() else None
    return {"coverage": float(given.mean()) if len(p) else 0.0, "risk": risk, "held": bool(given.any() and risk <= alpha)}


def held_out(train: Sequence[dict[str, Any]], test: Sequence[dict[str, Any]], features: Sequence[str], floors: bool, alpha: float,
             delta: float, minimum: int) -> dict[str, Any]:
    """A candidate fitted on ``train`` and scored on ``test``: its probability's measures and both levels."""
    y, yt = np.array([right(r) for r in test]), np.array([right(r) for r in train])
    if len(set(yt.tolist())) < 2:
        return {"n": len(test), "right": float(y.mean()), "error": "the answers fitted on are all right or all wrong"}
    p = fitted(train, features, floors)(test)
    held = cross_fitted(train, features, floors)
    seen = ~np.isnan(held)
    pooled = conformal_threshold(held[seen], yt[seen], alpha, delta)["threshold"]
    levels = shape_levels(held[seen], yt[seen], [r["shape"] for r, s in zip(train, seen, strict=True) if s], alpha, delta, minimum)
    per_shape = np.array([levels.get(r["shape"], np.inf) for r in test])
    return {"n": len(test), "right": float(y.mean()), "mean_probability": float(p.mean()), "auroc": auroc(p, y), "ece": ece(p, y),
            "ece_noise": ece_noise(p), "brier": brier(p, y), "pooled": {"level": pooled, **answered(p, y, np.full(len(p), pooled), alpha)},
            "per_shape": {"levels": levels, **answered(p, y, per_shape, alpha)}}


def shipped_way(train: Sequence[dict[str, Any]], test: Sequence[dict[str, Any]], alpha: float, delta: float) -> dict[str, Any]:
    """The shipped way (TRANSFER, equal, best map) scored by :func:`benchmarks.transfer_calibration.held_out`, in this report's form."""
    way = {"name": "shipped way", "features": list(TRANSFER), "weights": "equal", "mapping": "best", "shapes": False}
    found = tc.held_out(way, train, test, alpha, delta)
    if "error" in found:
        return found
    # the noise of its ECE needs its probabilities: check_calibration's scores, refitted here
    return {**{k: found[k] for k in ("n", "right", "mean_probability", "auroc", "ece", "brier")}, "ece_noise": None,
            "pooled": {"level": found["level"], "coverage": found["level_coverage"], "risk": found["level_risk"], "held": found["level_held"]},
            "per_shape": None}


def transfer(rows: Sequence[dict[str, Any]], kinds: Sequence[str], alpha: float = tc.ALPHA, delta: float = tc.DELTA,
             minimum: int = MINIMUM, candidates: Sequence[tuple[str, Sequence[str], bool]] = CANDIDATES, shipped: bool = True) -> dict[str, Any]:
    """Every candidate left out by each part of each of ``kinds``: {kind: {candidate: {part: scores}}}."""
    out: dict[str, Any] = {"n": len(rows), "right": float(np.mean([right(r) for r in rows])), "alpha": alpha, "delta": delta,
                           "minimum": minimum, "kinds": {}}
    for kind in kinds:
        part = tc.part_of(kind)
        names = sorted({part(r) for r in rows})
        found: dict[str, Any] = {}
        split = {n: ([r for r in rows if part(r) != n], [r for r in rows if part(r) == n]) for n in names}
        if shipped:
            found["shipped way"] = {n: shipped_way(train, test, alpha, delta) for n, (train, test) in split.items()}
        for name, features, floors in candidates:
            found[name] = {n: held_out(train, test, features, floors, alpha, delta, minimum) for n, (train, test) in split.items()}
        out["kinds"][kind] = found
    return out


def as_shipped(rows: Sequence[dict[str, Any]], calibration: dict[str, Any]) -> dict[str, Any]:
    """A shipped calibration file read as the product reads it, on each type of ``rows`` and on all: without the
    floor (as before it) and above it (``sunar.nodes.confidence``); its level is the file's ``threshold``."""
    from sunar.trust import probability

    y = np.array([right(r) for r in rows])
    raw = probability(calibration, signal_matrix(rows, calibration["features"]))
    shown = {"without the floor": raw, "above the floor": floored(raw, [r["floor"] for r in rows])}
    parts = {"all": np.ones(len(rows), bool)} | {t: np.array([r.get("type") == t for r in rows]) for t in sorted({str(r.get("type")) for r in rows})}
    level = float(calibration.get("threshold") or np.inf)
    return {"level": level, "parts": {name: {how: {"n": int(sel.sum()), "right": float(y[sel].mean()), "mean_probability": float(p[sel].mean()),
                                                   "auroc": auroc(p[sel], y[sel]) if len(set(y[sel].tolist())) == 2 else None,
                                                   "ece": ece(p[sel], y[sel]), **answered(p[sel], y[sel], np.full(int(sel.sum()), level), tc.ALPHA)}
                                             for how, p in shown.items()} for name, sel in parts.items()}}


def as_shipped_markdown(found: dict[str, Any]) -> str:
    lines = [f"### The shipped file as the product reads it (level {_f(found['level'])})", "",
             "| type | read | n | right | mean p | AUROC | ECE | answered at the level | wrong of those |", "| --- " * 9 + "|"]
    for name, ways in found["parts"].items():
        lines += [f"| {name} | {how} | {p['n']} | {_f(p['right'])} | {_f(p['mean_probability'])} | {_f(p['auroc'])} | {_f(p['ece'])} | "
                  f"{_f(p['coverage'])} | {_f(p['risk'])} |" for how, p in ways.items()]
    return "\n".join([*lines, ""])


def _f(value: Any, digits: int = 2) -> str:
    return "-" if value is None else tc._f(value, digits)


def _level(level: dict[str, Any] | None) -> str:
    if level is None:
        return "- | - | -"
    return f"{_f(level['coverage'])} | {_f(level['risk'])} | {'yes' if level['held'] else 'no'}"


def markdown(report: dict[str, Any]) -> str:
    """Per kind left out: each candidate's worst part, then each part of every candidate."""
    lines = [f"{report['n']} answers, {_f(report['right'])} right; levels at alpha {report['alpha']}, delta {report['delta']} "
             f"(per shape: shapes with at least {report['minimum']} labelled answers fitted on), fitted on the rest.", ""]
    for kind, found in report["kinds"].items():
        lines += [f"### Leave one {kind} out", "",
                  "| candidate | worst AUROC | worst ECE | pooled level held on | its most risk | per-shape level held on | its most risk |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for name, parts in found.items():
            scored = [p for p in parts.values() if "error" not in p]

            def most(values: list[Any], pick: Any) -> Any:
                values = [v for v in values if v is not None]
                return pick(values) if values else None

            pooled = [p["pooled"] for p in scored]
            shaped = [p["per_shape"] for p in scored if p["per_shape"] is not None]
            lines.append(f"| {name} | {_f(most([p['auroc'] for p in scored], min))} | {_f(most([p['ece'] for p in scored], max))} | "
                         f"{sum(p['held'] for p in pooled)} of {len(parts)} | {_f(most([p['risk'] for p in pooled], max))} | "
                         + (f"{sum(p['held'] for p in shaped)} of {len(parts)} | {_f(most([p['risk'] for p in shaped], max))} |" if shaped else "- | - |"))
        lines += ["", "| candidate | left out | n | right | mean p | AUROC | ECE | ECE noise | Brier | pooled coverage | risk | held | "
                  "per-shape coverage | risk | held |", "| --- " * 15 + "|"]
        for name, parts in found.items():
            for part, p in parts.items():
                if "error" in p:
                    lines.append(f"| {name} | {part} | {p['n']} | {_f(p['right'])} | not fitted: {p['error']} |" + " |" * 10)
                    continue
                lines.append(f"| {name} | {part} | {p['n']} | {_f(p['right'])} | {_f(p['mean_probability'])} | {_f(p['auroc'])} | {_f(p['ece'])} | "
                             f"{_f(p['ece_noise'])} | {_f(p['brier'], 3)} | {_level(p['pooled'])} | {_level(p['per_shape'])} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="append", required=True, help="an evaluation run folder (repeat to pool)")
    parser.add_argument("--variant", action="append", required=True, help="the graph's variant (repeat: each run's first one it holds)")
    parser.add_argument("--parts", nargs="+", choices=("dataset", "type", "shape", "collection"), default=["dataset", "shape"],
                        help="what is left out (collection: the questions file a run read, e.g. dev2 fitted on dev and dev_b)")
    parser.add_argument("--questions", help="a questions file giving the type of records without one (for --parts type)")
    parser.add_argument("--alpha", type=float, default=tc.ALPHA)
    parser.add_argument("--delta", type=float, default=tc.DELTA)
    parser.add_argument("--minimum", type=int, default=MINIMUM, help="labelled answers a shape needs for a level of its own")
    parser.add_argument("--out", help="write the report as JSON here (and the table beside it, .md)")
    parser.add_argument("--as-shipped", metavar="FILE", help="only score this calibration file as the product reads it, by type")
    args = parser.parse_args(argv)
    rows, taken = tc.read_rows(args.run, args.variant, args.questions)
    if args.as_shipped:
        report = {"runs": args.run, "variants": taken, "file": Path(args.as_shipped).name,
                  **as_shipped(with_floors(rows), json.loads(Path(args.as_shipped).read_text()))}
        table = as_shipped_markdown(report)
    else:
        report = {"runs": args.run, "variants": taken, **transfer(with_floors(rows), args.parts, args.alpha, args.delta, args.minimum)}
        table = markdown(report)
    tc.write_report(report, table, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
