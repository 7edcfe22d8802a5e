"""The graphs as an OpenAI-compatible chat endpoint (``sunar serve-openai``), called by the
official ``openai`` client as chat apps call it: the graphs as models, an answer with its steps
streamed and not, a conversation's second question, the client's settings and the operator's,
bad requests, and the loopback/Origin policy. The server runs in its own process on a free
loopback port with the scripted gold oracle (tests/oracle.py) as its LLM; scorer, stores and
graphs are real."""

import ipaddress
import json
import os
import re
import signal
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

import httpx
import openai
import pytest

from conftest import free_port
from sunar.graph import GRAPH_NAMES

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
Q1 = "Where was the director of film Ronnie Rocket born?"
Q2 = "Who is the father of the director of film Lost in Translation?"
SMALL = {"batch_size": 4, "budget": 8, "samples": 2, "evidence": 3, "first_stage_depth": 20, "max_tokens": 32}


def start(folder: Path, **operator: str):
    """``sunar serve-openai`` with the oracle as its LLM and ``operator`` in its environment;
    returns (process, URL) once it answers."""
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SUNAR_") or k == "SUNAR_HOME"},
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
        **operator,
    }
    log = open(folder / "server.log", "w")  # noqa: SIM115 - the server writes to it until stopped
    proc = subprocess.Popen([sys.executable, str(TESTS / "oracle.py"), "serve-openai", "--port", str(port)],
                            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"serve-openai exited: {(folder / 'server.log').read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/v1/models", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGTERM)
    pytest.fail("serve-openai did not start in 120 s")


def stop(proc) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)


def _address(hexadecimal: str) -> str:
    """An address as /proc/net/tcp{,6} writes it: 32-bit words in the machine's (little-endian) order."""
    raw = bytes.fromhex(hexadecimal)
    return str(ipaddress.ip_address(b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))))


