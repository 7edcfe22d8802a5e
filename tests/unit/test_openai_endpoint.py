"""The OpenAI-compatible endpoint (``sunar serve-openai``) in this process, its graphs run on the
scripted models of tests/fakes.py: the evidence as Open WebUI's citations, streamed and not; the
final answer's tokens as they are written; bodies over the limit refused before they are read;
a run stopped when its client leaves or the server shuts down, within a token of a generation.
tests/integration/test_openai_api.py runs the real server with the real scorer and stores."""

import argparse
import asyncio
import contextlib
import errno
import json
import socket
import sqlite3
import threading
import time

import httpx
import pytest
import uvicorn
from starlette.testclient import TestClient

from fakes import MemoryIndex, TableScorer, docs, prompt_kind, resources, scripted_llm, self_ask_script
from sunar import cli
from sunar.cancel import STOP, stoppable
from sunar.errors import DiskFull, RunCancelled
from sunar.models.llama_cpp import stop_between_tokens
from sunar.server import openai_api
from sunar.server.openai_api import MAX_BODY, checked, create_app, failure, run_events
from sunar.server.served import served

CORPUS = docs(
    ("d1", "Ronnie Rocket", "Ronnie Rocket is an unfinished film by David Lynch."),
    ("d2", "David Lynch", "David Lynch was born in Missoula, Montana."),
    ("d3", "Eraserhead", "Eraserhead is a film."),
)
Q = "Where was the director of film Ronnie Rocket born?"
ANSWERS = {"Who directed Ronnie Rocket?": "David Lynch", "Where was David Lynch born?": "Missoula, Montana"}
STEPS = ["Follow up: Who directed Ronnie Rocket?", "Follow up: Where was David Lynch born?", "So the final answer is: Missoula, Montana"]
MER = "[Answer]: Document 1 says David Lynch wrote it; document 2 says he was born in Missoula.\n[Final Answer]: {answer}"
SMALL = {"batch_size": 2, "budget": 3, "samples": 3}
ASK = {"model": "sunar", "messages": [{"role": "user", "content": Q}], "sunar": SMALL}
#: The reply's evidence list and the citations: the pages the reasoning used first, marked, then the rest, with
#: the scorer's scores (here the scorer's order too).
CITED = [("d1", "Ronnie Rocket", 0.9), ("d2", "David Lynch", 0.8), ("d3", "Eraserhead", 0.1)]
USED = {"d1": "used by step 1", "d2": "used by step 2 and the final answer"}


def answering_llm(mer: str = MER):
    return scripted_llm(self_ask_script(STEPS), lambda question, i: ANSWERS.get(question, "Missoula, Montana"), mer=mer)


def scripted_graphs(llm) -> dict:
    """The served graph on ``llm`` and the scripted index and scorer."""
    index = MemoryIndex(CORPUS, default_ranking=[("d1", 2.0), ("d2", 1.5), ("d3", 1.0)], graph={"d1": ["d2"], "d2": ["d1", "d3"]})
    res = resources(llm, TableScorer({i: s for i, _, s in CITED}), index)
    return {"sunar": served("sunar").with_config(configurable={"resources": res})}


@pytest.fixture(scope="module")
def app():
    app = create_app()
    app.state.graphs = scripted_graphs(answering_llm())
    return app


@pytest.fixture
def client(app):
    with TestClient(app, base_url="http://127.0.0.1") as client:  # the endpoint answers the loopback only
        yield client


def assert_cited(sources):
    """Open WebUI's source objects for the cited passages, in the order of the reply's [n], a used page's name saying how it was used."""
    assert [(s["metadata"][0]["source"], s["distances"][0]) for s in sources] == [(doc_id, score) for doc_id, _, score in CITED]
    for s, (doc_id, title, score) in zip(sources, CITED, strict=True):
        name = f"{title} — {USED[doc_id]}" if doc_id in USED else title
        assert s["source"] == {"id": doc_id, "name": name} and s["document"] == [CORPUS[doc_id].text]
        assert s["metadata"] == [{"source": doc_id, "name": name, "used": doc_id in USED, "score": score}]


