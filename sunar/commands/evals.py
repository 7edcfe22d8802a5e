"""``sunar eval`` and ``sunar calibrate``: labelled runs, and the probability of being right fitted on them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from sunar.commands.common import model_options, run_config
from sunar.errors import SunarError


def cmd_eval(args: argparse.Namespace) -> int:
    from sunar.evals.run import EvalSettings, run_eval

    configuration = {k: v for k, v in run_config(args).items() if k not in {"index_dir", "chroma_url"}}
    settings = EvalSettings(
        questions=args.questions,
        corpus=args.corpus,
        variants=[v.strip() for v in args.variants.split(",") if v.strip()],
        out=args.out,
        limit=args.limit,
        skip=args.skip,
        index=args.index,
        configuration=configuration,
        workers=args.workers,
        retry_errors=args.retry_errors,
        given_pools=args.given_pools,
    )
    out = run_eval(settings, progress=not args.quiet)
    print((out / "report.md").read_text() if (out / "report.md").exists() else "no answers yet")
    print(f"wrote {out}/: predictions.jsonl, metrics.json, report.md, accuracy.png, recall.png, cost.png")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from sunar.evals.report import report_run

    run = Path(args.run)
    if not run.is_dir():
        raise SunarError(f"run folder not found: {run} (sunar eval --out DIR writes one)")
    print(report_run(run, Path(args.questions) if args.questions else None, args.halves, Path(args.corpus) if args.corpus else None, args.write))
    return 0


def unpromised(at: dict[str, Any] | None) -> str:
    """What the level without a promise (:func:`sunar.evals.selective.risk_level`) answered."""
    if at is None:
        return "it has no level without a promise (none kept alpha where it was fitted)"
    if not at["answered"]:
        return "its level without a promise answers nothing"
    return f"its level without a promise answers {at['answered']} ({at['coverage']:.0%}), {at['accuracy']:.0%} right"


def cmd_calibrate(args: argparse.Namespace) -> int:
    from sunar.evals.calibrate import calibrate_run, check_run

    if args.check:
        if len(args.run) != 1:
            raise SunarError("--check scores a calibration on one run: give one --run DIR")
        checked = check_run(args.check, args.run[0], args.variant)
        at = " / ".join("-" if v is None else f"{v:.2f}" for v in checked["accuracy_at"].values())
        answered = "nothing" if not checked["answered"] else (
            f"{checked['answered']} ({checked['coverage']:.0%}), {checked['accuracy_answered']:.0%} right "
            f"(error rate at most {checked['error_bound']:.0%} at the calibration's confidence)"
        )
        auroc, interval = checked["auroc"], checked["auroc_95"]
        print(
            f"{checked['n']} answers of {args.variant} in {args.run[0]}"
            f"{f' ({left} left out: the calibration was fitted on them)' if (left := checked['left_out']) else ''}, "
            f"{checked['accuracy']:.0%} right; AUROC of the trust {'-' if auroc is None else f'{auroc:.2f}'}"
            f"{f' (95% {interval[0]:.2f}-{interval[1]:.2f})' if interval else ''}, ECE {checked['ece']:.2f}; "
            f"accuracy of the most trusted 25/50/75%: {at}; its threshold answers {answered}; {unpromised(checked['at_level'])}"
        )
        return 0
    fitted = calibrate_run(args.run, args.variant, args.alpha, args.delta, args.weights, probe=args.probe, shapes=args.shape_prior, signals=args.signals,
                            select=args.select, only=args.only)
    out = Path(args.out or Path(args.run[0]) / f"calibration-{args.variant}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(fitted, indent=2) + "\n")
    level = "no trust level kept that promise on these answers (calibrate on more questions)" if fitted["coverage"] == 0 else (
        f"trust >= {fitted['threshold']:.3f} answers {fitted['coverage']:.0%} of them, {fitted['accuracy_answered']:.0%} right: "
        f"to answer only there, add --set min_trust={fitted['threshold']:.3f}"
    )
    if fitted["coverage"] == 0 and fitted["level_coverage"]:
        level += (
            f"; without that promise, at trust >= {fitted['level']:.3f} they were at most {args.alpha:.0%} wrong "
            f"({fitted['level_coverage']:.0%} answered, {fitted['level_accuracy']:.0%} right): add --set min_trust={fitted['level']:.3f}"
        )
    print(
        f"fitted on {fitted['fitted_on']} answers ({fitted['mapping']['kind']} map); cross-fitted AUROC "
        f"{fitted['auroc_held_out'] or float('nan'):.2f}, ECE {fitted['ece_held_out']:.2f}; {level}"
    )
    print(f"promise: {fitted['promise']}")
    print(f"wrote {out}; use it with: sunar ask ... --set calibration={out}")
    return 0


def add(sub: Any) -> None:
    """Its sub-commands, on the ``sunar`` parser."""
    from sunar.trust import EXTRA_SIGNALS

    p = sub.add_parser(
        "eval",
        help="run variants over questions with gold answers: predictions, metrics, report, plots",
        description="Run variants over questions with gold answers. A rerun into the same --out resumes it: answers "
        "already written are kept, and a question that ended in an error is recorded with the error (listed in "
        "report.md) and not tried again unless --retry-errors is given. One run at a time writes to an --out. "
        "report.md gives the accuracy by question type too; sunar report DIR prints it again from the predictions "
        "(by half of the run with --halves N).",
    )
    p.add_argument("--questions", required=True, help="JSON Lines {id, dataset, question, answers, supporting_ids}; answers is a list, or one string for a single answer")
    p.add_argument("--corpus", required=True, help="the corpus the questions are asked over (indexed if needed)")
    p.add_argument(
        "--variants",
        default="sunar,sunar_no_asu,sunar_r,self_ask",
        help="comma-separated graphs to run; GRAPH+FIELD=VALUE[+...] is a graph with fields of its own, an ablation "
        "compared in the same run from the same LLM cache (sunar,sunar+asu_skip_outranked=false)",
    )
    p.add_argument("--limit", type=int, default=0, help="first N questions (datasets interleaved); 0: all")
    p.add_argument("--skip", type=int, default=0, help="pass over the first N questions (datasets interleaved): --skip 100 --limit 100 runs questions 101-200")
    p.add_argument("--out", default="evals/results/latest", help="output directory (a rerun resumes it)")
    p.add_argument("--index", default="", help="index directory (default: one per corpus under $SUNAR_HOME/indexes)")
    p.add_argument("--workers", type=int, default=1, help="questions answered at once (Ollama serves several; the embedded model one)")
    p.add_argument("--retry-errors", action="store_true", help="also run again the questions whose earlier attempt in --out ended in an error (a rerun skips them otherwise)")
    p.add_argument(
        "--given-pools",
        action="store_true",
        help="gensco, gensco_stop and rag choose from each question's own pool_ids (the GenSco paper's setting) instead of the corpus",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    model_options(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser(
        "report",
        help="print the report of an evaluation's run folder again from its predictions (nothing is run)",
        description="Print report.md of a run folder (sunar eval --out DIR) from its predictions.jsonl (or .gz), "
        "nothing run again: every table of report.md, and the accuracy (per variant: questions, cover-EM right and "
        "rate, EM, and against self_ask wins, losses and the exact sign test p) by question type, the records' "
        "dataset and type ('musique 3hop', '2wiki comparison'), then in total.",
    )
    p.add_argument("run", metavar="DIR", help="the run folder: sunar eval --out DIR")
    p.add_argument(
        "--questions", default="",
        help="a questions file holding the run's questions (JSON Lines with type): each question's type, for runs whose records do not hold it",
    )
    p.add_argument(
        "--halves", type=int, default=0, metavar="N",
        help="also the accuracy by half of the run: its questions 1-N and N+1 to the last, numbered from 1 in the order "
        "the run took them (datasets interleaved, after --skip: a run with --skip 100 starts at its question 1)",
    )
    p.add_argument("--corpus", default="", help="the run's corpus: also where the wrong answers were lost (the gold answer's text in the evidence)")
    p.add_argument("--write", action="store_true", help="also write metrics.json, report.md and the plots into DIR again (as sunar eval does at its end)")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("calibrate", help="fit the probability that an answer is right, from labelled evaluation runs (and the trust level for error rate alpha)")
    p.add_argument(
        "--run", required=True, action="append",
        help="an evaluation's output directory (sunar eval --out DIR); repeat to pool runs of one model and corpus",
    )
    p.add_argument("--variant", default="sunar", help="the graph whose answers to calibrate (default sunar)")
    p.add_argument("--alpha", type=float, default=0.3, help="the most wrong answers among those given (default 0.3)")
    p.add_argument("--delta", type=float, default=0.1, help="the chance that the promise fails (default 0.1)")
    p.add_argument(
        "--weights", choices=("equal", "fitted"), default="equal",
        help="combine the signals with equal weights (default; robust with tens of answers) or a weight fitted per signal",
    )
    p.add_argument("--probe", action="store_true", help="also train a probe on the LLM's hidden state (embedded models; reads each answer once)")
    p.add_argument("--shape-prior", action="store_true",
                   help="also use how often questions shaped like each one were answered right (the fitted questions' shapes are kept)")
    p.add_argument("--with", dest="signals", action="append", default=[], choices=EXTRA_SIGNALS, metavar="SIGNAL",
                   help=f"also combine this recorded signal (repeatable; one of {', '.join(EXTRA_SIGNALS)})")
    p.add_argument("--select", type=float, default=None, metavar="AUROC",
                   help="combine the recorded signals whose AUROC alone on these answers is at least this (e.g. 0.55), not the four default ones")
    p.add_argument("--only", action="store_true", help="combine only the signals --with names, not the four default ones")
    p.add_argument("--out", default="", help="calibration file to write (default: RUN/calibration-VARIANT.json)")
    p.add_argument("--check", default="", metavar="FILE", help="fit nothing: score this calibration file on the run's answers it was not fitted on")
    p.set_defaults(func=cmd_calibrate)
