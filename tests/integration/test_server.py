"""The graphs served by `langgraph dev` as `./run studio` starts it, on the loopback only (what
LangGraph Studio and chat front ends talk to), driven through the HTTP API with langgraph_sdk as
Studio does (its web origin and auth scheme): assistants, a chat question, the thread's history,
interrupts with an edited sub-question, two questions at once, a second question on a thread. The
operator's settings (model, index, scorer, NLI) come from the server's environment; a client that
names one, or sends a bad value, gets the one-line error. Pages of other web origins get no CORS
permission and are refused. The LLM is the scripted gold oracle (tests/oracle.py); scorer, stores
and graphs are real."""

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from test_openai_api import assert_loopback_only, resident_mb

from conftest import free_port, wait_until_up

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
Q1 = "Where was the director of film Ronnie Rocket born?"
Q2 = "Who is the father of the director of film Lost in Translation?"
SMALL = {"batch_size": 4, "budget": 8, "samples": 2, "evidence": 3, "first_stage_depth": 20, "max_tokens": 32}
STUDIO = {"Origin": "https://smith.langchain.com", "x-auth-scheme": "langsmith"}


class LangSmithStandIn(BaseHTTPRequestHandler):
    """Where LANGSMITH_ENDPOINT points during the test: records every request (traces would come here)."""

    seen: list[str] = []

    def _record(self):
        LangSmithStandIn.seen.append(f"{self.command} {self.path}")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    do_GET = do_POST = do_PATCH = _record

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def langsmith_endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), LangSmithStandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def run_copy(folder: Path, langgraph: str | None = None) -> tuple[Path, dict[str, str]]:
    """``./run`` copied into ``folder`` with a venv of its own, marked installed (so ./run installs
    nothing), whose ``bin/langgraph`` is this venv's (or a script with the text ``langgraph``):
    ``./run studio`` as a user starts it, with langgraph dev's state (kept in the working
    directory, which ./run makes its own) out of the checkout. Returns the script and the
    environment variable that points ./run at the venv."""
    shutil.copy2(ROOT / "run", folder / "run")
    (folder / "pyproject.toml").write_text("")
    venv = folder / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / ".sunar-installed").write_text(hashlib.sha256(b"").hexdigest()[:16])  # as ./run marks it: pyproject.toml's hash
    if langgraph is None:
        (venv / "bin" / "langgraph").symlink_to(Path(sys.executable).with_name("langgraph"))
    else:
        (venv / "bin" / "langgraph").write_text(langgraph)
        (venv / "bin" / "langgraph").chmod(0o755)
    return folder / "run", {"SUNAR_VENV": str(venv)}


def test_run_studio_starts_langgraph_dev_on_the_loopback(tmp_path):
    run, env = run_copy(tmp_path, '#!/bin/sh\necho "$@"\n')
    result = subprocess.run([str(run), "studio", "--port", "2999"], capture_output=True, text=True, timeout=60, env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["dev", "--no-browser", "--host", "127.0.0.1", "--port", "2999"]


@contextlib.contextmanager
def studio_server(folder: Path, langsmith_endpoint: str, **extra_env: str):
    """``./run studio`` (:func:`run_copy`) on a free port, with --no-reload; the process and its
    URL, stopped by process group. The project's langgraph.json (auth, CORS) with the graphs of
    tests/served.py; the operator's settings in the server's environment, and LangSmith tracing
    asked for, to a stand-in; ``extra_env`` on top (the oracle's delays and log)."""
    spec = json.loads((ROOT / "langgraph.json").read_text())
    spec["dependencies"] = [str(ROOT)]
    spec["graphs"] = {name: f"{TESTS / 'served.py'}:{name}" for name in spec["graphs"]}  # the graphs, with the oracle
    (folder / "langgraph.json").write_text(json.dumps(spec))
    run, venv = run_copy(folder)
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SUNAR_") or k == "SUNAR_HOME"},
        **venv,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",  # ./run sets them too
        "LANGGRAPH_NO_VERSION_CHECK": "1",
        # the operator's settings (the oracle stands in for the embedded model)
        "SUNAR_LLM": "embedded:qwen2.5-1.5b",
        "SUNAR_NLI": "llm",
        "SUNAR_SCORER": "dense",
        # tracing asked for: importing sunar turns it off, so the stand-in must see no trace
        "LANGSMITH_TRACING": "true",
        "LANGCHAIN_TRACING_V2": "true",
        "LANGSMITH_ENDPOINT": langsmith_endpoint,
        "LANGSMITH_API_KEY": "lsv2-not-a-key",
        **extra_env,
    }
    url = f"http://127.0.0.1:{port}"
    with open(folder / "server.log", "w") as log:
        proc = subprocess.Popen(
            [str(run), "studio", "--config", str(folder / "langgraph.json"), "--port", str(port), "--no-reload"],
            cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        try:
            wait_until_up(proc, f"{url}/ok", folder / "server.log", 180, "./run studio")
            yield proc, url
        finally:
            with contextlib.suppress(ProcessLookupError):  # a test may have stopped it already
                os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)


