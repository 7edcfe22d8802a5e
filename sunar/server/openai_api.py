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
(the rules, the check and a second decomposition, "I don't know" below ``min_trust``) and the confidence measured after it, and
MER's tokens are a JSON object with the rationale first. The cited evidence also goes as Open
WebUI's own citations (:func:`sunar.server.openai_runs.sources_of`).

What a client may set is what it may set on the LangGraph server (:mod:`sunar.server.served`): the
fields of :data:`~sunar.server.served.ClientConfiguration`, as an object in the request's extra
``sunar`` field (``extra_body={"sunar": {"budget": 8}}`` with the ``openai`` client). The
operator's fields (model, index, URLs: :data:`~sunar.server.served.OPERATOR_ENV`) come from the
server's environment. OpenAI's own sampling fields (temperature, max_tokens, ...) are ignored:
the algorithm has its own. A request may name a conversation thread (:mod:`sunar.server.openai_request`),
kept in the server's checkpointer (``--checkpoints``: SQLite, or PostgreSQL shared by several
server processes), where a run the server did not finish resumes (:mod:`sunar.server.openai_runs`). A run
stops when its client leaves, streamed or not, and when the server shuts down, within a token even
in the middle of an LLM generation (:mod:`sunar.cancel`). Bad requests get OpenAI's error object
with a one-line message; a body over :data:`MAX_BODY` gets 413 before it is read whole. The server
answers on 127.0.0.1 only, with :func:`sunar.server.served.local_only`'s Host/Origin policy and
langgraph.json's CORS origins.

It is written on Starlette (already installed with langgraph-api) rather than with
langgraph-openai-serve, whose pins do fit ours: that package (6,500 lines with background runs,
Postgres, Hatchet and tracing) streams every LLM token of a run as the reply's content (here:
Self-Ask's drafts, the m samples, the NLI judge's verdicts) and node updates as status events,
while this product's steps are its own ``describe_step`` lines and its reply is the ``respond``
node's message; the part it needs is the ~400 lines here and in
:mod:`sunar.server.openai_request` and :mod:`sunar.server.openai_runs`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from langgraph_sdk import Auth
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from sunar.configuration import Configuration
from sunar.graph import GRAPH_NAMES
from sunar.server.openai_request import MAX_BODY, THREAD_HEADER, BadRequest, checked, error, read_body
from sunar.server.openai_runs import collected, failure, reply_of, run_events, sources_of, stream
from sunar.server.served import LOCAL_ORIGIN, STUDIO_ORIGINS, local_only, operator_settings, served

__all__ = ["MAX_BODY", "checked", "create_app", "failure", "run_events"]
STARTED = int(time.time())


async def disconnected(request: Request) -> None:
    """Return once the client has gone. The body has been read, so the next ASGI message is
    ``http.disconnect`` (Starlette's StreamingResponse listens for it the same way); waiting for it
    notices at once what polling ``request.is_disconnected()`` would notice a poll later."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def models(request: Request) -> JSONResponse:
    return JSONResponse({"object": "list", "data": [{"id": n, "object": "model", "created": STARTED, "owned_by": "sunar"} for n in GRAPH_NAMES]})


async def chat_completions(request: Request) -> Any:
    try:
        body = json.loads(await read_body(request))
    except ValueError as exc:
        return error(400, f"the request body is not JSON ({exc})")
    except BadRequest as exc:
        return error(exc.status, str(exc), code=exc.code)
    state = request.app.state
    try:
        job = checked(body, state.graphs, request.headers, state.durable)
    except BadRequest as exc:
        return error(exc.status, str(exc), code=exc.code)
    head = {"id": f"chatcmpl-{uuid.uuid4().hex}", "created": int(time.time()), "model": job.name}
    thread = {THREAD_HEADER: job.thread} if job.thread else {}
    if body.get("stream"):
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return StreamingResponse(stream(job, head, usage, state.running), media_type="text/event-stream", headers={"Cache-Control": "no-cache", **thread})
    # Not streamed, nothing is sent until the run ends, so the client's leaving is watched for
    # alongside it; either way the other task is cancelled, which stops a run still going.
    run = asyncio.ensure_future(collected(job, state.running))
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
    message = {"role": "assistant", "content": text, "reasoning_content": "".join(steps)}
    choices = [{"index": 0, "message": message, "finish_reason": "stop"}]
    return JSONResponse({**head, "object": "chat.completion", "choices": choices, "usage": used, "sources": sources_of(value)}, headers=thread)


class LocalOnly:
    """ASGI middleware: every request passes :func:`sunar.server.served.local_only` (addressed to the
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


def create_app(checkpointer: Any = None) -> Starlette:
    """The endpoint's app; with a ``checkpointer`` (:func:`sunar.server.checkpoints.open_checkpointer`,
    open while the app serves), requests may name threads. The operator's settings (SUNAR_LLM,
    ...) are checked first: a typo is one :class:`SunarError` line before the server starts."""
    Configuration.resolve(operator_settings())
    app = Starlette(
        lifespan=lifespan,
        routes=[Route("/v1/models", models, methods=["GET"]), Route("/v1/chat/completions", chat_completions, methods=["POST"])],
        middleware=[
            Middleware(LocalOnly),
            Middleware(CORSMiddleware, allow_origins=list(STUDIO_ORIGINS), allow_origin_regex=LOCAL_ORIGIN, allow_methods=["GET", "POST"], allow_headers=["*"]),
        ],
    )
    app.state.graphs = {name: served(name) for name in GRAPH_NAMES}
    # the same graphs on the checkpointer, for the requests that name a thread (None: no threads)
    app.state.durable = {name: graph.copy({"checkpointer": checkpointer}) for name, graph in app.state.graphs.items()} if checkpointer else None
    app.state.running = set()  # the stop flags of the runs going (run_events)
    return app
