"""An LLM whose calls are counted for the node being run and, with a
:class:`~sunar.models.llm_cache.CallCache`, read from the cache when made before.

Calls read from the cache are still counted, with the seconds they took when computed, and also as
``cached_calls`` / ``cached_seconds``, so cost figures do not depend on what the cache held.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from sunar.models.llm import LLM
from sunar.models.llm_cache import CallCache, call_key
from sunar.usage import count_judgement, count_loglik, count_replies


def _wire(messages: Sequence[BaseMessage]) -> list[tuple[str, str]]:
    return [(m.type, str(m.content)) for m in messages]


def _stored(reply: AIMessage) -> dict[str, Any]:
    return {"content": str(reply.content), "usage": dict(reply.usage_metadata or {})}


def _shape(schema: dict | None) -> list[Any]:
    """A call's schema as part of its cache key (nothing without one, so those keys stay as they were)."""
    return [schema] if schema else []


def _restored(value: dict[str, Any]) -> AIMessage:
    return AIMessage(content=value["content"], usage_metadata=value["usage"] or None)


class RecordedLLM(LLM):
    """Passes calls through to ``inner``, counting them, and caching them in ``cache``."""

    def __init__(self, inner: LLM, cache: CallCache | None = None):
        self.inner, self.name, self.chat, self.cache = inner, inner.name, inner.chat, cache

    def _key(self, kind: str, messages: Sequence[BaseMessage], *params: Any) -> str:
        return call_key(self.name, kind, _wire(messages), *params)

    def _claim(self, key: str) -> AbstractContextManager:
        """While held, a thread asking the same call waits for this one's result in the cache."""
        return self.cache.claim(key) if self.cache is not None else nullcontext()

    def _hit(self, key: str) -> tuple[Any, float] | None:
        return self.cache.get(key) if self.cache is not None else None

    def _keep(self, key: str, value: Any, seconds: float) -> None:
        if self.cache is not None:
            self.cache.put(key, value, seconds)

    def generate(self, messages, *, temperature=0.0, max_tokens=256, stop=None, config=None, schema=None):
        key = self._key("generate", messages, temperature, max_tokens, list(stop or []), *_shape(schema))
        with self._claim(key):
            if hit := self._hit(key):
                reply = _restored(hit[0])
                count_replies([reply], hit[1], cached=True)
                return reply
            started = time.perf_counter()
            reply = self.inner.generate(messages, temperature=temperature, max_tokens=max_tokens, stop=stop, config=config, schema=schema)
            seconds = time.perf_counter() - started
            count_replies([reply], seconds)
            self._keep(key, _stored(reply), seconds)
            return reply

    def sample(self, messages, m, *, temperature, max_tokens=256, stop=None, schema=None):
        keys = [self._key("sample", messages, temperature, max_tokens, list(stop or []), i, *_shape(schema)) for i in range(m)]
        with self._claim(keys[0]):  # the first sample's key stands for the set
            hits = [self._hit(k) for k in keys]
            missing = [i for i, hit in enumerate(hits) if hit is None]
            replies: list[AIMessage | None] = [_restored(h[0]) if h else None for h in hits]
            cached = [r for r in replies if r is not None]
            if cached:
                count_replies(cached, sum(h[1] for h in hits if h), cached=True)
            if missing:
                started = time.perf_counter()
                fresh = self.inner.sample(messages, len(missing), temperature=temperature, max_tokens=max_tokens, stop=stop, schema=schema)
                seconds = time.perf_counter() - started
                count_replies(fresh, seconds)
                for i, reply in zip(missing, fresh, strict=True):
                    replies[i] = reply
                    self._keep(keys[i], _stored(reply), seconds / len(missing))
            return [r for r in replies if r is not None]

    def _one(self, key: str, compute: Callable[[], Any], count: Callable[..., None], restore: Callable[[Any], Any]) -> Any:
        """A call with one JSON value as its result (a judgement, a log-likelihood)."""
        with self._claim(key):
            if hit := self._hit(key):
                count(hit[1], cached=True)
                return restore(hit[0])
            started = time.perf_counter()
            value = compute()
            seconds = time.perf_counter() - started
            count(seconds)
            self._keep(key, value, seconds)
            return value

    def judge(self, messages: Sequence[BaseMessage], labels: Sequence[str]) -> dict[str, float]:
        key = self._key("judge", messages, list(labels))
        restore = lambda stored: {k: float(v) for k, v in stored.items()}  # noqa: E731
        return self._one(key, lambda: self.inner.judge(messages, labels), count_judgement, restore)

    def loglik(self, messages: Sequence[BaseMessage], continuation: str) -> float:
        key = self._key("loglik", messages, continuation)
        return self._one(key, lambda: self.inner.loglik(messages, continuation), count_loglik, float)

    def hidden_state(self, text: str) -> list[float]:
        key = call_key(self.name, "hidden_state", text)  # a forward pass that reads the model, counted as a likelihood call
        return self._one(key, lambda: self.inner.hidden_state(text), count_loglik, lambda stored: [float(v) for v in stored])
