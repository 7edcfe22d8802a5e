"""The OpenAI-compatible endpoint (``sunar serve-openai``) in this process, its graphs run on the
scripted models of tests/fakes.py: the evidence as Open WebUI's citations, streamed and not; the
final answer's tokens as they are written; bodies over the limit refused before they are read.
tests/integration/test_openai_api.py runs the real server with the real scorer and stores."""

import asyncio
import json

import pytest
from starlette.testclient import TestClient

from fakes import MemoryIndex, TableScorer, docs, resources, scripted_llm, self_ask_script
from sunar.openai_api import MAX_BODY, create_app
from sunar.served import served

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
#: The reply's evidence list and the citations: the scorer's order, with its scores.
CITED = [("d1", "Ronnie Rocket", 0.9), ("d2", "David Lynch", 0.8), ("d3", "Eraserhead", 0.1)]


@pytest.fixture(scope="module")
def app():
    llm = scripted_llm(self_ask_script(STEPS), lambda question, i: ANSWERS.get(question, "Missoula, Montana"), mer=MER)
    index = MemoryIndex(CORPUS, default_ranking=[("d1", 2.0), ("d2", 1.5), ("d3", 1.0)], graph={"d1": ["d2"], "d2": ["d1", "d3"]})
    res = resources(llm, TableScorer({i: s for i, _, s in CITED}), index)
    app = create_app()
    app.state.graphs = {"sunar": served("sunar").with_config(configurable={"resources": res})}
    return app


@pytest.fixture
def client(app):
    with TestClient(app, base_url="http://127.0.0.1") as client:  # the endpoint answers the loopback only
        yield client


def assert_cited(sources):
    """Open WebUI's source objects for the cited passages, in the order of the reply's [n]."""
    assert [(s["metadata"][0]["source"], s["metadata"][0]["name"], s["distances"][0]) for s in sources] == CITED
    for s, (doc_id, title, score) in zip(sources, CITED, strict=True):
        assert s["source"] == {"id": doc_id, "name": title} and s["document"] == [CORPUS[doc_id].text]
        assert s["metadata"] == [{"source": doc_id, "name": title, "score": score}]


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
    assert content.endswith("Evidence:\n[1] Ronnie Rocket (d1)\n[2] David Lynch (d2)\n[3] Eraserhead (d3)")  # for every other client


def test_not_streamed_the_citations_are_the_completions_sources(client):
    out = client.post("/v1/chat/completions", json=ASK).json()
    assert out["object"] == "chat.completion"
    message = out["choices"][0]["message"]
    assert message["content"].startswith("Missoula, Montana\n") and "\n[1] Ronnie Rocket (d1)\n" in message["content"]
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
