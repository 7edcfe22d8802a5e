"""How long a chat app waits: the first streamed step, the final answer's first token, the whole answer.

    python -m benchmarks.bench_first_token [--data DIR] [--index INDEX_DIR] [--start 1] [--count 5]
        [--graph sunar] [--llm embedded:qwen2.5-1.5b] [--out benchmarks/results/first_token]

Starts the OpenAI endpoint (``sunar serve-openai``) on a free loopback port with the embedded
model (the operator's settings in its environment: SUNAR_LLM, SUNAR_INDEX_DIR; the rest ``auto``,
the cpu profile) and asks ``--count`` questions of DIR/dev.jsonl from number ``--start`` on
(questions 1-100 only: 101 on are held out), one at a time, streamed, as a chat app asks them.
INDEX_DIR is the index of DIR/corpus.jsonl (default: where ``sunar eval`` builds it).

Per question, seconds from sending the request to:
- ``first step``: the first ``reasoning_content`` chunk (the first thing a chat app shows);
- ``first answer token``: the first token of the LLM call that writes the final answer (MER),
  streamed live among the steps;
- ``answer``: the reply (``content``: the answer, confidence, evidence);
- ``done``: ``data: [DONE]``.
The first question also waits for the models to load (the server loads them on its first run).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks import add_data_argument, data_dir
from sunar.evals.data import read_questions
from sunar.evals.run import default_index_dir
from sunar.graph import GRAPHS

#: The dev questions this benchmark may read (101 on are the held-out ones).
LAST_QUESTION = 100


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_endpoint(llm: str, index: Path, log: Path) -> tuple[subprocess.Popen, str]:
    """``sunar serve-openai`` on a free port, the operator's settings in its environment; returns
    the process and its base URL once it lists its models."""
    port = free_port()
    env = {**os.environ, "SUNAR_LLM": llm, "SUNAR_INDEX_DIR": str(index), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "sunar.cli", "serve-openai", "--port", str(port)], env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.5)
    stop(proc)
    raise SystemExit(f"error: sunar serve-openai did not start: {log.read_text()[-2000:]}")


def stop(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)


def ask_streaming(url: str, graph: str, question: str) -> dict[str, Any]:
    """One question, streamed: the seconds to each moment named in the module docstring, the
    answer's tokens (chunks of the answer node) and the reply's first line."""
    prefix = f"[{GRAPHS[graph].answer_node}] "
    times: dict[str, float] = {}
    tokens, reply, in_tokens = 0, "", False
    body = {"model": graph, "stream": True, "messages": [{"role": "user", "content": question}]}
    sent = time.perf_counter()
    with httpx.stream("POST", f"{url}/chat/completions", json=body, timeout=None) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data: "):
                continue
            now = time.perf_counter() - sent
            if line == "data: [DONE]":
                times["done"] = now
                break
            event = json.loads(line.removeprefix("data: "))
            if "error" in event:
                raise SystemExit(f"error from the endpoint: {event['error']}")
            delta = (event.get("choices") or [{}])[0].get("delta") or {}
            step = delta.get("reasoning_content") or ""
            if step:
                times.setdefault("first_step", now)
                # the answer node's tokens: the first one after the node's name, then bare tokens
                # until a step's line; the node's own line ("[final] final answer: ...") is not one
                if step.startswith(prefix) and not step.startswith(prefix + "final answer:"):
                    times.setdefault("first_answer_token", now)
                    in_tokens = True
                elif step.startswith("[") or step.startswith("\n["):
                    in_tokens = False
                tokens += in_tokens
            if delta.get("content"):
                times.setdefault("answer", now)
                reply += delta["content"]
    return {**times, "answer_chunks": tokens, "reply": reply.strip().splitlines()[0] if reply.strip() else ""}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_argument(parser)
    parser.add_argument("--index", type=Path, default=None, help="index of DIR/corpus.jsonl (default: sunar eval's)")
    parser.add_argument("--start", type=int, default=1, help="number of the first dev question asked (1-based)")
    parser.add_argument("--count", type=int, default=5, help="questions asked")
    parser.add_argument("--graph", default="sunar", choices=[g for g, kind in GRAPHS.items() if kind.answer_node])
    parser.add_argument("--llm", default="embedded:qwen2.5-1.5b")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/first_token"))
    args = parser.parse_args()
    if not (args.start >= 1 and args.count >= 1 and args.start + args.count - 1 <= LAST_QUESTION):
        raise SystemExit(f"error: only dev questions 1-{LAST_QUESTION} may be used (101 on are held out)")
    folder = data_dir(args.data)
    index = args.index or default_index_dir(folder / "corpus.jsonl")
    if not (index / "manifest.json").is_file():
        raise SystemExit(f"error: no index at {index}; build it with: sunar index {folder / 'corpus.jsonl'} --index {index}")
    questions = read_questions(folder / "dev.jsonl", limit=args.start + args.count - 1)[args.start - 1:]

    args.out.mkdir(parents=True, exist_ok=True)
    proc, url = start_endpoint(args.llm, index, Path(tempfile.mkdtemp(prefix="bench-first-token-")) / "server.log")
    rows = []
    try:
        for n, q in enumerate(questions, start=args.start):
            row = {"n": n, "id": q.id, "question": q.question, "gold": q.answers, **ask_streaming(url, args.graph, q.question)}
            rows.append(row)
            print(f"dev {n:>3}: first step {row.get('first_step', float('nan')):6.1f} s, first answer token "
                  f"{row.get('first_answer_token', float('nan')):6.1f} s, answer {row.get('answer', float('nan')):6.1f} s, "
                  f"done {row['done']:6.1f} s ({row['answer_chunks']} answer chunks): {row['reply'][:60]}", flush=True)
    finally:
        stop(proc)

    warm = rows[1:] or rows
    summary = {
        key: statistics.median(r[key] for r in warm if key in r)
        for key in ("first_step", "first_answer_token", "answer", "done")
        if any(key in r for r in warm)
    }
    summary["answer_after_first_answer_token"] = statistics.median(
        r["answer"] - r["first_answer_token"] for r in warm if "answer" in r and "first_answer_token" in r
    )
    print("median over the questions after the first (models loaded): " + ", ".join(f"{k} {v:.1f} s" for k, v in summary.items()))
    record = {"graph": args.graph, "llm": args.llm, "index": index.name, "questions": rows, "median_warm": summary}
    (args.out / "results.json").write_text(json.dumps(record, indent=1) + "\n")
    print(f"written: {args.out / 'results.json'}")


if __name__ == "__main__":
    main()