@pytest.fixture(scope="module")
def studio(tmp_path_factory, demo_index, langsmith_endpoint):
    """:func:`studio_server` as the tests below share it."""
    with studio_server(tmp_path_factory.mktemp("server"), langsmith_endpoint, SUNAR_INDEX_DIR=str(demo_index)) as started:
        yield started


@pytest.fixture(scope="module")
def server(studio):
    return studio[1]


@pytest.fixture(scope="module")
def client(server):
    """A client as LangGraph Studio is one: its web origin, its auth scheme."""
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=server, headers=STUDIO, api_key=None)


@pytest.fixture(scope="module")
def config():
    return {"configurable": SMALL}


@pytest.mark.slow
def test_studio_listens_on_the_loopback_only(studio):
    proc, url = studio
    assert_loopback_only(proc.pid, url)


@pytest.mark.slow
def test_serves_the_named_graphs(client):
    graphs = {a["graph_id"] for a in client.assistants.search(limit=50)}
    assert {"sunar", "sunar_no_asu", "sunar_r", "self_ask", "gensco", "gensco_stop", "ra_isf", "rag"} <= graphs


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
    assert any(s["next"] == ["select_batch"] for s in history) and any(s["next"] == ["answer_hop"] for s in history)

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


def group_mb(pgid: int) -> float:
    """The resident memory of every process in a process group (the server and its workers), in MB."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[2]) == pgid:
                total += resident_mb(int(stat.parent.name))
    return total


@pytest.mark.slow
def test_many_runs_at_once_all_complete_and_memory_stays_flat(studio, client, config, capsys):
    """A bounded load test of the LangGraph API with the scripted oracle as the LLM (the server is
    measured, not a model): three waves of 8 runs at once on threads of their own (two graphs);
    every run ends with the answer, and the server's memory after the third wave is within 10% of
    the second's. The spread of the times (how fairly the runs share the server) is printed."""
    from concurrent.futures import ThreadPoolExecutor

    proc, _ = studio

    def run(i: int) -> tuple[str, float]:
        started = time.perf_counter()
        thread = client.threads.create()["thread_id"]
        out = client.runs.wait(thread, "sunar" if i % 4 == 0 else "self_ask", input={"question": Q1}, config=config)
        return out["answer"], time.perf_counter() - started

    waves, memory = [], []
    for _ in range(3):
        with ThreadPoolExecutor(8) as pool:
            waves.append(list(pool.map(run, range(8))))
        memory.append(group_mb(proc.pid))
    assert all(answer == "Missoula, Montana" for wave in waves for answer, _ in wave), waves
    assert memory[2] <= memory[1] * 1.10, memory
    seconds = sorted(s for _, s in waves[-1])
    with capsys.disabled():
        print(f"\n[load] LangGraph API, 8 runs at once: answer in {seconds[0]:.1f} / {seconds[len(seconds) // 2]:.1f} / {seconds[-1]:.1f} s "
              f"(min / median / max); server memory after each wave {' / '.join(f'{m:.0f}' for m in memory)} MB")


