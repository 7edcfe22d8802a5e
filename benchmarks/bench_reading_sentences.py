"""Whether a hop's pages cut to their most relevant sentences make reading in other orders cheap enough
to mark a misread hop: the reader alone, on each dev 1-100 question's first and last gold steps.

Usage::

    python -m benchmarks.bench_reading_sentences [--data DIR] [--llm embedded:qwen2.5-1.5b]
        [--questions N] [--sentences 6] [--out benchmarks/results/reading-sentences/results.json]

Reading a hop's pages in other orders splits on most misread steps where its temperature samples agree
(``benchmarks.bench_reading_orders``), but each order costs a whole prompt: about 20 s on an AMD EPYC's
2 cores, where a temperature sample of a prompt llama.cpp keeps costs 1.5 s. A prompt cut to the pages'
``--sentences`` sentences most relevant to the step (:func:`sunar.sentences.cut_to_sentences`: all
pages' sentences ranked together by the offline scorer, :class:`sunar.models.scorer.HybridScorer`, each
seen with its page's title) is a fraction as long. Each step (the steps and pages of
:mod:`benchmarks.bench_reading_demos`) is read greedily four ways: whole, as the product reads it,
then cut, in the ranked order, reversed and rotated by two. It reports, per step kind, how often each way reads right; the cut pages read as ranked against the whole
(does the cut lose answers?); and two signals of a misread whole reading, how often each splits where
the whole reading was right and where it was wrong: the three cut orders alone, and the whole reading
beside the two other cut orders (the product's answer kept, the cut orders its check), with that check's
vote against the whole reading; and the median seconds of each way's read, in the same run.
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
from benchmarks.bench_reading_orders import ORDERS, ordered, split, vote
from sunar.evals.metrics import paired_comparison
from sunar.prompts.answer import answer_messages
from sunar.sentences import cut_to_sentences
from sunar.text import Document

WHOLE = "whole, as ranked"
WAYS = (WHOLE, *(f"cut, {o}" for o in ORDERS))
#: The two signals of a misread whole reading: the cut pages' three orders, and the whole reading
#: beside the cut pages' two other orders.
SIGNALS = {"cut orders": WAYS[1:], "whole and two cut orders": (WHOLE, *WAYS[2:])}
def read_ways(step: Mapping[str, Any], corpus: Mapping[str, Mapping[str, str]], ask: Callable[[list[BaseMessage]], str],
              score: Callable[[str, Sequence[Document]], list[float]], k: int) -> dict[str, Any]:
    """One step read every way (:data:`WAYS`): the answers, the cut pages' length against the whole's, each
    signal's split and vote, whether each answer holds and equals a gold one, and the seconds of each read."""
    pages = pages_for(step, corpus)
    shortened = cut_to_sentences(step["question"], pages, score, k)
    answers, seconds = {}, {}
    for way, shown in zip(WAYS, [pages, *ordered(shortened)], strict=True):
        start = time.perf_counter()
        answers[way] = ask(answer_messages(step["question"], shown))
        seconds[way] = round(time.perf_counter() - start, 3)
    votes = {f"vote of {name}": vote([answers[w] for w in ways]) for name, ways in SIGNALS.items()}
    return {"question": step["question"], "last": step["last"], "golds": step["golds"], "answers": {**answers, **votes},
            "characters": {"whole": sum(len(p["text"]) for p in pages), "cut": sum(len(p["text"]) for p in shortened)},
            "split": {name: split([answers[w] for w in ways]) for name, ways in SIGNALS.items()},
            **graded({**answers, **votes}, step["golds"]), "seconds": seconds}


def summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per step kind and metric: each way's right readings; the cut pages read as ranked against the whole
    (wins, losses, sign test); each signal's splits where the whole reading was right and where it was
    wrong, and the vote of the whole reading and two cut orders against the whole reading. Over all rows:
    the median seconds of each way's read and the median share of the pages' characters the cut keeps."""
    out: dict[str, Any] = {}
    if rows:
        out["median seconds"] = {w: statistics.median(r["seconds"][w] for r in rows) for w in WAYS}
        out["median share kept"] = round(statistics.median(r["characters"]["cut"] / max(1, r["characters"]["whole"]) for r in rows), 3)
    checked = f"vote of {list(SIGNALS)[1]}"
    for kind, last in (("first steps", False), ("last steps", True)):
        mine = [r for r in rows if r["last"] == last]
        out[kind] = {}
        for metric in ("cover_em", "em"):
            whole = [float(r[metric][WHOLE]) for r in mine]
            out[kind][metric] = {
                "read": len(mine), "right": {w: int(sum(r[metric][w] for r in mine)) for w in (*WAYS, checked)},
                "cut against whole": paired_comparison([float(r[metric][WAYS[1]]) for r in mine], whole),
                "vote against whole": paired_comparison([float(r[metric][checked]) for r in mine], whole),
                "split when right": {s: sum(r["split"][s] for r in mine if r[metric][WHOLE]) for s in SIGNALS},
                "split when wrong": {s: sum(r["split"][s] for r in mine if not r[metric][WHOLE]) for s in SIGNALS}}
    return out


def main(argv: list[str] | None = None) -> None:
    p = reading_arguments(__doc__, "benchmarks/results/reading-sentences/results.json")
    p.add_argument("--sentences", type=int, default=6, help="sentences kept of a step's pages (default 6)")
    args = p.parse_args(argv)
    corpus, steps, _, _, ask = reading_setup(args.data, args.llm, args.questions)
    from sunar.models.scorer import HybridScorer

    scorer = HybridScorer()
    todo = [(f"{s['id']}#{s['question']}", lambda s=s: read_ways(s, corpus, ask, scorer.score, args.sentences)) for s in steps]
    done = read_resumably(args.out, {"llm": args.llm, "sentences": args.sentences, "rows": {}}, todo, summary)
    print(json.dumps(done.get("summary"), indent=1))


if __name__ == "__main__":
    main()
