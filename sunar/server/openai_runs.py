"""A checked chat request (:class:`~sunar.server.openai_request.Job`) run for the OpenAI-compatible
endpoint (:mod:`sunar.server.openai_api`): the graph in a worker thread, its steps as they happen, and its
end as OpenAI's reply (streamed as server-sent chunks, or one completion) with the cited evidence
as Open WebUI's citations.

On a thread the run is checkpointed before each next step (:data:`sunar.server.checkpoints.DURABILITY`).
The client's conversation becomes the thread's messages (a chat app sends it whole with each
request, edited turns included); but when the thread's last run of this graph asked the same
question and did not finish (the server was killed or stopped, or the client left), the run
resumes from its last checkpoint instead, so no finished step is computed again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import threading
from collections.abc import AsyncIterator
from typing import Any

from langchain_core.messages import RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from sunar.cancel import raise_if_stopped, stoppable
from sunar.citations import cited, used_words
from sunar.errors import DiskFull, ModelUnavailable, RunCancelled, SunarError, disk_full, unexpected
from sunar.server.checkpoints import DURABILITY, unfinished
from sunar.server.openai_request import Job
from sunar.streaming import stream_steps

log = logging.getLogger("sunar")


def prepared(job: Job) -> tuple[dict[str, Any] | None, dict[str, Any], dict[str, Any]]:
    """The run's input, config and options. On a thread: the conversation in place of the
    thread's messages, or None (resume) when the thread's last run of this graph asked this
    question and did not finish."""
    config: dict[str, Any] = {"recursion_limit": 1000}
    if not job.thread:
        return {"messages": job.messages}, config, {}
    config |= {"configurable": {"thread_id": job.thread}, "metadata": {"sunar_graph": job.name}}
    options = {"durability": DURABILITY}
    snapshot = job.graph.get_state(config)
    if (snapshot.metadata or {}).get("sunar_graph") == job.name and unfinished(snapshot, job.question):
        return None, config, options
    return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *job.messages], "question": job.question}, config, options


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
            payload, config, options = prepared(job)
            if payload is None:
                log.info("resuming the unfinished run on thread %s", job.thread)
                put("step", f"[thread] resuming the unfinished run on thread {job.thread} from its last finished step\n")
            with stoppable(stop):
                put("done", stream_steps(job.graph, payload, config, job.kind.describe, job.kind.answer_node, emit, context=job.context, **options))
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


#: What a chat client's user does once the server's disk has room again.
ASK_AGAIN = "send the question again (on the same thread the run goes on from its last saved step)"


def failure(exc: BaseException) -> tuple[int, str]:
    """A failed run's status and one line (a bug's traceback goes to the server's log only). A full
    disk (a thread's checkpoint or the LLM cache could not be written) is 507 Insufficient Storage,
    with what to do."""
    full = exc if isinstance(exc, DiskFull) else disk_full(exc, ASK_AGAIN)
    if full is not None:
        return 507, str(full)
    if isinstance(exc, SunarError):
        return (503 if isinstance(exc, ModelUnavailable | RunCancelled) else 500), str(exc)
    log.error("a run failed", exc_info=exc)
    return 500, f"{unexpected(exc)} (the server's log has the details)"


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
    the order of the reply's ``[n]`` list (the state's ``cited``: the pages the reasoning used
    first, :mod:`sunar.citations`): Open WebUI numbers the sources by ``metadata.source``
    (here the document's id), turns the ``[n]`` of the reply into a chip for the n-th, shows its
    ``metadata.name`` (the title; a used page's with how it was used, as the reply's list says it,
    and ``metadata.used`` true), its ``document`` (the text) and ``distances`` as relevance (the
    scorer's score). Streamed, each is the ``data`` of a ``source`` event in a chunk's top-level
    ``event`` field, which Open WebUI's middleware passes to the chat and stores with the message;
    not streamed, the list is the completion's top-level ``sources``, which its page reads from a
    completion. Other clients ignore both fields. A score JSON cannot hold (GenSco's -inf
    log-likelihood) is left out."""
    sources = []
    for e in state.get("cited") or cited(state):
        score = e.get("score")
        scored = {"score": score} if isinstance(score, int | float) and math.isfinite(score) else {}
        name = f"{e['title']} — {used_words(e)}" if e.get("used") else e["title"]
        sources.append({
            "source": {"id": e["id"], "name": name},
            "document": [e["text"]],
            "metadata": [{"source": e["id"], "name": name, "used": bool(e.get("used")), **scored}],
            **({"distances": [score]} if scored else {}),
        })
    return sources


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