@pytest.mark.slow
def test_a_run_with_no_settings_gets_the_operators_model_and_its_cpu_settings(client):
    """Studio and the API send only what the user set: the operator's model is the embedded one,
    so the run gets the cpu profile (b = 8, c = 16, each hop's answer sampled 3 more times instead
    of each batch's), not the paper's budget."""
    thread = client.threads.create()["thread_id"]
    out = client.runs.wait(thread, "sunar", input={"question": Q1})
    assert out["answer"] == "Missoula, Montana"
    batches = [b for hop in out["hops"] for b in hop["batches"]]
    assert batches and all(len(b["ids"]) <= 8 for b in batches)
    assert not any("answers" in b for b in batches) and all(len(hop["samples"]) == 4 for hop in out["hops"])
    assert all(sum(len(b["ids"]) for b in hop["batches"]) <= 16 for hop in out["hops"])


def operator(name, variable):
    return f"configuration: {name} is the server operator's setting ({variable}), a client cannot set it"


HOSTILE = [
    ({"llm_cache": "/var/tmp/x.sqlite"}, operator("llm_cache", "SUNAR_LLM_CACHE")),
    ({"index_dir": "/etc"}, operator("index_dir", "SUNAR_INDEX_DIR")),
    ({"chroma_url": "http://10.0.0.1:8000"}, operator("chroma_url", "SUNAR_CHROMA_URL")),
    ({"scorer": "cross-encoder:/some/folder"}, operator("scorer", "SUNAR_SCORER")),
    ({"nli": "hf:/x"}, operator("nli", "SUNAR_NLI")),
    ({"llm": "ollama:foo"}, operator("llm", "SUNAR_LLM")),
    ({"calibration": "/etc/passwd"}, operator("calibration", "SUNAR_CALIBRATION")),
    ({"samples": 10**6}, "configuration: samples must be from 1 to 100 (got 1000000)"),
    ({"max_tokens": 0}, "configuration: max_tokens must be from 1 to 4096 (got 0)"),
    ({"budget": "ten"}, "configuration: budget must be a whole number (got 'ten')"),
    ({"rescoring": "both"}, "configuration: rescoring must be one of paper, official (got 'both')"),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("route", "setting", "message"),
    [(route, setting, message) for route in ("context", "configurable") for setting, message in HOSTILE]
    + [("configurable", {"budgte": 5}, "configuration: unknown field 'budgte'")],
)
def test_a_hostile_or_bad_setting_from_a_client_gets_the_one_clear_error(client, route, setting, message):
    """Sent as context or in config.configurable (a field the context schema does not name, sent as
    context, never reaches the graph: the next test)."""
    thread = client.threads.create()["thread_id"]
    sent = {"context": setting} if route == "context" else {"config": {"configurable": setting}}
    out = client.runs.wait(thread, "sunar", input={"question": Q1}, raise_error=False, **sent)
    error = (out or {}).get("__error__") or {}
    assert error.get("message", "").startswith(message) and "\n" not in error["message"], out
    assert error.get("error") == "ConfigurationError", out


@pytest.mark.slow
def test_a_field_the_context_schema_does_not_name_is_dropped_by_the_server(client):
    """The LangGraph server drops it before the graph sees it, so the run answers as without it."""
    thread = client.threads.create()["thread_id"]
    out = client.runs.wait(thread, "sunar", input={"question": Q1}, context={**SMALL, "budgte": 5}, raise_error=False)
    assert "__error__" not in out and out["answer"] == "Missoula, Montana", out


@pytest.mark.slow
def test_pages_of_other_web_origins_get_no_cors_permission_and_are_refused(server):
    preflight = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
    for origin in ("https://smith.langchain.com", "http://localhost:3000"):
        ok = httpx.options(f"{server}/assistants/search", headers={"Origin": origin, **preflight})
        assert ok.status_code == 200 and ok.headers.get("access-control-allow-origin") == origin
        ok = httpx.post(f"{server}/assistants/search", json={"limit": 1}, headers={"Origin": origin})
        assert ok.status_code == 200 and ok.headers.get("access-control-allow-origin") == origin
    for origin in ("https://evil.example", "http://localhost.evil.example:3000", "null"):
        denied = httpx.options(f"{server}/assistants/search", headers={"Origin": origin, **preflight})
        assert "access-control-allow-origin" not in denied.headers
        # a "simple" request a page may send without asking: refused, not only unreadable
        refused = httpx.post(f"{server}/runs/wait", content=json.dumps({"assistant_id": "sunar", "input": {"question": Q1}}),
                             headers={"Origin": origin, "Content-Type": "text/plain"})
        assert refused.status_code == 403 and "access-control-allow-origin" not in refused.headers
    # a page whose name was rebound to 127.0.0.1 (DNS rebinding) sends its own Host
    rebound = httpx.post(f"{server}/assistants/search", json={"limit": 1}, headers={"Host": "evil.example:2024"})
    assert rebound.status_code == 403
    assert httpx.post(f"{server}/assistants/search", json={"limit": 1}).status_code == 200  # SDK, curl: no Origin


