"""Cost of answering: LLM calls, tokens and wall time per question for each variant, and where
the time goes (LLM generation, NLI judgements, scoring, the rest).

    python -m sunar.evals.bench_graph --index DIR --questions ../shared/data/multihop/dev.jsonl \\
        --limit 20 --variants sunar,sunar_no_asu,sunar_r,self_ask [--llm embedded:qwen2.5-1.5b] [--profile cpu]

Questions are taken alternately from the two datasets (MuSiQue, 2Wiki). Prints a Markdown table
and writes one JSON line per (question, variant) to --out when given.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

from sunar.config import CPU_PROFILE
from sunar.evals.data import Question, read_questions
from sunar.graph import build_graph
from sunar.models.nli import normalize_answer

SCORING_NODES = ("select_batch", "gather")


def interleave(questions: list[Question], limit: int) -> list[Question]:
    by_set: dict[str, list[Question]] = {}
    for q in questions:
        by_set.setdefault(q.dataset, []).append(q)
    out: list[Question] = []
    groups = list(by_set.values())
    for i in range(max(len(g) for g in groups)):
        out += [g[i] for g in groups if i < len(g)]
    return out[:limit]


def cover(prediction: str, answers: list[str]) -> bool:
    pred = normalize_answer(prediction)
    return any(normalize_answer(a) and normalize_answer(a) in pred for a in answers)


def breakdown(usage: dict[str, Any], wall: float) -> dict[str, float]:
    seconds = usage.get("seconds") or {}
    scoring = sum(seconds.get(n, 0.0) for n in SCORING_NODES)
    llm, nli = usage.get("llm_seconds", 0.0), usage.get("nli_seconds", 0.0)
    return {"llm": llm, "nli": nli, "scoring": scoring, "rest": max(0.0, wall - llm - nli - scoring)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--questions", required=True)
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--variants", default="sunar,sunar_no_asu,sunar_r,self_ask")
    parser.add_argument("--llm", default="embedded:qwen2.5-1.5b")
    parser.add_argument("--profile", choices=["cpu", "paper"], default="cpu")
    parser.add_argument("--out", default="")
    args = parser.parse_args()

    questions = interleave(read_questions(args.questions), args.limit)
    configurable = {**(CPU_PROFILE if args.profile == "cpu" else {}), "llm": args.llm, "index_dir": args.index}
    rows: dict[str, list[dict[str, Any]]] = {}
    for variant in args.variants.split(","):
        graph = build_graph(variant)
        for n, q in enumerate(questions, 1):
            started = time.perf_counter()
            out = graph.invoke({"question": q.question}, {"configurable": configurable, "recursion_limit": 1000})
            wall = time.perf_counter() - started
            usage = out.get("usage") or {}
            row = {
                "id": q.id, "dataset": q.dataset, "variant": variant, "answer": out.get("answer"), "gold": q.answers[0],
                "cover_em": cover(out.get("answer") or "", q.answers), "wall": wall,
                "llm_calls": usage.get("llm_calls", 0), "judge_calls": usage.get("judge_calls", 0),
                "prompt_tokens": usage.get("prompt_tokens", 0), "generated_tokens": usage.get("generated_tokens", 0),
                "time": breakdown(usage, wall), "node_seconds": usage.get("seconds", {}),
            }
            rows.setdefault(variant, []).append(row)
            if args.out:
                with open(args.out, "a", encoding="utf-8") as sink:
                    sink.write(json.dumps(row) + "\n")
            print(f"[{variant} {n}/{len(questions)}] {wall:.0f} s, {row['llm_calls']} calls, answer={row['answer']!r} gold={q.answers[0]!r}", file=sys.stderr)

    print(f"\n{len(questions)} dev questions, {args.llm}, {args.profile} profile; means per question\n")
    print("| variant | LLM calls | NLI judgements | prompt tokens | generated tokens | wall s | LLM s | NLI s | scoring s | rest s | cover-EM |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for variant, rs in rows.items():
        def mean(key: str, rs: list[dict[str, Any]] = rs) -> float:
            return statistics.mean(float(r[key]) for r in rs)

        def part(key: str, rs: list[dict[str, Any]] = rs) -> float:
            return statistics.mean(r["time"][key] for r in rs)

        print(
            f"| {variant} | {mean('llm_calls'):.1f} | {mean('judge_calls'):.1f} | {mean('prompt_tokens'):.0f} | {mean('generated_tokens'):.0f} "
            f"| {mean('wall'):.0f} | {part('llm'):.0f} | {part('nli'):.0f} | {part('scoring'):.1f} | {part('rest'):.1f} | {mean('cover_em'):.2f} |"
        )


if __name__ == "__main__":
    main()
