"""The graphs served by `langgraph dev` (what LangGraph Studio and chat front ends talk to),
driven through the HTTP API with langgraph_sdk: assistants, a chat question, the thread's history,
interrupts with an edited sub-question, two questions at once, a second question on a thread.
The LLM is the scripted gold oracle (tests/oracle.py); scorer, stores and graphs are real."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
Q1 = "Where was the director of film Ronnie Rocket born?"
Q2 = "Who is the father of the director of film Lost in Translation?"
SMALL = {"batch_size": 4, "budget": 8, "samples": 2, "evidence": 3, "first_stage_depth": 20, "max_tokens": 32}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`langgraph dev` on a free loopback port, analytics and version check off; stopped by pid."""
    folder = tmp_path_factory.mktemp("server")
    spec = json.loads((ROOT / "langgraph.json").read_text())
    spec["dependencies"] = [str(ROOT)]
    spec["graphs"] = {name: f"{TESTS / 'served.py'}:{name}" for name in spec["graphs"]}  # the graphs, with the oracle
    (folder / "langgraph.json").write_text(json.dumps(spec))
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "1",
        "LANGSMITH_TRACING": "false",
    }
    cli = Path(sys.executable).with_name("langgraph")
    url = f"http://127.0.0.1:{port}"
    with open(folder / "server.log", "w") as log:
        proc = subprocess.Popen(
            [str(cli), "dev", "--config", str(folder / "langgraph.json"), "--host", "127.0.0.1", "--port", str(port), "--no-browser", "--no-reload"],
            cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        try:
            wait_until_up(proc, url, folder / "server.log")
            yield url
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)


def wait_until_up(proc, url, log_path, seconds=180):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"langgraph dev exited: {log_path.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(1)
    pytest.fail(f"langgraph dev did not start in {seconds} s")


@pytest.fixture(scope="module")
def client(server):
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=server)


@pytest.fixture(scope="module")
def config(demo_index):
    return {"configurable": {"nli": "llm", "scorer": "dense", "index_dir": str(demo_index), **SMALL}}


@pytest.mark.slow
def test_serves_the_named_graphs(client):
    graphs = {a["graph_id"] for a in client.assistants.search(limit=50)}
    assert {"sunar", "sunar_no_asu", "sunar_r", "self_ask", "gensco", "gensco_stop", "ra_isf"} <= graphs


@pytest.mark.slow
def test_a_chat_thread_answers_with_an_ai_message_and_keeps_its_history(client, config):
    thread = client.threads.create()["thread_id"]
    out = client.runs.wait(thread, "sunar", input={"messages": [{"role": "human", "content": Q1}]}, config=config)
    assert out["answer"] == "Missoula, Montana"
    reply = out["messages"][-1]
    assert reply["type"] == "ai" and reply["content"].startswith("Missoula, Montana") and "Ronnie Rocket" in reply["content"]
    assert [h["question"] for h in out["reasoning_path"]] == ["Who directed film Ronnie Rocket?", "Where was David Lynch born?"]

    history = client.threads.get_history(thread, limit=200)
    assert len(history) > 20  # a checkpoint per step: the algorithm can be stepped through
    assert any(s["next"] == ["select_batch"] for s in history) and any(s["next"] == ["rescore"] for s in history)

    out = client.runs.wait(thread, "sunar", input={"messages": [{"role": "human", "content": Q2}]}, config=config)
    assert out["answer"] == "Francis Ford Coppola"
    assert [m["content"] for m in out["messages"] if m["type"] == "human"] == [Q1, Q2]
    assert out["usage"]["calls"]["ask"] == 1  # the second question's cost, not the thread's


@pytest.mark.slow
def test_interrupt_before_retrieval_to_edit_the_sub_question_and_before_mer(client, config):
    thread = client.threads.create()["thread_id"]
    client.runs.wait(thread, "sunar", input={"question": Q1}, config=config, interrupt_before=["retrieve"])
    state = client.threads.get_state(thread)
    assert state["next"] == ["retrieve"] and state["values"]["sub_question"] == "Who directed film Ronnie Rocket?"

    client.threads.update_state(thread, {"sub_question": "Who made the film Ronnie Rocket?"})
    client.runs.wait(thread, "sunar", input=None, config=config, interrupt_before=["final"])
    state = client.threads.get_state(thread)
    assert state["next"] == ["final"]
    assert state["values"]["hops"][0]["question"] == "Who made the film Ronnie Rocket?"
    assert state["values"]["evidence"]  # what MER will read, visible before it runs

    out = client.runs.wait(thread, "sunar", input=None, config=config)
    assert out["answer"] == "Missoula, Montana" and not client.threads.get_state(thread)["next"]


@pytest.mark.slow
def test_two_questions_at_once_get_independent_answers(client, config):
    a, b = client.threads.create()["thread_id"], client.threads.create()["thread_id"]
    run_a = client.runs.create(a, "self_ask", input={"question": Q1}, config=config)
    run_b = client.runs.create(b, "sunar", input={"question": Q2}, config=config)
    out_a = client.runs.join(a, run_a["run_id"])
    out_b = client.runs.join(b, run_b["run_id"])
    assert out_a["answer"] == "Missoula, Montana" and out_b["answer"] == "Francis Ford Coppola"
    assert {e["title"] for e in out_b["evidence"]} & {"Lost in Translation (film)", "Sofia Coppola", "Francis Ford Coppola"}


@pytest.mark.slow
def test_a_run_as_studio_starts_it_on_the_embedded_model_uses_the_cpu_settings(client, demo_index):
    """Studio and the API send only what the user set: with the embedded model named, the run gets
    the cpu profile (b = 8, c = 16, m = 3), not the paper's budget."""
    thread = client.threads.create()["thread_id"]
    context = {"llm": "embedded:qwen2.5-1.5b", "nli": "llm", "scorer": "dense", "index_dir": str(demo_index)}
    out = client.runs.wait(thread, "sunar", input={"question": Q1}, config={"configurable": context})
    assert out["answer"] == "Missoula, Montana"
    batches = [b for hop in out["hops"] for b in hop["batches"]]
    assert batches and all(len(b["ids"]) <= 8 and len(b["answers"]) == 3 for b in batches)
    assert all(sum(len(b["ids"]) for b in hop["batches"]) <= 16 for hop in out["hops"])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"rescoring": "both"}, "configuration: rescoring must be one of paper, official (got 'both')"),
        ({"samples": 100000}, "configuration: samples must be from 1 to 100 (got 100000)"),
    ],
)
def test_a_bad_setting_from_an_api_caller_gets_the_one_clear_error(client, config, setting, message):
    thread = client.threads.create()["thread_id"]
    bad = {"configurable": {**config["configurable"], **setting}}
    run = client.runs.create(thread, "sunar", input={"question": Q1}, config=bad)
    client.runs.join(thread, run["run_id"])
    finished = client.runs.get(thread, run["run_id"])
    assert finished["status"] == "error"
    state = client.threads.get(thread)
    error = json.dumps(state.get("error") or finished, ensure_ascii=False)
    logged = json.dumps(client.threads.get_state(thread).get("tasks") or [], ensure_ascii=False)
    assert message in error or message in logged, (error, logged)
