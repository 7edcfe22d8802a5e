"""What each node spends: seconds, LLM calls, tokens, yes/no judgements, likelihood calls, and
the replies that broke their format (parse fall-backs).

:func:`node` wraps every node: it opens a counter for the node's run, which
:mod:`sunar.models.recorded` adds to on every model call, and returns the figures as the node's
``usage`` update; the reducer on the state adds them up over the question.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import Overwrite


def usage(message: AIMessage) -> tuple[int, int]:
    """(prompt tokens, generated tokens) of a reply, 0 where the backend reported none."""
    meta = message.usage_metadata or {}
    return int(meta.get("input_tokens", 0)), int(meta.get("output_tokens", 0))



COUNTERS = (
    "llm_calls", "judge_calls", "loglik_calls", "prompt_tokens", "generated_tokens", "llm_seconds", "nli_seconds",
    "cached_calls", "cached_seconds", "parse_fallbacks",
)
_USAGE: ContextVar[dict[str, float] | None] = ContextVar("sunar_usage", default=None)


def count_replies(replies: Sequence[AIMessage], seconds: float, cached: bool = False) -> None:
    """Generated replies (with their tokens) and the seconds they took."""
    counter = _USAGE.get()
    if counter is None:
        return
    counter["llm_seconds"] += seconds
    for reply in replies:
        prompt, generated = usage(reply)
        counter["llm_calls"] += 1
        counter["prompt_tokens"] += prompt
        counter["generated_tokens"] += generated
    if cached:
        counter["cached_calls"] += len(replies)
        counter["cached_seconds"] += seconds


def _counted(calls: str, seconds_key: str, seconds: float, cached: bool) -> None:
    counter = _USAGE.get()
    if counter is None:
        return
    counter[calls] += 1
    counter[seconds_key] += seconds
    if cached:
        counter["cached_calls"] += 1
        counter["cached_seconds"] += seconds


def count_judgement(seconds: float, cached: bool = False) -> None:
    """One yes/no judgement (NLI, RA-ISF's judges)."""
    _counted("judge_calls", "nli_seconds", seconds, cached)


def count_loglik(seconds: float, cached: bool = False) -> None:
    """One log-likelihood call (GenSco's scorer LLM): its seconds are LLM seconds."""
    _counted("loglik_calls", "llm_seconds", seconds, cached)


def count_fallback() -> None:
    """A reply that was not in its format (:mod:`sunar.prompts.structured`), read as free text instead."""
    counter = _USAGE.get()
    if counter is not None:
        counter["parse_fallbacks"] += 1


def node(name: str, first: bool = False) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., dict[str, Any]]]:
    """Decorate a node: adds ``usage`` = {seconds: {name: s}, calls: {name: 1}} and the
    :data:`COUNTERS`. The ``first`` node of a question starts the count afresh (a chat thread asks
    many questions)."""

    def wrap(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        @functools.wraps(fn)
        def run(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            counter = dict.fromkeys(COUNTERS, 0)
            token = _USAGE.set(counter)
            started = time.perf_counter()
            try:
                update = fn(state, config)
            finally:
                _USAGE.reset(token)
            spent = {"seconds": {name: time.perf_counter() - started}, "calls": {name: 1}, **counter}
            return {**update, "usage": Overwrite(spent) if first else spent}

        return run

    return wrap
