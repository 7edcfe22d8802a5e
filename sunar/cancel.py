"""Stopping a run from outside it, at once: the OpenAI endpoint stops a run when its client leaves
or the server shuts down, and a long LLM generation must notice that between two tokens, not only
when its step ends.

The flag is the run's :class:`threading.Event` in a context variable, so no signature between the
endpoint and the model changes: :func:`stoppable` sets it in the thread that runs the graph, and
LangGraph runs each node there or, in its executor (always when streaming tokens), in a copy of
that thread's context (it submits ``copy_context().run``), so a model reads the flag of the run it
works for; outside a stoppable run there is none. This module imports nothing of the project but
the errors, so the models and the endpoint may both use it.

The LangGraph server (``./run studio``) runs a graph with ``astream`` in a task of its own and
cancels that task when a client stops the run (Studio's Stop: ``POST .../runs/{id}/cancel``); the
node threads it had started would go on to the end of their step. :func:`stop_when_cancelled`
gives a graph's async runs a stop flag that the cancellation sets.
"""

from __future__ import annotations

import copy
import functools
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from sunar.errors import RunCancelled

#: The stop flag of the run the current code works for (None: not a stoppable run).
STOP: ContextVar[threading.Event | None] = ContextVar("sunar_stop", default=None)
G = TypeVar("G")


@contextmanager
def stoppable(stop: threading.Event) -> Iterator[None]:
    """Run the code inside (a graph run) with ``stop`` as its stop flag."""
    token = STOP.set(stop)
    try:
        yield
    finally:
        STOP.reset(token)


def raise_if_stopped() -> None:
    """Raise :class:`RunCancelled` if the current run's stop flag is set; models call it between
    tokens. Costs a context lookup: nothing next to a token."""
    stop = STOP.get()
    if stop is not None and stop.is_set():
        raise RunCancelled("the run was stopped: its client went away or the server is shutting down")


def stop_when_cancelled(graph: G) -> G:
    """``graph`` (a compiled LangGraph graph) whose async runs (``astream``, and ``ainvoke`` and
    ``astream_events`` through it: what the LangGraph server calls) each have a stop flag, set
    when the run is cancelled or ends, so a node's model stops at its next token instead of
    finishing its step for nobody. Sync runs are unchanged; copies (``with_config``) keep it."""
    if getattr(graph, "_stops_when_cancelled", False):
        return graph
    stoppable_graph = copy.copy(graph)
    stoppable_graph.__class__ = _stoppable_class(type(graph))
    return stoppable_graph


@functools.cache
def _stoppable_class(base: type) -> type:
    class StopWhenCancelled(base):  # type: ignore[valid-type, misc]
        _stops_when_cancelled = True

        async def astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            """The graph's own ``astream`` with this run's stop flag in the context of each step:
            LangGraph starts a step's node tasks in the context of the call that asks for the
            next item (each item may be asked for from a new task, as the server does), and the
            node threads copy it. Cancelled, closed or ended: the flag is set."""
            stop = threading.Event()
            inner = super().astream(*args, **kwargs)
            try:
                while True:
                    with stoppable(stop):
                        try:
                            item = await anext(inner)
                        except StopAsyncIteration:
                            return
                    yield item
            finally:
                stop.set()
                await inner.aclose()

    StopWhenCancelled.__name__ = StopWhenCancelled.__qualname__ = base.__name__
    return StopWhenCancelled
