"""Whether reading a hop's pages in other orders tells a misread hop: the reader alone, on each dev
1-100 question's first and last gold steps, its pages read greedily in three orders.

Usage::

    python -m benchmarks.bench_reading_orders [--data DIR] [--llm embedded:qwen2.5-1.5b]
        [--questions N] [--out benchmarks/results/reading-orders/results.json]

A 1.5B model's sampled answers agree on most hops it misreads (``benchmarks/RESULTS.md``: after a right
first bridge, S's samples agreed on 19 of the 23 later hops that ended wrong), so the semantic sets seldom
mark them. A small model's reading also leans on where the pages stand in its prompt; reading the same
pages in other orders ("permutation self-consistency") may split where temperature does not. Each step
(the steps and pages of :mod:`benchmarks.bench_reading_demos`: its gold page among four distractors of its
question's pool) is read with the product's answer prompt in its order, reversed, and rotated by two. It
reports, per step kind, how often each order reads right, the vote of the three (the answer most orders
agree with, :func:`sunar.signals.agrees`; the first order's on a tie) against the first order's, and how
often the orders split among right and among wrong first readings: whether the split is a signal worth
acting on, and what it costs: the seconds of each read, and of one temperature sample of the first order's
prompt (what a hop's samples cost today). ``--questions N`` reads the steps of the pool's first N questions
only (a read took about 20 s on an AMD EPYC's 2 cores: the orders share no prompt for llama.cpp to keep).
Resumable: a step already in ``--out`` is not read again.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from benchmarks.bench_reading_demos import graded, pages_for, read_resumably, reading_arguments, reading_setup
from sunar.evals.metrics import paired_comparison
from sunar.prompts.answer import SCHEMA, answer_messages, short_call
from sunar.sentences import in_other_orders
from sunar.signals import agrees

ORDERS = ("as ranked", "reversed", "rotated by 2")


def ordered(pages: Sequence[Mapping[str, str]]) -> list[list[Mapping[str, str]]]:
    """The pages in each of :data:`ORDERS` (the product's :func:`sunar.sentences.in_other_orders`, the ranked order first)."""
    *others, ranked = in_other_orders(pages)
    return [ranked, *others]


def vote(answers: Sequence[str]) -> str:
    """The answer most of ``answers`` agree with (itself included); the earliest on a tie."""
    return max(answers, key=lambda a: (sum(agrees(a, b) for b in answers), -answers.index(a)))


def split(answers: Sequence[str]) -> bool:
    """Whether some two of ``answers`` do not agree."""
    return any(not agrees(a, b) for a in answers for b in answers)


def read_orders(step: Mapping[str, Any], corpus: Mapping[str, Mapping[str, str]], ask: Callable[[list[BaseMessage]], str],
                sample: Callable[[list[BaseMessage]], object] | None = None) -> dict[str, Any]:
    """One step read in every order: the answers, their vote, whether each holds and equals a gold one,
    and the seconds each read took; with ``sample``, also the seconds of one temperature sample of the
    first order's prompt right after its read (as the product samples a hop, from a prompt llama.cpp keeps)."""
    answers, seconds = [], []
    for k, pages in enumerate(ordered(pages_for(step, corpus))):
        start = time.perf_counter()
        answers.append(ask(answer_messages(step["question"], pages)))
        seconds.append(round(time.perf_counter() - start, 3))
        if k == 0 and sample is not None:
            start = time.perf_counter()
            sample(answer_messages(step["question"], pages))
            seconds.append(round(time.perf_counter() - start, 3))
    shown = {**dict(zip(ORDERS, answers, strict=True)), "vote": vote(answers)}
    timed = dict(zip([ORDERS[0], *(["a sample"] if sample is not None else []), *ORDERS[1:]], seconds, strict=True))
    return {"question": step["question"], "last": step["last"], "golds": step["golds"], "answers": shown, "split": split(answers),
            **graded(shown, step["golds"]), "seconds": timed}


def summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per step kind and metric: right readings per order and by vote, the vote against the first order
    (wins, losses, sign test), and the orders' splits among the first order's right and wrong readings."""
    out: dict[str, Any] = {}
    timed = [r["seconds"] for r in rows if "a sample" in r.get("seconds", {})]
    if timed:
        out["median seconds"] = {w: statistics.median(t[w] for t in timed) for w in timed[0]}
    for kind, last in (("first steps", False), ("last steps", True)):
        mine = [r for r in rows if r["last"] == last]
        out[kind] = {}
        for metric in ("cover_em", "em"):
            right = {w: int(sum(r[metric][w] for r in mine)) for w in (*ORDERS, "vote")}
            first = [float(r[metric][ORDERS[0]]) for r in mine]
            out[kind][metric] = {"read": len(mine), "right": right, **paired_comparison([float(r[metric]["vote"]) for r in mine], first),
                                 "split when right": sum(r["split"] for r in mine if r[metric][ORDERS[0]]),
                                 "split when wrong": sum(r["split"] for r in mine if not r[metric][ORDERS[0]])}
    return out


def main(argv: list[str] | None = None) -> None:
    p = reading_arguments(__doc__, "benchmarks/results/reading-orders/results.json")
    args = p.parse_args(argv)
    corpus, steps, llm, cfg, ask = reading_setup(args.data, args.llm, args.questions)

    def sample(prompt: list[BaseMessage]) -> object:
        return llm.sample(prompt, 1, temperature=cfg.temperature, **short_call(cfg, SCHEMA))

    todo = [(f"{s['id']}#{s['question']}", lambda s=s: read_orders(s, corpus, ask, sample)) for s in steps]
    done = read_resumably(args.out, {"llm": args.llm, "rows": {}}, todo, summary)
    print(json.dumps(done.get("summary"), indent=1))


if __name__ == "__main__":
    main()
