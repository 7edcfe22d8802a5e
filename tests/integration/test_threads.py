"""Threads through the CLI: a run killed in the middle of NAR resumes from its last checkpoint;
a thread keeps its history of questions."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
QUESTION = "Where was the director of film Ronnie Rocket born?"


def command(demo_index, checkpoints, *extra):
    return [
        sys.executable, str(TESTS / "oracle.py"), "ask", QUESTION, "--index", str(demo_index),
        "--nli", "llm", "--scorer", "dense", "--profile", "cpu", "--thread", "t1", "--checkpoints", str(checkpoints), *extra,
    ]


@pytest.mark.slow
def test_a_killed_run_resumes_from_its_last_checkpoint(tmp_path, demo_index):
    calls = tmp_path / "calls.log"
    env = {
        **os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
        "SUNAR_ORACLE_DELAY": "0.2", "SUNAR_ORACLE_LOG": str(calls),
    }
    checkpoints = tmp_path / "threads.sqlite"
    run = subprocess.Popen(command(demo_index, checkpoints, "--stream"), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = []
    for line in run.stderr:  # kill -9 once the first NAR batch has been scored
        seen.append(line)
        if line.startswith("[select_batch]"):
            run.send_signal(signal.SIGKILL)
            break
    run.wait(timeout=60)
    assert run.returncode == -signal.SIGKILL, "".join(seen)
    assert calls.read_text().split().count("self_ask") == 1  # killed inside the first sub-question

    again = subprocess.run(command(demo_index, checkpoints, "--json"), env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "resuming the unfinished run on thread t1" in again.stderr
    record = json.loads(again.stdout)
    assert record["answer"] == "Missoula, Montana"
    assert [s["question"] for s in record["reasoning_path"]] == ["Who directed film Ronnie Rocket?", "Where was David Lynch born?"]
    # nothing before the kill was asked again: one decomposition per step (2 follow-ups + the end)
    assert calls.read_text().split().count("self_ask") == 3
    assert record["usage"]["calls"]["decompose"] == 3 and record["usage"]["calls"]["ask"] == 1

    # a new question on the same thread starts afresh and the thread keeps both
    other = command(demo_index, checkpoints, "--json")
    other[other.index(QUESTION)] = "Who is the father of the director of film Lost in Translation?"
    third = subprocess.run(other, env=env, capture_output=True, text=True, timeout=300)
    assert third.returncode == 0, third.stderr
    record = json.loads(third.stdout)
    assert record["answer"] == "Francis Ford Coppola" and "resuming" not in third.stderr
    assert record["usage"]["calls"]["ask"] == 1 and record["usage"]["calls"]["decompose"] == 3

    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    from sunar.graph import build_graph

    with sqlite3.connect(checkpoints) as conn:
        state = build_graph("sunar", checkpointer=SqliteSaver(conn)).get_state({"configurable": {"thread_id": "t1"}})
    humans = [m.content for m in state.values["messages"] if m.type == "human"]
    assert humans == [QUESTION, "Who is the father of the director of film Lost in Translation?"]
    assert not state.next


def test_a_broken_checkpoint_file_is_one_clear_error(tmp_path, demo_index):
    bad = tmp_path / "threads.sqlite"
    bad.write_text("this is not a database " * 200)
    result = subprocess.run(command(demo_index, bad), capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith("error: ") and "not a checkpoint database" in result.stderr
    assert "Traceback" not in result.stderr