@pytest.mark.slow
def test_no_trace_leaves_the_server(client, langsmith_endpoint):
    """LANGSMITH_TRACING=true in the server's environment: after the runs, nothing was sent to
    the (stand-in) LangSmith endpoint."""
    thread = client.threads.create()["thread_id"]
    assert client.runs.wait(thread, "self_ask", input={"question": Q1}, context=SMALL)["answer"] == "Missoula, Montana"
    time.sleep(3)  # langsmith sends traces from a background thread
    assert not [r for r in LangSmithStandIn.seen if "/runs" in r], LangSmithStandIn.seen


@pytest.mark.slow
def test_an_mcp_client_lists_the_graphs_as_tools_and_calls_sunar(server):
    """What an MCP-speaking chat app gets at /mcp (langgraph-api's streamable HTTP endpoint, on by
    default), with the official ``mcp`` client: every graph is a tool whose input schema names the
    question, and calling ``sunar`` with a question returns its answer, confidence and evidence."""
    import asyncio

    from mcp import Client

    async def session():
        async with Client(f"{server}/mcp") as client:
            listed = await client.list_tools()
            return {t.name: t for t in listed.tools}, await client.call_tool("sunar", {"question": Q1})

    tools, called = asyncio.run(session())
    assert {"sunar", "sunar_no_asu", "sunar_r", "self_ask", "gensco", "gensco_stop", "ra_isf", "rag"} <= set(tools)
    schema = tools["sunar"].input_schema
    assert schema["type"] == "object" and "question" in schema["properties"]
    text = called.content[0].text
    assert not called.is_error and "Missoula, Montana" in text
    assert "'confidence':" in text and "'confidence_basis':" in text and "'evidence':" in text and "Ronnie Rocket" in text


