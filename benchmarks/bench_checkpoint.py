"""Checkpointing overhead per node: what SQLite checkpoints cost against the work of the nodes.

    python -m benchmarks.bench_checkpoint [--questions 5] [--index DIR]

Runs the SUNAR graph on demo questions with a scripted LLM (so the figure is not drowned by LLM
time) and the real scorer and stores, without a checkpointer and with SQLite under each
durability mode, timing every checkpoint write. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from benchmarks import scripted_llm
from sunar.configuration import CPU_PROFILE, Configuration
from sunar.evals.data import read_questions
from sunar.graph import build_graph
from sunar.paths import DEMO_CORPUS
from sunar.prompts import mer, nli, self_ask
from sunar.resources import POOL
from sunar.server.checkpoints import open_checkpointer

QUESTIONS = Path(DEMO_CORPUS).with_name("demo_questions.jsonl")


def generic_script(prompt: str, i: int) -> str:
    """Two follow-ups, then an answer; every other prompt gets a short answer."""
    if prompt.startswith(self_ask.SYSTEM):
        n = prompt.rsplit("Question:", 1)[1].count("Intermediate answer:")
        return "So the final answer is: Montana" if n >= 2 else f"Follow up: Which person is meant in step {n + 1}?"
    if prompt.startswith(mer.SYSTEM):
        return "[Answer]: from the evidence.\n[Final Answer]: Montana"
    return "yes" if prompt.startswith(nli.SYSTEM) else f"David Lynch {i % 2}"


class TimedSaver(SqliteSaver):
    """LangGraph's SQLite checkpointer, timing its writes."""

    seconds = 0.0
    writes = 0

    def _timed(self, write: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return write(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - started
            self.writes += 1

    def put(self, *args: Any, **kwargs: Any) -> Any:
        return self._timed(super().put, *args, **kwargs)

    def put_writes(self, *args: Any, **kwargs: Any) -> Any:
        return self._timed(super().put_writes, *args, **kwargs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=5)
    parser.add_argument("--index", default="", help="index directory (default: the demo index)")
    args = parser.parse_args()

    questions = read_questions(QUESTIONS, limit=args.questions)
    settings = {**CPU_PROFILE, "profile": "cpu", "nli": "llm", "scorer": "hybrid", "index_dir": args.index or ""}
    # the scripted LLM as the run's LLM; the real scorer and index (the demo index is built if missing)
    llm = scripted_llm(generic_script, "bench")
    POOL.llm_factory = lambda spec: llm
    configurable = {**settings, "resources": POOL.get(Configuration.resolve(settings))}
    build_graph("sunar").invoke({"question": questions[0].question}, {"configurable": configurable})  # warm up models

    rows = []
    for mode in ("none", "exit", "async", "sync"):
        walls, steps, saver_seconds, writes = [], 0, 0.0, 0
        with tempfile.TemporaryDirectory() as tmp, open_checkpointer(Path(tmp) / "c.sqlite", TimedSaver) as saver:
            timed = saver if mode != "none" else None
            graph = build_graph("sunar", checkpointer=timed)
            for n, q in enumerate(questions):
                config = {"configurable": {**configurable, "thread_id": f"t{n}"}, "recursion_limit": 1000}
                started = time.perf_counter()
                out = graph.invoke({"question": q.question}, config, durability=None if mode == "none" else mode)
                walls.append(time.perf_counter() - started)
                steps += sum(out["usage"]["calls"].values())
            if timed:
                saver_seconds, writes = timed.seconds, timed.writes
        rows.append((mode, statistics.mean(walls), steps / len(questions), saver_seconds, writes))

    base = rows[0][1]
    print(f"\n{len(questions)} demo questions, sunar graph, scripted LLM, real scorer and stores (CPU profile)\n")
    print("| durability | wall s / question | nodes / question | checkpoint writes / question | ms per write | ms per node | wall vs none |")
    print("|---|---|---|---|---|---|---|")
    for mode, wall, nodes, seconds, writes in rows:
        per_write = 1000 * seconds / writes if writes else 0.0
        per_node = 1000 * seconds / (nodes * len(questions)) if writes else 0.0
        print(f"| {mode} | {wall:.2f} | {nodes:.0f} | {writes / len(questions):.0f} | {per_write:.2f} | {per_node:.2f} | {wall / base:.2f}x |")


if __name__ == "__main__":
    main()
