"""Every graph as an OpenAI-compatible chat model (``sunar serve-openai``), for any chat app that
talks to OpenAI's API: ``GET /v1/models`` lists the graphs, ``POST /v1/chat/completions`` answers
with the graph the request's ``model`` names, streamed (server-sent ``chat.completion.chunk``
events ending with ``data: [DONE]``) or not.

The request's messages are the graph's ``messages``: the last user message is the question, the
earlier turns go with it. The steps (sub-questions, evidence found, intermediate and final
answers, confidence; the lines of ``sunar ask --stream``) are sent as they happen as
``reasoning_content``, which chat apps show as the model's thinking; ``content`` is the reply
alone (answer, confidence, reasoning path, cited evidence), so the conversation a client sends
back holds the answers, not the steps. The tokens of the LLM call that writes the final answer
(the graph's ``answer_node``: MER; without MER, the answer call made when Self-Ask ended without
one) are sent among the steps as they are generated, as ``sunar ask --stream`` shows them. The
reply itself cannot come token by token: it starts with the answer as the later steps leave it
(the chains' vote, "I don't know" below ``min_trust``) and the confidence measured after it, and
MER's tokens are a JSON object with the rationale first. The cited evidence also goes as Open
WebUI's own citations (:func:`sources_of`).

What a client may set is what it may set on the LangGraph server (:mod:`sunar.served`): the
fields of :data:`~sunar.served.ClientConfiguration`, as an object in the request's extra
``sunar`` field (``extra_body={"sunar": {"budget": 8}}`` with the ``openai`` client). The
operator's fields (model, index, URLs: :data:`~sunar.served.OPERATOR_ENV`) come from the
server's environment. OpenAI's own sampling fields (temperature, max_tokens, ...) are ignored:
the algorithm has its own. A run stops when its client leaves, streamed or not, and when the
server shuts down, within a token even in the middle of an LLM generation (:mod:`sunar.cancel`). Bad requests get OpenAI's error object with a one-line message; a body
over :data:`MAX_BODY` gets 413 before it is read whole. The server answers on 127.0.0.1 only, with
:func:`sunar.served.local_only`'s Host/Origin policy and langgraph.json's CORS origins.

It is written on Starlette (already installed with langgraph-api) rather than with
langgraph-openai-serve, whose pins do fit ours: that package (6,500 lines with background runs,
Postgres, Hatchet and tracing) streams every LLM token of a run as the reply's content (here:
Self-Ask's drafts, the m samples, the NLI judge's verdicts) and node updates as status events,
while this product's steps are its own ``describe_step`` lines and its reply is the ``respond``
node's message; the part it needs is the ~300 lines below.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import threading
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph_sdk import Auth
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from sunar.cancel import raise_if_stopped, stoppable
from sunar.configuration import Configuration
from sunar.errors import ModelUnavailable, RunCancelled, SunarError
from sunar.graph import GRAPH_NAMES, GRAPHS, GraphKind
from sunar.models.specs import check_specs
from sunar.question import validate_question
from sunar.served import LOCAL_ORIGIN, STUDIO_ORIGINS, ClientConfiguration, local_only, operator_settings, served
from sunar.streaming import stream_steps

log = logging.getLogger("sunar")
ROLES = {"user": HumanMessage, "assistant": AIMessage, "system": SystemMessage, "developer": SystemMessage}
STARTED = int(time.time())
#: The largest request body read (1 MB): a long conversation's text is far below it, and a client
#: cannot make the server hold more in memory (pictures in a request are dropped anyway).
MAX_BODY = 1_000_000


class BadRequest(Exception):
    """A request the endpoint refuses: OpenAI's error object with this status and one line."""

    def __init__(self, status: int, message: str, code: str | None = None):
        super().__init__(message)
        self.status, self.code = status, code


def error(status: int, message: str, kind: str = "invalid_request_error", code: str | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "param": None, "code": code}}, status_code=status)


@dataclass
class Job:
    """One chat request, checked: the graph, the conversation and the client's settings."""

    name: str
    kind: GraphKind
    graph: Any
    messages: list[BaseMessage]
    context: Any


def text_of(content: Any, i: int) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):
        return "".join(str(p.get("text", "")) for p in content if p.get("type") == "text")
    raise BadRequest(400, f"messages[{i}].content must be text or a list of content parts")


def checked(body: Any, graphs: dict[str, Any]) -> Job:
    """The request as a :class:`Job`, or a :class:`BadRequest` saying what is wrong with it."""
    if not isinstance(body, dict):
        raise BadRequest(400, "the request body must be a JSON object")
    name = body.get("model")
    if name not in graphs:
        raise BadRequest(404, f"the model {name!r} does not exist; choose one of: {', '.join(GRAPH_NAMES)}", "model_not_found")
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise BadRequest(400, "messages must be a non-empty list of {role, content} objects")
    messages: list[BaseMessage] = []
    for i, m in enumerate(raw):
        role = m.get("role") if isinstance(m, dict) else None
        if role not in ROLES and role != "tool":
            raise BadRequest(400, f"messages[{i}].role must be one of: {', '.join(ROLES)}")
        if role != "tool":  # the graphs call no tools
            messages.append(ROLES[role](content=text_of(m.get("content"), i)))
    users = [m for m in messages if isinstance(m, HumanMessage)]
    if not users:
        raise BadRequest(400, "no user message: the last user message is the question")
    settings = body.get("sunar") or {}
    if not isinstance(settings, dict):
        raise BadRequest(400, "sunar must be an object of settings, e.g. {\"budget\": 8}")
    try:
        users[-1].content = validate_question(users[-1].content)
        context = ClientConfiguration(**settings)
    except SunarError as exc:
        raise BadRequest(400, str(exc)) from None
    return Job(name, GRAPHS[name], graphs[name], messages, context)