BAD_QUESTIONS = [
    ({"question": ""}, "the question is empty; ask something like"),
    ({"messages": []}, 'no question was sent; send {"question": "..."}'),
    ({"question": "???"}, "the question has no letters or digits; ask a question in words"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("given", "message"), BAD_QUESTIONS)
def test_a_bad_question_gets_its_one_line_not_an_internal_error(client, given, message):
    """The LangGraph server passes on only a builtin error type's message (a SunarError is a
    RuntimeError); these once reached Studio as "An internal error occurred"."""
    thread = client.threads.create()["thread_id"]
    out = client.runs.wait(thread, "sunar", input=given, raise_error=False)
    error = (out or {}).get("__error__") or {}
    assert error.get("error") == "SunarError" and error.get("message", "").startswith(message), out


@pytest.mark.slow
def test_an_mcp_tool_called_with_a_bad_question_fails_as_an_error(server):
    """A tool error, not an answer; langgraph-api's MCP endpoint passes on only the error's type name
    (its runs API passes on the message: the test above)."""
    import asyncio

    from mcp import Client

    async def call():
        async with Client(f"{server}/mcp") as client:
            return await client.call_tool("self_ask", {"question": "   "})

    called = asyncio.run(call())
    assert called.is_error and [c.text for c in called.content] == ["SunarError"], called


@pytest.mark.slow
def test_the_a2a_endpoint_is_off(client, server):
    """langgraph.json turns off langgraph-api's A2A endpoint (its message-based protocol does not fit
    graphs that take a question and settings; untested surface is not served): /a2a/{assistant} is
    not found, while /mcp answers."""
    assistant = next(a for a in client.assistants.search(limit=50) if a["graph_id"] == "sunar")["assistant_id"]
    assert httpx.get(f"{server}/a2a/{assistant}").status_code == 404
    assert httpx.post(f"{server}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                      headers={"Accept": "application/json, text/event-stream"}).status_code == 200


@pytest.fixture(scope="module")
def slow_studio(tmp_path_factory, demo_index, langsmith_endpoint):
    """A server of its own whose oracle takes :data:`ORACLE_DELAY` s per answer and logs each call
    (its kind, one line): runs long enough to be stopped in the middle, and calls that can be counted."""
    folder = tmp_path_factory.mktemp("slow-server")
    calls = folder / "oracle.log"
    calls.write_text("")
    with studio_server(folder, langsmith_endpoint, SUNAR_INDEX_DIR=str(demo_index), SUNAR_ORACLE_DELAY=str(ORACLE_DELAY),
                       SUNAR_ORACLE_LOG=str(calls)) as (proc, url):
        yield proc, url, calls


ORACLE_DELAY = 0.5


def oracle_calls(log: Path) -> list[str]:
    return log.read_text().split()


def last_change(log: Path, since: float, watch: float) -> float:
    """Watch ``log`` for ``watch`` s; the seconds from ``since`` to its last growth (0: none)."""
    size, changed = len(oracle_calls(log)), since
    while time.monotonic() - since < watch:
        if len(oracle_calls(log)) != size:
            size, changed = len(oracle_calls(log)), time.monotonic()
        time.sleep(0.02)
    return changed - since


def wait_for(condition, seconds: float, step: float = 0.05) -> float:
    """Seconds until ``condition()`` holds; fails after ``seconds``."""
    start = time.monotonic()
    while not condition():
        assert time.monotonic() - start < seconds, f"not within {seconds} s"
        time.sleep(step)
    return time.monotonic() - start


@pytest.mark.slow
def test_a_run_cancelled_as_studios_stop_does_stops_computing_and_its_thread_resumes(slow_studio):
    """POST /threads/{t}/runs/{r}/cancel (what Studio's Stop sends) in the middle of NAR: the run is
    interrupted at once, the oracle is asked nothing more after the step in flight, and the same
    thread, run again with no input, goes on from its last checkpoint to the answer."""
    from langgraph_sdk import get_sync_client

    _, url, log = slow_studio
    client = get_sync_client(url=url, headers=STUDIO, api_key=None)
    thread = client.threads.create()["thread_id"]
    start = len(oracle_calls(log))
    run = client.runs.create(thread, "sunar", input={"question": Q1}, config={"configurable": SMALL}, stream_mode=["values", "messages-tuple"])
    wait_for(lambda: oracle_calls(log)[start:].count("answer") >= 3, 60)  # sub-answers sampled: NAR is under way
    asked = time.monotonic()
    client.runs.cancel(thread, run["run_id"])  # action "interrupt", as Studio's Stop
    interrupted = wait_for(lambda: client.runs.get(thread, run["run_id"])["status"] == "interrupted", 10, 0.02)
    last_call = last_change(log, asked, watch=6.0)
    print(f"\ncancel: run interrupted {interrupted:.2f} s after the request; the model's last call began {last_call:.2f} s after it")
    assert interrupted < 3 and last_call < ORACLE_DELAY  # the step in flight stops at its next token
    assert client.threads.get_state(thread)["next"]  # stopped with steps to go

    before = len(oracle_calls(log))
    out = client.runs.wait(thread, "sunar", input=None, config={"configurable": SMALL})
    assert out["answer"] == "Missoula, Montana"
    resumed = oracle_calls(log)[before:]
    assert resumed.count("self_ask") < 3  # it went on: the first follow-up was not asked again


@pytest.mark.slow
def test_sigterm_ends_run_studio_within_5_s_with_a_run_in_flight(slow_studio):
    """SIGTERM to ``./run studio`` (the langgraph dev process it becomes) while a run computes: the
    server is gone within 5 s."""
    from langgraph_sdk import get_sync_client

    proc, url, log = slow_studio
    client = get_sync_client(url=url, headers=STUDIO, api_key=None)
    thread = client.threads.create()["thread_id"]
    start = len(oracle_calls(log))
    client.runs.create(thread, "sunar", input={"question": Q2}, config={"configurable": SMALL})
    wait_for(lambda: oracle_calls(log)[start:].count("answer") >= 2, 60)
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    took = time.monotonic() - sent
    print(f"\nSIGTERM: ./run studio ended {took:.2f} s after the signal")
    assert took < 5
    try:
        os.killpg(proc.pid, 0)
    except ProcessLookupError:
        return  # no process of its group is left either
    pytest.fail("a process of ./run studio's group outlived it")
