"""What the embedded model's saved KV prefix states save (:mod:`sunar.models.kv_cache`).

Usage::

    python -m benchmarks.bench_prefix [--data DIR] [--questions dev.jsonl] [--corpus corpus.jsonl] [--limit 2]

The questions and documents are DIR/dev.jsonl and DIR/corpus.jsonl (DIR: ``--data`` or ``$SUNAR_DATA``)
unless ``--questions`` / ``--corpus`` name other files.

For each question it makes the calls one SUNAR hop makes, in SUNAR's order, twice per hop: a Self-Ask
step, m=3 sampled answers for each of two batches of 8 documents, two NLI judgements. The sequence runs
once with the saved states off and once with them on, in the same process (so both see the same
machine load), each starting from an empty live cache. It prints seconds per kind of prompt for both,
the ratio, the tokens the states spared, and whether the greedy replies agree.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from itertools import islice

from benchmarks import add_data_argument, data_dir
from sunar.evals.data import read_questions
from sunar.models.providers import make_llm
from sunar.prompts.answer import answer_messages
from sunar.prompts.nli import nli_messages
from sunar.prompts.self_ask import self_ask_messages


def hop_calls(question: str, documents: list[dict], hop: int) -> list[tuple[str, object]]:
    """(kind, call) pairs for one hop, in the graph's order."""
    path = [("Who is meant by the question?", "someone")] * hop
    batches = [documents[0:8], documents[8:16]]
    calls: list[tuple[str, object]] = [("self_ask", lambda llm: llm.generate(self_ask_messages(question, path), max_tokens=24).content)]
    for batch in batches:
        calls.append(("answers", lambda llm, b=batch: [m.content for m in llm.sample(answer_messages(question, b), 3, temperature=0.3, max_tokens=12)]))
    for other in ("a different answer", "another one"):
        calls.append(("nli", lambda llm, o=other: round(llm.judge(nli_messages(question, "the answer", o), ("yes", "no"))["yes"], 1)))
    return calls


def run(llm, calls: list[tuple[str, object]], keep: bool) -> tuple[dict[str, float], list]:
    chat = llm.chat
    chat.keep_prefixes = keep
    chat.llama.n_tokens = 0  # an empty live cache
    seconds: dict[str, float] = defaultdict(float)
    replies = []
    for kind, call in calls:
        start = time.perf_counter()
        replies.append(call(llm))  # type: ignore[operator]
        seconds[kind] += time.perf_counter() - start
    return dict(seconds), replies


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_argument(p)
    p.add_argument("--questions", default=None, help="questions JSONL (default: DIR/dev.jsonl)")
    p.add_argument("--corpus", default=None, help="corpus JSONL (default: DIR/corpus.jsonl)")
    p.add_argument("--limit", type=int, default=2)
    p.add_argument("--llm", default="embedded:qwen2.5-1.5b")
    args = p.parse_args(argv)
    if not (args.questions and args.corpus):
        folder = data_dir(args.data)
        args.questions = args.questions or str(folder / "dev.jsonl")
        args.corpus = args.corpus or str(folder / "corpus.jsonl")

    with open(args.corpus, encoding="utf-8") as f:
        documents = [{"title": d["title"], "text": d["text"]} for d in map(json.loads, islice(f, 16 * args.limit))]
    calls = []
    for i, q in enumerate(read_questions(args.questions)[: args.limit]):
        for hop in range(2):
            calls += hop_calls(q.question, documents[16 * i : 16 * (i + 1)], hop)
    llm = make_llm(args.llm)
    llm.generate(answer_messages("warm up", []), max_tokens=1)  # load the weights
    off, replies_off = run(llm, calls, keep=False)
    states = llm.chat._states
    on, replies_on = run(llm, calls, keep=True)
    print(f"{args.limit} questions x 2 hops, {len(calls)} calls, {args.llm}")
    print("| prompt | states off s | states on s | on / off |")
    print("|---|---|---|---|")
    for kind in [*off, "total"]:
        a = sum(off.values()) if kind == "total" else off[kind]
        b = sum(on.values()) if kind == "total" else on[kind]
        print(f"| {kind} | {a:.1f} | {b:.1f} | {b / a:.2f} |")
    same = sum(x == y for x, y in zip(replies_off, replies_on, strict=True))
    print(
        f"states loaded {states.loads}, saved {states.saves}, prompt tokens not re-read {states.tokens_saved}, "
        f"{states.size / 1e6:.0f} MB kept; replies equal {same}/{len(calls)} (sampled answers and rounded "
        "judge scores can differ by float rounding)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