async def run_events(job: Job, running: set[threading.Event]) -> AsyncIterator[tuple[str, Any]]:
    """Run the graph in a worker thread; yield ("step", text) as each step ends and as the answer
    node's LLM writes each token, then ("done", final state) or ("error", exception). The run's
    stop flag is in ``running`` while it goes (the app's shutdown sets them all) and is set when
    the caller leaves early; once set, the run ends with :class:`RunCancelled` at its next step or
    token, inside a generation too (:mod:`sunar.cancel`; :func:`sunar.streaming.stream_steps`,
    with the text sent instead of printed)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    stop = threading.Event()

    def put(kind: str, value: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed (the server stopped): nobody waits
            loop.call_soon_threadsafe(queue.put_nowait, (kind, value))

    def emit(text: str) -> None:
        raise_if_stopped()
        put("step", text)

    def work() -> None:
        try:
            payload, config = {"messages": job.messages}, {"recursion_limit": 1000}
            with stoppable(stop):
                put("done", stream_steps(job.graph, payload, config, job.kind.describe, job.kind.answer_node, emit, context=job.context))
        except BaseException as exc:  # reported to the client, if still there, as one line
            put("error", exc)

    running.add(stop)
    threading.Thread(target=work, name=f"sunar-{job.name}", daemon=True).start()
    try:
        while True:
            kind, value = await queue.get()
            yield kind, value
            if kind != "step":
                return
    finally:
        stop.set()
        running.discard(stop)


async def collected(job: Job, running: set[threading.Event]) -> tuple[list[str], tuple[str, Any]]:
    """A whole run (:func:`run_events`): its steps' text and how it ended (read to its end, so
    the run leaves ``running`` at once)."""
    steps: list[str] = []
    end: tuple[str, Any] = ("error", RuntimeError("the run ended without a result"))
    async for kind, value in run_events(job, running):
        if kind == "step":
            steps.append(value)
        else:
            end = (kind, value)
    return steps, end


async def disconnected(request: Request) -> None:
    """Return once the client has gone. The body has been read, so the next ASGI message is
    ``http.disconnect`` (Starlette's StreamingResponse listens for it the same way); waiting for it
    notices at once what polling ``request.is_disconnected()`` would notice a poll later."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


def failure(exc: BaseException) -> tuple[int, str]:
    """A failed run's status and one line (a bug's traceback goes to the server's log only)."""
    if isinstance(exc, SunarError):
        return (503 if isinstance(exc, ModelUnavailable | RunCancelled) else 500), str(exc)
    log.error("a run failed", exc_info=exc)
    first = str(exc).splitlines()[0] if str(exc) else ""
    return 500, f"unexpected {type(exc).__name__}: {first} (the server's log has the details)"


def reply_of(state: dict[str, Any]) -> tuple[str, dict[str, int]]:
    """The reply message's text and the run's token usage."""
    ai = [m for m in state.get("messages") or [] if getattr(m, "type", "") == "ai"]
    used = state.get("usage") or {}
    prompt, generated = int(used.get("prompt_tokens", 0)), int(used.get("generated_tokens", 0))
    return (str(ai[-1].content) if ai else str(state.get("answer", ""))), {
        "prompt_tokens": prompt, "completion_tokens": generated, "total_tokens": prompt + generated,
    }


def sources_of(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The cited evidence as Open WebUI's citations (Open WebUI 0.12.4), one source per passage in
    the order of the reply's ``[n]`` list: Open WebUI numbers the sources by ``metadata.source``
    (here the document's id), turns the ``[n]`` of the reply into a chip for the n-th, shows its
    ``metadata.name`` (the title), its ``document`` (the text) and ``distances`` as relevance (the
    scorer's score). Streamed, each is the ``data`` of a ``source`` event in a chunk's top-level
    ``event`` field, which Open WebUI's middleware passes to the chat and stores with the message;
    not streamed, the list is the completion's top-level ``sources``, which its page reads from a
    completion. Other clients ignore both fields. A score JSON cannot hold (GenSco's -inf
    log-likelihood) is left out."""
    sources = []
    for e in state.get("evidence") or []:
        score = e.get("score")
        scored = {"score": score} if isinstance(score, int | float) and math.isfinite(score) else {}
        sources.append({
            "source": {"id": e["id"], "name": e["title"]},
            "document": [e["text"]],
            "metadata": [{"source": e["id"], "name": e["title"], **scored}],
            **({"distances": [score]} if scored else {}),
        })
    return sources


async def read_body(request: Request) -> bytes:
    """The request's body, or a 413 :class:`BadRequest` as soon as it is known to pass
    :data:`MAX_BODY`: by its Content-Length before a byte is read, else (a chunked body, or a
    Content-Length that lies) once the bytes read pass it."""
    too_large = BadRequest(413, f"the request body is larger than {MAX_BODY} bytes", "request_too_large")
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > MAX_BODY:
        raise too_large
    body = bytearray()
    async for part in request.stream():
        body += part
        if len(body) > MAX_BODY:
            raise too_large
    return bytes(body)


async def models(request: Request) -> JSONResponse:
    return JSONResponse({"object": "list", "data": [{"id": n, "object": "model", "created": STARTED, "owned_by": "sunar"} for n in GRAPH_NAMES]})


async def chat_completions(request: Request) -> Any:
    try:
        body = json.loads(await read_body(request))
    except ValueError as exc:
        return error(400, f"the request body is not JSON ({exc})")
    except BadRequest as exc:
        return error(exc.status, str(exc), code=exc.code)
    try:
        job = checked(body, request.app.state.graphs)
    except BadRequest as exc:
        return error(exc.status, str(exc), code=exc.code)
    head = {"id": f"chatcmpl-{uuid.uuid4().hex}", "created": int(time.time()), "model": job.name}
    if body.get("stream"):
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return StreamingResponse(stream(job, head, usage, request.app.state.running), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
    # Not streamed, nothing is sent until the run ends, so the client's leaving is watched for
    # alongside it; either way the other task is cancelled, which stops a run still going.
    run = asyncio.ensure_future(collected(job, request.app.state.running))
    gone = asyncio.ensure_future(disconnected(request))
    try:
        done, _ = await asyncio.wait({run, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        run.cancel()
        gone.cancel()
    if run not in done:
        return Response(status_code=499)  # "client closed request": nobody reads it
    steps, (kind, value) = run.result()
    if kind == "error":
        status, message = failure(value)
        return error(status, message, "server_error")
    text, used = reply_of(value)
    sources = sources_of(value)
    message = {"role": "assistant", "content": text, "reasoning_content": "".join(steps)}
    choices = [{"index": 0, "message": message, "finish_reason": "stop"}]
    return JSONResponse({**head, "object": "chat.completion", "choices": choices, "usage": used, "sources": sources})


async def stream(job: Job, head: dict[str, Any], include_usage: bool, running: set[threading.Event]) -> AsyncIterator[str]:
    """The run as server-sent chunks: the steps as ``reasoning_content``, then the cited evidence
    as Open WebUI's ``source`` events (chunks without choices, like OpenAI's usage chunk) and the
    reply as ``content``; a failure as an ``error`` event; always ``data: [DONE]`` last. A client
    that leaves ends this generator (Starlette listens for the disconnect), which stops the run."""

    def event(data: dict[str, Any]) -> str:
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return event({**head, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    yield chunk({"role": "assistant", "content": ""})
    async for kind, value in run_events(job, running):
        if kind == "step":
            yield chunk({"reasoning_content": value})
        elif kind == "error":
            yield event({"error": {"message": failure(value)[1], "type": "server_error", "param": None, "code": None}})
        else:
            text, used = reply_of(value)
            for source in sources_of(value):
                yield event({**head, "object": "chat.completion.chunk", "choices": [], "event": {"type": "source", "data": source}})
            yield chunk({"content": text})
            yield chunk({}, "stop")
            if include_usage:
                yield event({**head, "object": "chat.completion.chunk", "choices": [], "usage": used})
    yield "data: [DONE]\n\n"


class LocalOnly:
    """ASGI middleware: every request passes :func:`sunar.served.local_only` (addressed to the
    loopback, from no web page or an allowed one's) or gets 403."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            try:
                await local_only(dict(Headers(scope=scope).raw))
            except Auth.exceptions.HTTPException as exc:
                await error(exc.status_code, str(exc.detail), "permission_error")(scope, receive, send)
                return
        await self.app(scope, receive, send)


@contextlib.asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    """At shutdown, stop every run still going (``app.state.running``): a worker thread inside a
    long generation would otherwise keep computing while the server exits."""
    yield
    for stop in list(app.state.running):
        stop.set()


def create_app() -> Starlette:
    """The endpoint's app. The operator's settings (SUNAR_LLM, ...) are checked first: a typo is
    one :class:`SunarError` line before the server starts."""
    check_specs(Configuration.resolve(operator_settings()).values())
    app = Starlette(
        lifespan=lifespan,
        routes=[Route("/v1/models", models, methods=["GET"]), Route("/v1/chat/completions", chat_completions, methods=["POST"])],
        middleware=[
            Middleware(LocalOnly),
            Middleware(CORSMiddleware, allow_origins=list(STUDIO_ORIGINS), allow_origin_regex=LOCAL_ORIGIN, allow_methods=["GET", "POST"], allow_headers=["*"]),
        ],
    )
    app.state.graphs = {name: served(name) for name in GRAPH_NAMES}
    app.state.running = set()  # the stop flags of the runs going (run_events)
    return app