def listening(group: int) -> set[tuple[str, int]]:
    """The TCP (address, port) pairs the processes of process group ``group`` listen on, read from
    /proc (Linux): what a server really bound, whatever its code or command line says."""
    sockets: set[str] = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[2]) != group:  # after the name: state, ppid, pgrp
                continue
            for fd in (stat.parent / "fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    sockets.add(target[len("socket:["):-1])
        except OSError:  # the process ended meanwhile
            continue
    found = set()
    for table in ("tcp", "tcp6"):
        for line in Path("/proc/net", table).read_text().splitlines()[1:]:
            fields = line.split()  # sl, local address:port, remote, state (0A: listening), ..., inode
            if fields[3] == "0A" and fields[9] in sockets:
                address, port = fields[1].split(":")
                found.add((_address(address), int(port, 16)))
    return found


def assert_loopback_only(group: int, url: str) -> None:
    """The server at ``url`` (process group ``group``) listens on its port of 127.0.0.1 and on no
    address but the loopback's, whatever else it opens."""
    sockets = listening(group)
    assert ("127.0.0.1", int(url.rsplit(":", 1)[1])) in sockets, sockets
    assert all(ipaddress.ip_address(address).is_loopback for address, _ in sockets), sockets


@pytest.fixture(scope="module")
def served(tmp_path_factory, demo_index):
    """The server process and its URL."""
    # the operator's settings: the oracle stands in for the embedded model (so the cpu profile applies)
    proc, url = start(tmp_path_factory.mktemp("openai-api"), SUNAR_LLM="embedded:qwen2.5-1.5b", SUNAR_INDEX_DIR=str(demo_index),
                      SUNAR_NLI="llm", SUNAR_SCORER="dense")
    yield proc, url
    stop(proc)


@pytest.fixture(scope="module")
def server(served):
    return served[1]


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=f"{server}/v1", api_key="not-needed", max_retries=0, timeout=120)


def hop_samples(reasoning: str) -> list[int]:
    """How many answers each hop's candidates were clustered from, as the reasoning shows them."""
    return [int(n) for n in re.findall(r"; candidates of (\d+) answers: ", reasoning)]


@pytest.mark.slow
def test_the_graphs_are_the_models(client):
    assert [m.id for m in client.models.list()] == list(GRAPH_NAMES)


@pytest.mark.slow
def test_an_answer_with_its_steps_as_reasoning_and_the_operators_cpu_settings(client):
    out = client.chat.completions.create(model="sunar", messages=[{"role": "user", "content": Q1}])
    message = out.choices[0].message
    assert out.object == "chat.completion" and out.model == "sunar" and out.choices[0].finish_reason == "stop"
    assert message.role == "assistant" and message.content.startswith("Missoula, Montana\n") and "Ronnie Rocket" in message.content
    steps = message.reasoning_content
    assert steps.index("follow-up: Who directed film Ronnie Rocket?") < steps.index("follow-up: Where was David Lynch born?") < steps.index("final answer: Missoula, Montana")
    assert "[confidence] sampled answers agreeing: " in steps and "not calibrated" in steps  # the operator's scorer is no shipped calibration's
    assert "Reasoning:" not in steps  # the reply is the content, not the steps
    assert hop_samples(steps) and set(hop_samples(steps)) == {4}  # the operator's model's cpu profile: each hop's answer and 3 samples
    assert "sampled answers: " not in steps  # no batch is sampled (asu_batches off in the cpu profile)
    assert out.usage.prompt_tokens > 0 and out.usage.completion_tokens > 0


@pytest.mark.slow
def test_streamed_the_steps_come_as_they_happen_then_the_reply(client):
    started = time.perf_counter()
    stream = client.chat.completions.create(model="self_ask", messages=[{"role": "user", "content": Q1}], stream=True,
                                            stream_options={"include_usage": True}, extra_body={"sunar": SMALL})
    kinds, steps, content, finish, usage = [], "", "", None, None
    for chunk in stream:
        assert chunk.object == "chat.completion.chunk" and chunk.model == "self_ask"
        if chunk.usage:
            usage = chunk.usage
        for choice in chunk.choices:
            delta = choice.delta
            if getattr(delta, "reasoning_content", None):
                kinds.append("reasoning")
                steps += delta.reasoning_content
            if delta.content:
                kinds.append("content")
                content += delta.content
            finish = choice.finish_reason or finish
    assert kinds.count("reasoning") >= 5 and kinds.index("content") > max(i for i, k in enumerate(kinds) if k == "reasoning")
    assert "follow-up: Who directed film Ronnie Rocket?" in steps and content.startswith("Missoula, Montana\n") and "Evidence:" in content
    assert finish == "stop" and usage.total_tokens > 0
    assert time.perf_counter() - started < 60


@pytest.mark.slow
def test_the_raw_stream_is_server_sent_chunks_ending_with_done(server):
    body = {"model": "sunar_r", "messages": [{"role": "user", "content": Q1}], "stream": True, "sunar": SMALL}
    with httpx.stream("POST", f"{server}/v1/chat/completions", json=body, timeout=120) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        events = [line for line in response.iter_lines() if line]
    assert all(e.startswith("data: ") for e in events) and events[-1] == "data: [DONE]"
    first = json.loads(events[0][6:])
    assert first["object"] == "chat.completion.chunk" and first["choices"][0]["delta"]["role"] == "assistant"


@pytest.mark.slow
def test_a_conversations_second_question_is_answered_with_the_earlier_turns_passed_on(client):
    first = client.chat.completions.create(model="sunar", messages=[{"role": "user", "content": Q1}], extra_body={"sunar": SMALL})
    turns = [
        {"role": "system", "content": "You answer multi-hop questions."},
        {"role": "user", "content": Q1},
        {"role": "assistant", "content": first.choices[0].message.content},
        {"role": "user", "content": [{"type": "text", "text": Q2}]},  # content parts, as some apps send
    ]
    out = client.chat.completions.create(model="sunar", messages=turns, extra_body={"sunar": SMALL})
    assert out.choices[0].message.content.startswith("Francis Ford Coppola\n")
    assert "Lost in Translation" in out.choices[0].message.reasoning_content and "Ronnie Rocket" not in out.choices[0].message.reasoning_content


@pytest.mark.slow
def test_the_clients_settings_apply(client):
    out = client.chat.completions.create(model="sunar", messages=[{"role": "user", "content": Q1}], extra_body={"sunar": {**SMALL, "hop_samples": 1}})
    assert out.choices[0].message.content.startswith("Missoula, Montana")
    assert hop_samples(out.choices[0].message.reasoning_content) and set(hop_samples(out.choices[0].message.reasoning_content)) == {2}


BAD = [
    ({"model": "gpt-4o", "messages": [{"role": "user", "content": Q1}]}, 404, "the model 'gpt-4o' does not exist; choose one of: sunar, "),
    ({"model": "sunar", "messages": []}, 400, "messages must be a non-empty list"),
    ({"model": "sunar", "messages": [{"role": "system", "content": "Be brief."}]}, 400, "no user message"),
    ({"model": "sunar", "messages": [{"role": "user", "content": "   "}]}, 400, "the question is empty"),
    ({"model": "sunar", "messages": [{"role": "wizard", "content": Q1}]}, 400, "messages[0].role must be one of: user, assistant, system"),
    ({"model": "sunar", "messages": [{"role": "user", "content": 42}]}, 400, "messages[0].content must be text"),
    ({"model": "sunar", "messages": [{"role": "user", "content": Q1}], "sunar": {"index_dir": "/etc"}}, 400,
     "configuration: index_dir is the server operator's setting (SUNAR_INDEX_DIR), a client cannot set it"),
    ({"model": "sunar", "messages": [{"role": "user", "content": Q1}], "sunar": {"openai_base_url": "http://10.0.0.1/v1"}}, 400,
     "configuration: openai_base_url is the server operator's setting (SUNAR_OPENAI_BASE_URL)"),
    ({"model": "sunar", "messages": [{"role": "user", "content": Q1}], "sunar": {"samples": 10**6}}, 400, "configuration: samples must be from 1 to 100"),
    ({"model": "sunar", "messages": [{"role": "user", "content": Q1}], "sunar": {"budgte": 5}}, 400, "configuration: unknown field 'budgte'"),
    ({"model": "sunar", "messages": [{"role": "user", "content": Q1}], "sunar": "fast"}, 400, "sunar must be an object of settings"),
    (["not", "an", "object"], 400, "the request body must be a JSON object"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("body", "status", "message"), BAD)
def test_a_bad_request_gets_openais_error_object_with_one_line(server, body, status, message):
    answer = httpx.post(f"{server}/v1/chat/completions", json=body, timeout=30)
    error = answer.json()["error"]
    assert answer.status_code == status and error["message"].startswith(message) and "\n" not in error["message"], error
    assert error["type"] == "invalid_request_error" and "Traceback" not in answer.text


@pytest.mark.slow
def test_malformed_json_and_the_clients_own_errors(server, client):
    answer = httpx.post(f"{server}/v1/chat/completions", content=b'{"model": "sunar", "messages": [', headers={"Content-Type": "application/json"})
    assert answer.status_code == 400 and answer.json()["error"]["message"].startswith("the request body is not JSON")
    with pytest.raises(openai.NotFoundError, match="the model 'llama3' does not exist"):
        client.chat.completions.create(model="llama3", messages=[{"role": "user", "content": Q1}])
    with pytest.raises(openai.BadRequestError, match="a client cannot set it"):
        client.chat.completions.create(model="sunar", messages=[{"role": "user", "content": Q1}], extra_body={"sunar": {"llm": "ollama:x"}})


@pytest.mark.slow
def test_other_hosts_and_web_origins_are_refused(server):
    assert httpx.get(f"{server}/v1/models", headers={"Host": "evil.example:8000"}).status_code == 403  # DNS rebinding
    refused = httpx.get(f"{server}/v1/models", headers={"Origin": "https://evil.example"})
    assert refused.status_code == 403 and "access-control-allow-origin" not in refused.headers
    allowed = httpx.get(f"{server}/v1/models", headers={"Origin": "http://localhost:3000"})
    assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == "http://localhost:3000"
    preflight = httpx.options(f"{server}/v1/chat/completions", headers={"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST"})
    assert preflight.status_code == 200 and preflight.headers["access-control-allow-origin"] == "http://localhost:3000"


@pytest.mark.slow
def test_the_endpoint_listens_on_the_loopback_only(served):
    proc, url = served
    assert_loopback_only(proc.pid, url)


def test_serve_openai_hands_uvicorn_the_loopback(monkeypatch):
    import uvicorn

    from sunar.cli import build_parser
    from sunar.server import openai_api

    seen = {}
    monkeypatch.setattr(openai_api, "create_app", lambda checkpointer=None: "the app")
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(app=app, **kw))
    args = build_parser().parse_args(["serve-openai"])
    assert args.func(args) == 0
    assert (seen["app"], seen["host"], seen["port"]) == ("the app", "127.0.0.1", 8000)


@pytest.mark.slow
def test_a_run_that_fails_is_one_line_streamed_or_not(tmp_path, demo_index):
    """The operator's index is missing: the run fails after the request was accepted."""
    proc, url = start(tmp_path, SUNAR_LLM="embedded:qwen2.5-1.5b", SUNAR_INDEX_DIR=str(tmp_path / "no-index"), SUNAR_NLI="llm", SUNAR_SCORER="dense")
    try:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="not-needed", max_retries=0)
        with pytest.raises(openai.InternalServerError) as caught:
            client.chat.completions.create(model="sunar", messages=[{"role": "user", "content": Q1}])
        assert "no-index" in caught.value.message and "\n" not in caught.value.body["message"]
        with pytest.raises(openai.APIError, match="no-index"):
            for _ in client.chat.completions.create(model="sunar", messages=[{"role": "user", "content": Q1}], stream=True):
                pass
        log = (tmp_path / "server.log").read_text()
        assert "Traceback" not in log, log
    finally:
        stop(proc)


