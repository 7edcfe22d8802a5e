"""What NAR early stop (``nar_patience``) saves, and what it costs in recall.

Usage::

    python -m benchmarks.bench_nar_stop --index INDEX_DIR [--data DIR] [--questions dev.jsonl] [--limit 10]
        [--patience 0,1,2] [--out benchmarks/results/nar-stop-musique10/results.json]

The questions are DIR/dev.jsonl (DIR: ``--data`` or ``$SUNAR_DATA``) unless ``--questions`` names a file.

NAR runs alone, with the graph's own nodes and routing (retrieve -> select_batch -> update, looping
while the budget, the pools and the early stop allow), for every gold MuSiQue sub-question (``#k``
replaced by the gold answer of step k) at the paper's settings: b=16, c=100, k=10, l=10. The LLM
takes no part, so batches keep their scorer scores (as in ``sunar_r``/``sunar_no_asu``). For each
patience it reports the documents scored per sub-question, the scorer's time for them, and
Recall@1/@10 of the step's supporting paragraph in the top l of R+ (the evidence the sub-question's
answer reads).

NAR is deterministic, so a run with early stop scores a prefix of the run without it: scores are
kept per (sub-question, document) and each patience's scoring time is the sum of the times its
documents took when first scored (all patiences see the same machine load).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from benchmarks import add_index_arguments, questions_file, scripted_llm
from sunar.configuration import Configuration
from sunar.evals.data import read_questions
from sunar.evals.metrics import retrieval_metrics
from sunar.nar import nar_goes_on, stalled, top
from sunar.nodes.retrieve import retrieve
from sunar.nodes.select_batch import select_batch
from sunar.nodes.update import make_update
from sunar.state import SunarState
from sunar.stores.corpus import Document

#: The paper's NAR settings (b, c, k, l) and first-stage depth.
PAPER = {"batch_size": 16, "budget": 100, "neighbours": 10, "evidence": 10, "first_stage_depth": 100}


class TimedScores:
    """A scorer that keeps every (query, document) score and the seconds it took to compute."""

    def __init__(self, scorer: Any):
        self.scorer, self.name = scorer, scorer.name
        self.known: dict[tuple[str, str], tuple[float, float]] = {}

    def score(self, query: str, docs: Sequence[Document]) -> list[float]:
        new = [d for d in docs if (query, d.id) not in self.known]
        if new:
            started = time.perf_counter()
            scores = self.scorer.score(query, new)
            each = (time.perf_counter() - started) / len(new)
            self.known.update({(query, d.id): (float(s), each) for d, s in zip(new, scores, strict=True)})
        return [self.known[(query, d.id)][0] for d in docs]

    def seconds(self, query: str, ids: Sequence[str]) -> float:
        return sum(self.known[(query, i)][1] for i in ids)


def _no_llm(prompt: str, sample: int) -> str:
    raise RuntimeError("NAR alone should make no LLM call")


def nar_graph() -> Any:
    """NAR alone: the SUNAR graph's retrieve/select_batch/update nodes and its loop condition."""

    def after(state: dict[str, Any], config: RunnableConfig) -> str:
        return "select_batch" if nar_goes_on(state, Configuration.from_runnable_config(config)) else END

    g = StateGraph(SunarState, context_schema=Configuration)
    g.add_node("retrieve", retrieve)
    g.add_node("select_batch", select_batch)
    g.add_node("update", make_update(use_graph=True))
    g.add_edge(START, "retrieve")
    g.add_conditional_edges("retrieve", after, ["select_batch", END])
    g.add_edge("select_batch", "update")
    g.add_conditional_edges("update", after, ["select_batch", END])
    return g.compile()


def run(index_dir: str, questions: Path, limit: int, patiences: Sequence[int]) -> dict[str, Any]:
    from sunar.models.nli import make_nli
    from sunar.models.scorer import make_scorer
    from sunar.resources import Resources, open_index

    cfg = Configuration.resolve({"profile": "paper", "index_dir": index_dir, **PAPER})
    index = open_index(cfg)
    scorer = TimedScores(make_scorer(cfg.scorer, getattr(index, "embedder", None)))
    llm = scripted_llm(_no_llm, "none")  # NAR makes no LLM call; Resources needs an LLM
    res = Resources(llm, scorer, make_nli("llm", llm), index)
    musique = [q for q in read_questions(questions) if q.dataset == "musique" and q.sub_questions][:limit]
    steps = [(q, sub, support) for q in musique for sub, _, support in q.sub_questions]
    graph = nar_graph()
    rows: dict[int, list[dict[str, Any]]] = {p: [] for p in sorted(patiences)}
    for n, (q, sub, support) in enumerate(steps, start=1):
        for p in sorted(patiences):  # 0 first: it scores everything the others need
            state = graph.invoke(
                {"question": q.question, "sub_question": sub},
                {"configurable": {"resources": res, **PAPER, "nar_patience": p}},
            )
            scored_ids = list(state.get("scored") or {})
            ranked = top(state.get("scored") or {}, PAPER["evidence"])
            rows[p].append(
                {
                    "id": q.id,
                    "sub_question": sub,
                    "scored": len(scored_ids),
                    "batches": len(state.get("batches") or []),
                    "seconds": scorer.seconds(sub, scored_ids),
                    **retrieval_metrics(ranked, [support], ks=(1, 10)),
                    "stopped_early": len(scored_ids) < PAPER["budget"]
                    and stalled(state, Configuration.resolve({"profile": "paper", **PAPER, "nar_patience": p})),
                }
            )
        print(
            f"[{n}/{len(steps)}] {sub[:60]!r}: " + ", ".join(f"p={p} {rows[p][-1]['scored']} docs" for p in rows),
            file=sys.stderr,
            flush=True,
        )
    return {"settings": PAPER, "sub_questions": len(steps), "rows": {str(p): r for p, r in rows.items()}}


def table(result: dict[str, Any]) -> str:
    rows = result["rows"]
    base = rows["0"]
    mean = lambda xs: sum(xs) / max(1, len(xs))  # noqa: E731
    lines = [
        f"NAR alone on {result['sub_questions']} gold MuSiQue sub-questions, b=16, c=100, k=10, l=10, scorer scores",
        "",
        "| nar_patience | docs scored / sub-question | scorer s / sub-question | vs off | stopped early | R@1 | R@10 |",
        "|---|---|---|---|---|---|---|",
    ]
    for p, r in rows.items():
        seconds = mean([x["seconds"] for x in r])
        lines.append(
            f"| {p if p != '0' else '0 (off)'} | {mean([x['scored'] for x in r]):.1f} | {seconds:.1f} | "
            f"{seconds / max(1e-9, mean([x['seconds'] for x in base])):.2f}x | {sum(x['stopped_early'] for x in r)}/{len(r)} | "
            f"{mean([x['recall@1'] for x in r]):.3f} | {mean([x['recall@10'] for x in r]):.3f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_index_arguments(parser)
    parser.add_argument("--limit", type=int, default=10, help="MuSiQue questions (each has 2+ sub-questions)")
    parser.add_argument("--patience", default="0,1,2", help="comma-separated nar_patience values (0 = off)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    questions = questions_file(args)
    patiences = sorted({0, *(int(p) for p in args.patience.split(","))})
    result = run(args.index, questions, args.limit, patiences)
    text = table(result)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({**result, "table": text}, indent=2) + "\n")


if __name__ == "__main__":
    main()
