"""Stopping a run from outside it, at once: the OpenAI endpoint stops a run when its client leaves
or the server shuts down, and a long LLM generation must notice that between two tokens, not only
when its step ends.

The flag is the run's :class:`threading.Event` in a context variable, so no signature between the
endpoint and the model changes: :func:`stoppable` sets it in the thread that runs the graph, and
LangGraph runs each node there or, in its executor (always when streaming tokens), in a copy of
that thread's context (it submits ``copy_context().run``), so a model reads the flag of the run it
works for; outside a stoppable run there is none. This module imports nothing of the project but
the errors, so the models and the endpoint may both use it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from sunar.errors import RunCancelled

#: The stop flag of the run the current code works for (None: not a stoppable run).
STOP: ContextVar[threading.Event | None] = ContextVar("sunar_stop", default=None)


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