def test_the_earlier_turns_go_to_the_graph_as_its_messages_and_the_last_user_message_is_the_question():
    from sunar.server.openai_api import checked

    job = checked({"model": "self_ask", "sunar": {"budget": 8}, "messages": [
        {"role": "developer", "content": "Answer briefly."},
        {"role": "user", "content": Q1},
        {"role": "assistant", "content": "Missoula, Montana"},
        {"role": "tool", "content": "ignored", "tool_call_id": "t1"},
        {"role": "user", "content": [{"type": "text", "text": "Who is the father of the director"}, {"type": "image_url", "image_url": {"url": "x"}},
                                     {"type": "text", "text": "  of film\nLost in Translation?"}]},
    ]}, {"self_ask": "the graph"})
    assert job.name == "self_ask" and job.graph == "the graph" and job.context.given() == {"budget": 8}
    assert [(m.type, m.content) for m in job.messages] == [("system", "Answer briefly."), ("human", Q1), ("ai", "Missoula, Montana"), ("human", Q2)]


def resident_mb(pid: int) -> float:
    """A process's resident memory (Linux /proc), in MB."""
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


@pytest.mark.slow
def test_many_clients_at_once_all_get_complete_answers_and_memory_stays_flat(served, client, capsys):
    """A bounded load test of the endpoint, with the scripted oracle as the LLM so the server is
    measured, not a model: three waves of 8 clients at once (streamed and not, two graphs); every
    answer complete and none failed; the server's memory after the third wave within 10% of the
    second's. The spread of the answer times (how fairly the runs share the machine) is printed."""
    from concurrent.futures import ThreadPoolExecutor

    proc, _ = served

    def ask(i: int) -> tuple[str, float]:
        started = time.perf_counter()
        model, messages, extra = ("sunar" if i % 4 == 0 else "self_ask"), [{"role": "user", "content": Q1}], {"sunar": SMALL}
        if i % 2:
            text = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(
                model=model, messages=messages, stream=True, extra_body=extra) if c.choices)
        else:
            text = client.chat.completions.create(model=model, messages=messages, extra_body=extra).choices[0].message.content
        return text, time.perf_counter() - started

    waves, memory = [], []
    for _ in range(3):
        with ThreadPoolExecutor(8) as pool:
            waves.append(list(pool.map(ask, range(8))))
        memory.append(resident_mb(proc.pid))
    for wave in waves:
        assert all(text.startswith("Missoula, Montana\n") and "Evidence:" in text for text, _ in wave), [t[:80] for t, _ in wave]
    assert memory[2] <= memory[1] * 1.10, memory
    seconds = sorted(s for _, s in waves[-1])
    with capsys.disabled():
        print(f"\n[load] 8 clients at once: answer in {seconds[0]:.1f} / {seconds[len(seconds) // 2]:.1f} / {seconds[-1]:.1f} s "
              f"(min / median / max); server memory after each wave {' / '.join(f'{m:.0f}' for m in memory)} MB")


@pytest.mark.slow
def test_sigterm_ends_the_server_within_five_seconds_with_a_run_in_flight(tmp_path, demo_index):
    """A run is streaming (the oracle takes 3 s per answer, so it lasts far longer than the test
    waits) when the server gets SIGTERM: the process is gone within 5 s."""
    import threading

    proc, url = start(tmp_path, SUNAR_LLM="embedded:qwen2.5-1.5b", SUNAR_INDEX_DIR=str(demo_index), SUNAR_NLI="llm", SUNAR_SCORER="dense",
                      SUNAR_ORACLE_DELAY="3")
    started = threading.Event()

    def chat() -> None:
        with suppress(Exception):  # the server goes away mid-answer
            client = openai.OpenAI(base_url=f"{url}/v1", api_key="not-needed", max_retries=0, timeout=60)
            for _ in client.chat.completions.create(model="sunar", messages=[{"role": "user", "content": Q1}], stream=True):
                started.set()

    asker = threading.Thread(target=chat, daemon=True)
    asker.start()
    try:
        assert started.wait(60), "no step arrived"
        time.sleep(1)
        sent = time.perf_counter()
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        assert time.perf_counter() - sent < 5
    finally:
        if proc.poll() is None:
            stop(proc)