def test_streamed_the_answers_tokens_come_as_written_then_the_citations_then_the_reply(client):
    with client.stream("POST", "/v1/chat/completions", json={**ASK, "stream": True}) as response:
        assert response.status_code == 200
        lines = [line for line in response.iter_lines() if line]
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line.removeprefix("data: ")) for line in lines[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    kinds = ["source" if "event" in c else next(iter(c["choices"][0]["delta"]), "end") for c in chunks]
    steps = [c["choices"][0]["delta"]["reasoning_content"] for c in chunks if c["choices"] and "reasoning_content" in c["choices"][0]["delta"]]

    # MER's reply, in several chunks as the scripted model writes it, then the step's own line
    first = next(i for i, s in enumerate(steps) if s.startswith("[final] "))
    after = next(i for i in range(first + 1, len(steps)) if steps[i].startswith("\n["))
    assert after - first > 2 and "".join(steps[first:after]) == "[final] " + MER.format(answer="Missoula, Montana")
    assert steps[first - 1].startswith("[gather] ") and steps[after] == "\n[final] final answer: Missoula, Montana\n"

    # then the citations, as Open WebUI's source events in chunks without choices, then the reply
    assert kinds[-5:] == ["source"] * 3 + ["content", "end"]
    assert kinds.index("source") > max(i for i, k in enumerate(kinds) if k == "reasoning_content")
    events = [c["event"] for c in chunks if "event" in c]
    assert all(e["type"] == "source" for e in events) and all(c["choices"] == [] for c in chunks if "event" in c)
    assert_cited([e["data"] for e in events])
    content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert content.startswith("Missoula, Montana\n")
    assert content.endswith(  # for every other client
        "Evidence:\n[1] Ronnie Rocket (d1) — used by step 1\n[2] David Lynch (d2) — used by step 2 and the final answer\n[3] Eraserhead (d3)"
    )


def test_not_streamed_the_citations_are_the_completions_sources(client):
    out = client.post("/v1/chat/completions", json=ASK).json()
    assert out["object"] == "chat.completion"
    message = out["choices"][0]["message"]
    assert message["content"].startswith("Missoula, Montana\n") and "\n[1] Ronnie Rocket (d1) — used by step 1\n" in message["content"]
    assert "\n[final] " + MER.format(answer="Missoula, Montana") + "\n[final] final answer: " in message["reasoning_content"]
    assert_cited(out["sources"])


def call(app, headers: list[tuple[bytes, bytes]], parts: list[bytes]) -> tuple[int, dict, int]:
    """POST /v1/chat/completions straight through ASGI, the body in ``parts``: (status, the JSON
    answer, how many parts the app read)."""
    read, sent = 0, []

    async def receive():
        nonlocal read
        if read == len(parts):
            return {"type": "http.disconnect"}
        read += 1
        return {"type": "http.request", "body": parts[read - 1], "more_body": read < len(parts)}

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": "/v1/chat/completions", "raw_path": b"/v1/chat/completions", "root_path": "", "query_string": b"",
        "headers": [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json"), *headers],
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
    }
    asyncio.run(app(scope, receive, send))
    return sent[0]["status"], json.loads(b"".join(m.get("body", b"") for m in sent[1:])), read


def assert_too_large(status: int, answer: dict) -> None:
    error = answer["error"]
    assert status == 413 and error["message"] == f"the request body is larger than {MAX_BODY} bytes"
    assert error["type"] == "invalid_request_error" and error["code"] == "request_too_large"


def disk_fills_at_mer(llm, filename: str) -> dict[str, bool]:
    """Make ``llm``'s MER calls fail as a write to ``filename`` on a full disk would, while the
    returned flag's ``full`` is true (set it false: space was freed)."""
    script, disk = llm.chat.script, {"full": True}

    def filling(prompt: str, i: int) -> str:
        if disk["full"] and prompt_kind(prompt) == "mer":
            raise OSError(errno.ENOSPC, "No space left on device", filename)
        return script(prompt, i)

    llm.chat.script = filling
    return disk


def test_a_full_disk_is_507_with_the_fix_streamed_or_not():
    """A write that fails for want of space mid-run (here as MER starts) ends the run with 507
    Insufficient Storage and the line that says to free space, not a bug's "unexpected OSError"."""
    llm = answering_llm()
    disk_fills_at_mer(llm, "/data/threads.sqlite-wal")
    app = create_app()
    app.state.graphs = scripted_graphs(llm)
    fix = "the disk is full writing /data/threads.sqlite-wal: free some space and send the question again (on the same thread"
    with TestClient(app, base_url="http://127.0.0.1") as client:
        out = client.post("/v1/chat/completions", json=ASK)
        assert out.status_code == 507 and out.json()["error"]["message"].startswith(fix)
        with client.stream("POST", "/v1/chat/completions", json={**ASK, "stream": True}) as response:
            lines = [line for line in response.iter_lines() if line]
    assert lines[-1] == "data: [DONE]" and json.loads(lines[-2].removeprefix("data: "))["error"]["message"].startswith(fix)
    assert failure(sqlite3.OperationalError("database or disk is full"))[0] == 507
    assert failure(DiskFull("the disk is full: free some space"))[0] == 507
    assert failure(OSError(errno.EACCES, "Permission denied"))[0] == 500


def test_a_body_declared_over_the_limit_is_refused_before_a_byte_is_read(app):
    status, answer, read = call(app, [(b"content-length", str(MAX_BODY + 1).encode())], [b" " * (MAX_BODY + 1)])
    assert_too_large(status, answer)
    assert read == 0


def test_a_chunked_body_is_read_only_until_it_passes_the_limit(app):
    part = 64 * 1024
    status, answer, read = call(app, [(b"transfer-encoding", b"chunked")], [b" " * part] * 40)  # 2.6 MB
    assert_too_large(status, answer)
    assert read == MAX_BODY // part + 1  # the part that passed it, no more
    # a body of the limit exactly is read and answered
    body = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": Q}]}).encode()
    status, answer, read = call(app, [(b"transfer-encoding", b"chunked")], [body, b" " * (MAX_BODY - len(body))])
    assert status == 404 and answer["error"]["message"].startswith("the model 'gpt-4o' does not exist") and read == 2


# --- stopping: a client that leaves, a stop inside one generation, the server's shutdown -------

#: Seconds the slow scripted model takes per token: a whole run of it lasts 2.3 s, MER starting at 1.2 s.
SLOW = 0.05


@pytest.fixture
def slow():
    """A fresh app whose scripted model writes a token every :data:`SLOW` seconds, and that model."""
    llm = answering_llm()
    llm.chat.delay = SLOW
    app = create_app()
    app.state.graphs = scripted_graphs(llm)
    return app, llm


@contextlib.contextmanager
def serving(app, grace: float = 1.0):
    """uvicorn serving ``app`` in a thread on a free loopback port: (its URL, the server, the
    thread); stopped as SIGTERM stops it (``should_exit``)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", log_config=None, timeout_graceful_shutdown=grace))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    assert wait_until(lambda: server.started, 10)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", server, thread
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def run_threads() -> list[threading.Thread]:
    """The endpoint's worker threads still alive (run_events names them sunar-<graph>)."""
    return [t for t in threading.enumerate() if t.name.startswith("sunar-")]


def assert_writes_no_more(llm) -> None:
    written = len(llm.chat.streamed)
    time.sleep(5 * SLOW)
    assert len(llm.chat.streamed) == written


def test_a_client_leaving_a_not_streamed_request_stops_its_run(slow):
    app, llm = slow
    with serving(app) as (url, _, _), httpx.Client(trust_env=False) as client:
        with pytest.raises(httpx.ReadTimeout):  # the client gives up after 0.5 s and closes its connection
            client.post(f"{url}/v1/chat/completions", json=ASK, timeout=0.5)
        assert llm.chat.streamed  # the run was writing
        assert wait_until(lambda: not run_threads() and not app.state.running, 1.5)  # unstopped, it ends 1.8 s later
        assert_writes_no_more(llm)
    assert not any(prompt_kind(c) == "mer" for c in llm.calls)  # stopped long before its answer (MER starts after 1.2 s)


def test_a_stop_in_the_middle_of_one_slow_generation_ends_it_before_its_last_token():
    """The run's stop flag reaches the model in the thread LangGraph runs the node in (a copy of
    the worker's context): MER's long reply, set slow, is stopped 0.3 s in, and the run ends with
    RunCancelled as soon as the generation does."""
    long_mer = "[Answer]: " + "the documents say so, " * 15 + "\n[Final Answer]: {answer}"
    llm = answering_llm(mer=long_mer)
    script, seen, running = llm.chat.script, {}, set()

    def slow_mer(prompt: str, i: int) -> str:
        if prompt_kind(prompt) == "mer":
            llm.chat.delay = SLOW
            seen.update(thread=threading.current_thread().name, stop=STOP.get(), written=len(llm.chat.streamed))
            seen["registered"] = seen["stop"] in running
            threading.Timer(0.3, seen["stop"].set).start()  # what a leaving client or the shutdown does
        return script(prompt, i)

    llm.chat.script = slow_mer

    async def run() -> list:
        return [event async for event in run_events(checked(ASK, scripted_graphs(llm)), running)]

    events = asyncio.run(run())
    assert seen["registered"] and seen["thread"] != "sunar-sunar" and seen["thread"] != threading.current_thread().name
    kind, error = events[-1]
    assert kind == "error" and isinstance(error, RunCancelled)
    assert failure(error) == (503, "the run was stopped: its client went away or the server is shutting down")
    mer_tokens = llm.chat.streamed[seen["written"]:]
    assert 0 < len(mer_tokens) < len(long_mer.format(answer="Missoula, Montana").split())  # it began, and ended before its last token
    assert not running and seen["stop"].is_set()


def test_the_embedded_models_generation_stops_between_two_tokens():
    """The wrapper the embedded model puts on llama.cpp's ``generate``, on a stand-in (no model is
    loaded): a stopped run ends at the next token; outside a stoppable run nothing changes."""

    class Llama:
        def generate(self, tokens, **kwargs):
            yield from range(100)

    llama, stop, got = Llama(), threading.Event(), []
    stop_between_tokens(llama)
    with stoppable(stop), pytest.raises(RunCancelled):
        for token in llama.generate([1, 2], temp=0.0):
            got.append(token)
            if token == 4:
                stop.set()
    assert got == [0, 1, 2, 3, 4]
    assert list(llama.generate([1])) == list(range(100))


def test_the_servers_shutdown_stops_a_run_in_flight(slow):
    """What SIGTERM does to ``sunar serve-openai``: the server is gone in its grace and a little
    more, and the run with it, though the request was still being answered."""
    app, llm = slow
    with serving(app, grace=0.5) as (url, server, thread):

        def ask() -> None:
            with httpx.Client(trust_env=False) as client, contextlib.suppress(httpx.HTTPError):
                client.post(f"{url}/v1/chat/completions", json=ASK, timeout=10)

        threading.Thread(target=ask, daemon=True).start()
        assert wait_until(lambda: llm.chat.streamed, 5)
        begun = time.monotonic()
        server.should_exit = True  # uvicorn's SIGTERM handler
        thread.join(5)
        assert not thread.is_alive() and time.monotonic() - begun < 2
        assert wait_until(lambda: not run_threads(), 1)
        assert_writes_no_more(llm)


def test_the_apps_shutdown_sets_every_running_runs_stop_flag(app):
    stop = threading.Event()
    with TestClient(app, base_url="http://127.0.0.1"):
        app.state.running.add(stop)
        assert not stop.is_set()
    assert stop.is_set()
    app.state.running.discard(stop)


def test_serve_openai_gives_uvicorn_a_short_graceful_shutdown(monkeypatch):
    seen = {}
    monkeypatch.setattr(openai_api, "create_app", lambda checkpointer=None: "the app")
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: seen.update(options, app=app))
    assert cli.cmd_serve_openai(argparse.Namespace(port=8765, checkpoints="")) == 0
    assert seen["app"] == "the app" and seen["host"] == "127.0.0.1" and 0 < seen["timeout_graceful_shutdown"] <= 3
