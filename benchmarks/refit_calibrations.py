"""Refit the shipped S and Self-Ask calibrations on the answers today's code gives to dev 1-100.

A calibration is fitted on a run's labelled answers (``sunar calibrate``). The reader's later fixes
(:data:`benchmarks.results_tables.ALL_FIXES`) changed some answers, and each fix reran only the
questions it can act on, from a copy of the run's LLM cache. So today's dev 1-100 answers are the
development run's, with each fix's rerun in place of the answers it changed, as RESULTS.md reads
them (:func:`benchmarks.results_tables.with_fixes`). This fits each calibration on those, with the
signals it was shipped with, and writes it over the shipped file; the runs it names are the ones
its answers came from. The cpu profile's S, run whole on dev 1-100 with today's code, is fitted on
that run's answers. Nothing of dev 101-217 is read.

    PYTHONPATH=. python -m benchmarks.refit_calibrations            # writes sunar/data/calibration/
    PYTHONPATH=. python -m benchmarks.refit_calibrations --check    # fails if a shipped file differs (beyond 1e-9)
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from benchmarks import results_tables as T
from benchmarks.results_runs import of
from sunar.evals.calibrate import calibration_of
from sunar.trust import TRANSFER

SHIPPED = T.ROOT / "sunar" / "data" / "calibration"
#: (the shipped file, the graph's variant, the runs of its dev 1-100 answers before the fixes, the
#: signals it combines, whether only those: ``sunar calibrate --only``).
FITS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...], bool], ...] = (
    ("sunar-unfit-answer-embedded-qwen2.5-1.5b.json", T.S_UNFIT, (T.UNFIT_DEV,), ("chain_support",), True),
    ("self_ask-embedded-qwen2.5-1.5b.json", T.DEMOS_LOOPS, (T.ACTS, T.ACTS2), ("whole_chain",), False),
)
#: S with ``replan_below`` at ``benchmarks.results_tables.REPLAN_AT`` and the judge (the cpu profile's S before
#: ``cut_uncertain``): its shipped file is fitted on S's answers in its dev 1-100 run (``TODAY_DEV``), on the weakest
#: link alone as above.
REPLAN_FILE = "sunar-replan-embedded-qwen2.5-1.5b.json"
#: The cpu profile's S, with ``hop_support=cut_uncertain``: fitted on that variant's answers in the headline's
#: dev 1-100 run (``CUT_UNCERTAIN_DEV``), on the signals that held across datasets (:data:`sunar.trust.TRANSFER`).
PROFILE_FILE = "sunar-cut-uncertain-embedded-qwen2.5-1.5b.json"
ALPHA, DELTA = 0.3, 0.1


def refit() -> dict[str, dict[str, Any]]:
    """Each shipped file's name and its content fitted on today's dev 1-100 answers."""
    run = T.committed_runs()
    dev = T.dev_ids(run)
    fitted = {}
    for file, variant, sources, signals, only in FITS:
        answers, names = T.todays_answers(run, variant, sources, dev)
        first, *rest = (json.loads((T.RESULTS / name / "run.json").read_text()) for name in names)
        # a rerun's question file is the part of the development run's that its fix can act on
        settings = [first, *({**s, "questions": first["questions"]} for s in rest)]
        fitted[file] = calibration_of(answers, settings, names, variant, ALPHA, DELTA, signals=signals, only=only)
    # each fitted on one whole-graph run's answers of a variant, recorded as the variant it is shipped for
    for file, name, variant, shipped_as, signals in ((REPLAN_FILE, T.TODAY_DEV, "sunar", f"{T.S_UNFIT}+replan_below={T.REPLAN_AT}", ("chain_support",)),
                                                     (PROFILE_FILE, T.CUT_UNCERTAIN_DEV, T.S_CUT_UNCERTAIN, T.S_CUT_UNCERTAIN, TRANSFER)):
        settings = json.loads((T.RESULTS / name / "run.json").read_text())
        fitted[file] = calibration_of(of(run(name), variant), [settings], [name], shipped_as, ALPHA, DELTA, signals=signals, only=True)
    return fitted


def same(shipped: Any, fitted: Any) -> bool:
    """Whether a shipped calibration holds what a refit gives, each number to 1e-9 of itself: the last
    digit of a float differs between CPUs (one AMD and one Intel machine fit intercepts 1e-16 apart)."""
    if isinstance(shipped, dict) and isinstance(fitted, dict):
        return shipped.keys() == fitted.keys() and all(same(shipped[k], fitted[k]) for k in shipped)
    if isinstance(shipped, list) and isinstance(fitted, list):
        return len(shipped) == len(fitted) and all(same(a, b) for a, b in zip(shipped, fitted, strict=True))
    if isinstance(shipped, float) and isinstance(fitted, float):
        return math.isclose(shipped, fitted, rel_tol=1e-9, abs_tol=1e-12) or math.isnan(shipped) and math.isnan(fitted)  # inf is close to itself
    return type(shipped) is type(fitted) and shipped == fitted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a shipped calibration is not what a refit gives")
    args = parser.parse_args(argv)
    stale = []
    for file, content in refit().items():
        text = json.dumps(content, indent=2) + "\n"
        path = SHIPPED / file
        print(f"{file}: {content['n']} answers, {content['mapping']['kind']}, cross-fitted AUROC {content['auroc_held_out']:.2f}, "
              f"level {content['level']:.2f}; from {', '.join(content['runs'])}")
        if args.check:
            stale += [] if same(json.loads(path.read_text()), json.loads(text)) else [file]
        else:
            Path(path).write_text(text)
    if stale:
        print(f"not refitted: {', '.join(stale)}; run: PYTHONPATH=. python -m benchmarks.refit_calibrations", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
