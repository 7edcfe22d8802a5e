"""A chat request to the OpenAI-compatible endpoint (:mod:`sunar.server.openai_api`), checked: the graph
its ``model`` names, its conversation as the graph's messages (the last user message is the
question), the client's settings (the extra ``sunar`` field, :data:`~sunar.server.served.ClientConfiguration`)
and the conversation thread it names, if any. A bad request is a :class:`BadRequest`: OpenAI's
error object with one line.

A thread keeps the runs in the server's checkpointer (``serve-openai --checkpoints``), so a run
the server did not finish resumes from its last finished step when the same question comes again,
on this server process or, with PostgreSQL, on another. A client names it in the header
``X-Sunar-Thread``, or the body's ``thread_id`` (``extra_body`` in the ``openai`` client) or
``metadata.thread_id``, in that order. Open WebUI sends no chat id in the body (it drops
``metadata``); with ``ENABLE_FORWARD_USER_INFO_HEADERS=True`` it sends the header
``X-OpenWebUI-Chat-Id``, taken as the thread when the server keeps threads and ignored otherwise
(it comes with every chat). A thread the client names on a server that keeps none is refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from starlette.requests import Request
from starlette.responses import JSONResponse

from sunar.errors import SunarError
from sunar.graph import GRAPH_NAMES, GRAPHS, GraphKind
from sunar.question import validate_question
from sunar.server.served import ClientConfiguration

ROLES = {"user": HumanMessage, "assistant": AIMessage, "system": SystemMessage, "developer": SystemMessage}
#: The largest request body read (1 MB): a long conversation's text is far below it, and a client
#: cannot make the server hold more in memory (pictures in a request are dropped anyway).
MAX_BODY = 1_000_000
#: The header that names a request's thread (also the response's, when it ran on one).
THREAD_HEADER = "X-Sunar-Thread"
#: Open WebUI's chat id (with ENABLE_FORWARD_USER_INFO_HEADERS=True): the thread on a server that keeps them.
WEBUI_CHAT_HEADER = "X-OpenWebUI-Chat-Id"
THREAD_ID = re.compile(r"^[\w.:-]{1,128}$", re.ASCII)


class BadRequest(Exception):
    """A request the endpoint refuses: OpenAI's error object with this status and one line."""

    def __init__(self, status: int, message: str, code: str | None = None):
        super().__init__(message)
        self.status, self.code = status, code


def error(status: int, message: str, kind: str = "invalid_request_error", code: str | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "param": None, "code": code}}, status_code=status)


@dataclass
class Job:
    """One chat request, checked: the graph (on the checkpointer when the request has a thread),
    the conversation and its question, the client's settings and the thread."""

    name: str
    kind: GraphKind
    graph: Any
    messages: list[BaseMessage]
    context: Any
    question: str = ""
    thread: str | None = None


def text_of(content: Any, i: int) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):
        return "".join(str(p.get("text", "")) for p in content if p.get("type") == "text")
    raise BadRequest(400, f"messages[{i}].content must be text or a list of content parts")


def thread_of(body: dict[str, Any], headers: Mapping[str, str], durable: bool) -> str | None:
    """The thread the request names (see the module's docstring), or None; a bad one, or one
    named on a server that keeps no threads, is a :class:`BadRequest`."""
    metadata = body.get("metadata")
    named = headers.get(THREAD_HEADER) or body.get("thread_id") or (metadata.get("thread_id") if isinstance(metadata, dict) else None)
    if not named and durable:
        named = headers.get(WEBUI_CHAT_HEADER)
    if not named:
        return None
    if not durable:
        raise BadRequest(400, "this server keeps no threads; its operator turns them on with: sunar serve-openai --checkpoints FILE_OR_POSTGRESQL_URL")
    if not isinstance(named, str) or not THREAD_ID.match(named):
        raise BadRequest(400, "a thread id is 1 to 128 letters, digits, '.', '_', ':' or '-'")
    return named


def checked(body: Any, graphs: dict[str, Any], headers: Mapping[str, str] | None = None, durable: dict[str, Any] | None = None) -> Job:
    """The request as a :class:`Job`, or a :class:`BadRequest` saying what is wrong with it.
    ``durable`` holds the graphs on the server's checkpointer (None: the server keeps no threads)."""
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
    thread = thread_of(body, headers or {}, durable is not None)
    graph = durable[name] if thread and durable is not None else graphs[name]
    return Job(name, GRAPHS[name], graph, messages, context, str(users[-1].content), thread)


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
