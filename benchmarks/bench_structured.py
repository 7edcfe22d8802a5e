"""What structured output costs and buys on the embedded model (:mod:`sunar.prompts.structured`).

Usage::

    python -m benchmarks.bench_structured [--data DIR] [--limit 10] [--llm embedded:qwen2.5-1.5b]

For each of the first ``--limit`` dev questions (DIR/dev.jsonl, documents from DIR/corpus.jsonl) it
makes the calls the graph makes, with the question's gold paragraphs as the documents: the first
two Self-Ask steps, the intermediate answer of each gold sub-question, m=3 sampled answers to it,
and MER with the gold reasoning path. The whole sequence runs twice in one process, decoded freely
and then under each format's grammar, each pass from an empty KV cache with saved prefix states off
(so both read the same prompt tokens). It prints, per format, seconds and generated tokens per call
for both, the replies that were not their JSON object (parse fall-backs), and for the answers
(intermediate, sampled and MER's) how many hold a gold answer (cover-EM) and equal one (EM).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict

from benchmarks import add_data_argument, data_dir
from sunar.evals.data import read_questions
from sunar.evals.metrics import cover_em, exact_match
from sunar.models.providers import make_llm
from sunar.prompts import answer, mer, self_ask
from sunar.usage import node, usage


def gold_documents(corpus: str, ids: set[str]) -> dict[str, dict]:
    found = {}
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            if doc["id"] in ids:
                found[doc["id"]] = {"title": doc["title"], "text": doc["text"]}
    return found


def calls_for(q, docs: dict[str, dict]) -> list[tuple[str, list, int, int, object, list[str]]]:
    """(format, messages, samples, max_tokens, reader, gold answers) for one question."""
    evidence = [docs[i] for i in q.supporting_ids if i in docs]
    path = [(sub, ans) for sub, ans, _ in q.sub_questions]
    calls = [
        ("self_ask", self_ask.self_ask_messages(q.question, []), 1, 128, lambda t: self_ask.parse_self_ask(t)[1], []),
        ("self_ask", self_ask.self_ask_messages(q.question, path[:1]), 1, 128, lambda t: self_ask.parse_self_ask(t)[1], []),
    ]
    for sub, ans, _ in q.sub_questions:
        calls.append(("answer", answer.answer_messages(sub, evidence), 1, 48, answer.read_answer, [ans]))
        calls.append(("samples", answer.answer_messages(sub, evidence), 3, 48, answer.read_answer, [ans]))
    calls.append(("mer", mer.mer_messages(q.question, path, evidence), 1, 128, lambda t: mer.parse_mer(t)[1], q.answers))
    return calls


SCHEMAS = {"self_ask": self_ask.SCHEMA, "answer": answer.SCHEMA, "samples": answer.SCHEMA, "mer": mer.SCHEMA}


def run(llm, calls, structured: bool) -> dict[str, dict[str, float]]:
    llm.chat.keep_prefixes = False
    llm.chat.llama.n_tokens = 0
    out: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))

    @node("bench")
    def one(state, config):
        kind, messages, m, limit, read, gold = state["call"]
        schema = SCHEMAS[kind] if structured else None
        start = time.perf_counter()
        if m == 1:
            replies = [llm.generate(messages, max_tokens=limit, schema=schema)]
        else:
            replies = llm.sample(messages, m, temperature=0.3, max_tokens=limit, schema=schema)
        seconds = time.perf_counter() - start
        row = out[kind]
        row["calls"] += len(replies)
        row["seconds"] += seconds
        for reply in replies:
            row["tokens"] += usage(reply)[1]
            said = read(str(reply.content))
            if gold:
                row["graded"] += 1
                row["cover_em"] += cover_em(said, gold)
                row["em"] += exact_match(said, gold)
        return {}

    for call in calls:
        out[call[0]]["fallbacks"] += one({"call": call}, {})["usage"]["parse_fallbacks"]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_argument(p)
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--llm", default="embedded:qwen2.5-1.5b")
    args = p.parse_args(argv)
    folder = data_dir(args.data)
    questions = read_questions(folder / "dev.jsonl", limit=args.limit)
    docs = gold_documents(str(folder / "corpus.jsonl"), {i for q in questions for i in q.supporting_ids})
    calls = [c for q in questions for c in calls_for(q, docs)]
    llm = make_llm(args.llm)
    llm.generate(answer.answer_messages("warm up", []), max_tokens=1)  # load the weights
    free, structured = run(llm, calls, False), run(llm, calls, True)
    print(f"{len(questions)} dev questions, {len(calls)} calls, {args.llm}; free decoding, then under the grammars")
    print("| format | replies | s / call free | s / call grammar | ratio | tokens / reply free | grammar | fall-backs free | grammar | cover-EM free | grammar | EM free | grammar |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for kind in SCHEMAS:
        a, b = free[kind], structured[kind]
        n, graded = a["calls"], a["graded"]
        quality = (
            [f"{a['cover_em'] / graded:.2f}", f"{b['cover_em'] / graded:.2f}", f"{a['em'] / graded:.2f}", f"{b['em'] / graded:.2f}"]
            if graded else ["-"] * 4
        )
        print(
            f"| {kind} | {n:.0f} | {a['seconds'] / n:.2f} | {b['seconds'] / n:.2f} | {b['seconds'] / a['seconds']:.2f} | "
            f"{a['tokens'] / n:.1f} | {b['tokens'] / n:.1f} | {a['fallbacks']:.0f} | {b['fallbacks']:.0f} | " + " | ".join(quality) + " |"
        )
    total_a, total_b = sum(r["seconds"] for r in free.values()), sum(r["seconds"] for r in structured.values())
    print(f"total: {total_a:.1f} s free, {total_b:.1f} s under the grammars ({total_b / total_a:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
