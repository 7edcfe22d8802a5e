"""Calibration of RA-ISF's passage-relevance judge on dev questions.

Usage::

    python -m benchmarks.bench_relevance --index INDEX_DIR [--data DIR] [--questions dev.jsonl] [--skip 20]
        [--limit 20] [--llm embedded:qwen2.5-1.5b] [--out benchmarks/results/ra-isf-relevance-dev20/results.json]

The questions are DIR/dev.jsonl (DIR: ``--data`` or ``$SUNAR_DATA``) unless ``--questions`` names a file.

For each question (both datasets in turn, as ``sunar eval`` takes them, after the first ``--skip``
ones, which are the reported evaluation's) RA-ISF's own retrieval gives the passages its judge sees
(first stage, scorer re-ranking, top ``evidence``, cpu profile). A passage is labelled relevant when
it is one of the question's two gold supporting paragraphs. The judge's margin
``logp(yes) - logp(no)`` is read for every passage, and three decisions are compared: the argmax
(threshold 0), and a threshold chosen on one half of the questions and applied to the other, both
ways (every passage is judged by a threshold that did not see its question), and the threshold
fitted on all of them, which is the one to run RA-ISF with (``--set relevance_threshold=X``, printed last).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks import add_index_arguments, questions_file
from benchmarks.bench_nli import balanced_accuracy, fit_tau
from sunar.baselines.ra_isf import prompts
from sunar.configuration import Configuration
from sunar.evals.data import read_questions
from sunar.evals.run import interleave


@dataclass
class Case:
    question_id: str
    question: str
    passage_id: str
    relevant: bool
    margin: float = 0.0
    seconds: float = 0.0


def build_cases(questions: Sequence[Any], res: Any, cfg: Configuration) -> list[tuple[Case, dict]]:
    """The passages RA-ISF's retrieval gives each question (as the judge sees them), each with its
    case labelled by the gold paragraphs."""
    from sunar.baselines.ra_isf.nodes import reranked

    return [
        (Case(q.id, q.question, p["id"], p["id"] in set(q.supporting_ids)), p)
        for q in questions
        for p in reranked(res, q.question, cfg)
    ]


def judge_all(llm: Any, judged: list[tuple[Case, dict]]) -> None:
    """Fill each case's margin (logp(yes) - logp(no)) and call time."""
    yes, no = prompts.LABELS
    for n, (case, passage) in enumerate(judged, start=1):
        started = time.perf_counter()
        scores = llm.judge(prompts.relevance_messages(case.question, passage), prompts.LABELS)
        case.seconds = time.perf_counter() - started
        case.margin = scores[yes] - scores[no]
        if n % 10 == 0:
            print(f"[{n}/{len(judged)}] judged", file=sys.stderr, flush=True)


def cross_fitted(cases: Sequence[Case]) -> list[bool]:
    """Each case judged with the threshold fitted on the other half of the questions."""
    ids = list(dict.fromkeys(c.question_id for c in cases))
    halves = [set(ids[0::2]), set(ids[1::2])]
    predicted = [False] * len(cases)
    for held, fit in ((halves[0], halves[1]), (halves[1], halves[0])):
        train = [c for c in cases if c.question_id in fit]
        tau = fit_tau([c.margin for c in train], [c.relevant for c in train])
        for i, c in enumerate(cases):
            if c.question_id in held:
                predicted[i] = c.margin > tau
    return predicted


def row(name: str, cases: Sequence[Case], predicted: Sequence[bool]) -> str:
    labels = [c.relevant for c in cases]
    relevant = [p for p, y in zip(predicted, labels, strict=True) if y]
    other = [not p for p, y in zip(predicted, labels, strict=True) if not y]
    accuracy = sum(p == y for p, y in zip(predicted, labels, strict=True)) / len(cases)
    return (
        f"| {name} | {accuracy:.3f} | {balanced_accuracy(labels, predicted):.3f} | "
        f"{sum(relevant) / max(1, len(relevant)):.3f} | {sum(other) / max(1, len(other)):.3f} | {sum(predicted)} |"
    )


def table(cases: Sequence[Case], tau: float) -> str:
    relevant = sum(c.relevant for c in cases)
    lines = [
        f"RA-ISF relevance judge on {len(cases)} passages of {len({c.question_id for c in cases})} dev questions "
        f"({relevant} gold, {len(cases) - relevant} not); {sum(c.seconds for c in cases) / len(cases):.1f} s per judgement",
        "",
        "| decision | accuracy | balanced accuracy | gold judged relevant | others judged irrelevant | judged relevant |",
        "|---|---|---|---|---|---|",
        row("argmax (threshold 0)", cases, [c.margin > 0 for c in cases]),
        row("threshold fitted on the other half", cases, cross_fitted(cases)),
        row(f"threshold {tau:.2f} fitted on all (in-sample)", cases, [c.margin > tau for c in cases]),
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_index_arguments(parser)
    parser.add_argument("--skip", type=int, default=20, help="leave out the first N questions (the reported evaluation's)")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--llm", default="embedded:qwen2.5-1.5b")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    from sunar.resources import POOL

    # the cpu profile (first-stage depth, budget, evidence) whatever the LLM
    cfg = Configuration.resolve({"profile": "cpu", "index_dir": str(args.index), "llm": args.llm})
    res = POOL.get(cfg)
    questions = interleave(read_questions(questions_file(args)))[args.skip : args.skip + args.limit]
    judged = build_cases(questions, res, cfg)
    judge_all(res.llm, judged)
    cases = [case for case, _ in judged]
    tau = fit_tau([c.margin for c in cases], [c.relevant for c in cases])
    text = table(cases, tau)
    print(text)
    print(f"\nsuggested setting (threshold fitted on all): --set relevance_threshold={tau:.2f}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"llm": args.llm, "tau": tau, "table": text, "cases": [asdict(c) for c in cases]}, indent=2) + "\n")


if __name__ == "__main__":
    main()
