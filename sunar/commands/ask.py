"""``sunar ask``: one question, printed, as JSON, or step by step; in a checkpointed thread that resumes."""

from __future__ import annotations

import argparse
import json
from typing import Any

from sunar.commands.common import log, model_options, run_config


def print_result(record: dict[str, Any]) -> None:
    from sunar.result import confidence_lines

    said = confidence_lines(record["answer"], record["confidence"], record["trust"], record["abstained"], record["why"], record["confidence_basis"])
    print("\n".join(["Answer: " + said[0], *[line for line in said[1:] if line]]))
    if record["rationale"]:
        print(f"Rationale: {record['rationale']}")
    if record["reasoning_path"]:
        print("\nReasoning path:")
        for i, step in enumerate(record["reasoning_path"], 1):
            print(f"  {i}. {step['question']} -> {step['answer']}")
    if record["cited"] or record["evidence"]:  # the pages the reasoning used first, marked (sunar.citations)
        from sunar.citations import used_words

        print("\nEvidence:")
        for i, e in enumerate(record["cited"] or record["evidence"], 1):
            print(f"  [{i}] {e['title']} ({e['id']})" + (f" - {used}" if (used := used_words(e)) else ""))
    for note in record["notes"]:
        print(f"note: {note}")
    usage = record["usage"]
    seconds = sum((usage.get("seconds") or {}).values())
    print(
        f"\nCost: {usage.get('llm_calls', 0)} LLM calls, {usage.get('prompt_tokens', 0)} prompt + "
        f"{usage.get('generated_tokens', 0)} generated tokens, {usage.get('judge_calls', 0)} yes/no judgements"
        + (f", {usage['loglik_calls']} likelihood calls" if usage.get("loglik_calls") else "")
        + f", {seconds:.1f} s"
    )


def cmd_ask(args: argparse.Namespace) -> int:
    from sunar.graph import GRAPHS, build_graph, check_graph
    from sunar.question import validate_question
    from sunar.result import result_record
    from sunar.streaming import stream_steps

    question = validate_question(args.question)
    kind = GRAPHS[check_graph(args.variant)]
    configurable = run_config(args)
    config: dict[str, Any] = {"configurable": configurable, "recursion_limit": 1000}
    if not args.thread:
        graph = build_graph(args.variant)
        out = stream_steps(graph, {"question": question}, config, kind.describe, kind.answer_node) if args.stream else graph.invoke({"question": question}, config)
    else:
        from sunar.server.checkpoints import DURABILITY, configured, open_checkpointer, unfinished

        with open_checkpointer(configured(args.checkpoints) or None) as saver:
            graph = build_graph(args.variant, checkpointer=saver)
            configurable["thread_id"] = args.thread
            resume = unfinished(graph.get_state(config), question)
            if resume:
                log.info("resuming the unfinished run on thread %s", args.thread)
            payload = None if resume else {"question": question}
            if args.stream:
                out = stream_steps(graph, payload, config, kind.describe, kind.answer_node, durability=DURABILITY)
            else:
                out = graph.invoke(payload, config, durability=DURABILITY)
    record = result_record(out, args.variant)
    if args.json:
        print(json.dumps(record, ensure_ascii=False))
    else:
        print_result(record)
    return 0


def add(sub: Any) -> None:
    """Its sub-commands, on the ``sunar`` parser."""
    p = sub.add_parser("ask", help="answer a multi-hop question (default: the bundled demo corpus)")
    p.add_argument("question")
    p.add_argument("--index", default="", help="index directory from 'sunar index' (default: the bundled demo corpus)")
    p.add_argument("--chroma-url", default="", help="Chroma server URL, if the index was built with one")
    p.add_argument("--variant", default="sunar", help="sunar (default), sunar_no_asu, sunar_r, self_ask, gensco, gensco_stop, ra_isf or rag")
    p.add_argument("--thread", default="", help="keep the run in a checkpointed thread; the same command again resumes an interrupted run")
    p.add_argument("--checkpoints", default="", help="where --thread keeps its runs: a SQLite file or a postgresql:// URL shared by several machines (default: "
                   "$SUNAR_CHECKPOINTS, else $SUNAR_HOME/checkpoints.sqlite)")
    model_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--stream", action="store_true", help="show each step live on stderr (sub-questions, batch scores, semantic sets, answers)")
    p.set_defaults(func=cmd_ask)
