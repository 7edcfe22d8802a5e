"""What nodes need besides the state: the models and the index, built once per configuration.

Nodes call :func:`resources` with their ``RunnableConfig``. Tests (and embedding applications)
inject ready objects with ``config["configurable"]["resources"]``; otherwise they are built from
the :class:`~sunar.config.Configuration` and cached, since loading models is expensive.
:func:`node` wraps every node to time it and count the LLM calls and tokens it spends.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import Overwrite

from sunar.config import Configuration, sunar_home
from sunar.models.llm import LLM, make_llm, usage
from sunar.models.nli import NLI, make_nli
from sunar.models.scorer import Scorer, make_scorer
from sunar.stores.corpus import Document
from sunar.stores.llm_cache import CallCache, call_key

log = logging.getLogger("sunar")
DEMO_CORPUS = Path(__file__).parent / "data" / "demo_corpus.jsonl"


class Retriever(Protocol):
    """The index as nodes see it (implemented by :class:`sunar.stores.index.Index`)."""

    size: int

    def first_stage(self, query: str, depth: int, kind: str = "bm25") -> list[tuple[str, float]]: ...

    def neighbours(self, doc_id: str) -> list[tuple[str, float]]: ...

    def documents(self, ids: Sequence[str]) -> list[Document]: ...


# --- usage accounting -------------------------------------------------------------------------

COUNTERS = (
    "llm_calls", "judge_calls", "loglik_calls", "prompt_tokens", "generated_tokens", "llm_seconds", "nli_seconds",
    "cached_calls", "cached_seconds",
)
_USAGE: ContextVar[dict[str, float] | None] = ContextVar("sunar_usage", default=None)


def _count(replies: Sequence[AIMessage], seconds: float, cached: bool = False) -> None:
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


def _judged(seconds: float, cached: bool = False) -> None:
    """One yes/no judgement (NLI, RA-ISF's judges)."""
    _counted("judge_calls", "nli_seconds", seconds, cached)


def _scored(seconds: float, cached: bool = False) -> None:
    """One log-likelihood call (GenSco's scorer LLM): its seconds are LLM seconds."""
    _counted("loglik_calls", "llm_seconds", seconds, cached)


def _wire(messages: Sequence[BaseMessage]) -> list[tuple[str, str]]:
    return [(m.type, str(m.content)) for m in messages]


def _stored(reply: AIMessage) -> dict[str, Any]:
    return {"content": str(reply.content), "usage": dict(reply.usage_metadata or {})}


def _restored(value: dict[str, Any]) -> AIMessage:
    return AIMessage(content=value["content"], usage_metadata=value["usage"] or None)


class CountingLLM(LLM):
    """Passes calls through to an LLM and counts them for the node being run. With a
    :class:`~sunar.stores.llm_cache.CallCache`, calls already made are read from it: they are
    still counted (with the seconds they took when computed) and also as ``cached_calls`` /
    ``cached_seconds``, so cost figures do not depend on what the cache held."""

    def __init__(self, inner: LLM, cache: CallCache | None = None):
        self.inner, self.name, self.chat, self.cache = inner, inner.name, inner.chat, cache

    def _key(self, kind: str, messages: Sequence[BaseMessage], *params: Any) -> str:
        return call_key(self.name, kind, _wire(messages), *params)

    def generate(self, messages, *, temperature=0.0, max_tokens=256, stop=None, config=None):
        key = self._key("generate", messages, temperature, max_tokens, list(stop or []))
        hit = self.cache.get(key) if self.cache is not None else None
        if hit:
            reply = _restored(hit[0])
            _count([reply], hit[1], cached=True)
            return reply
        started = time.perf_counter()
        reply = self.inner.generate(messages, temperature=temperature, max_tokens=max_tokens, stop=stop, config=config)
        seconds = time.perf_counter() - started
        _count([reply], seconds)
        if self.cache is not None:
            self.cache.put(key, _stored(reply), seconds)
        return reply

    def sample(self, messages, m, *, temperature, max_tokens=256, stop=None):
        keys = [self._key("sample", messages, temperature, max_tokens, list(stop or []), i) for i in range(m)]
        hits = [self.cache.get(k) for k in keys] if self.cache is not None else [None] * m
        missing = [i for i, hit in enumerate(hits) if hit is None]
        replies: list[AIMessage | None] = [_restored(h[0]) if h else None for h in hits]
        cached = [r for r in replies if r is not None]
        if cached:
            _count(cached, sum(h[1] for h in hits if h), cached=True)
        if missing:
            started = time.perf_counter()
            fresh = self.inner.sample(messages, len(missing), temperature=temperature, max_tokens=max_tokens, stop=stop)
            seconds = time.perf_counter() - started
            _count(fresh, seconds)
            for i, reply in zip(missing, fresh, strict=True):
                replies[i] = reply
                if self.cache is not None:
                    self.cache.put(keys[i], _stored(reply), seconds / len(missing))
        return [r for r in replies if r is not None]

    def judge(self, messages: Sequence[BaseMessage], labels: Sequence[str]) -> dict[str, float]:
        key = self._key("judge", messages, list(labels))
        hit = self.cache.get(key) if self.cache is not None else None
        if hit:
            _judged(hit[1], cached=True)
            return {k: float(v) for k, v in hit[0].items()}
        started = time.perf_counter()
        scores = self.inner.judge(messages, labels)
        seconds = time.perf_counter() - started
        _judged(seconds)
        if self.cache is not None:
            self.cache.put(key, scores, seconds)
        return scores

    def loglik(self, messages: Sequence[BaseMessage], continuation: str) -> float:
        key = self._key("loglik", messages, continuation)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit:
            _scored(hit[1], cached=True)
            return float(hit[0])
        started = time.perf_counter()
        value = self.inner.loglik(messages, continuation)
        seconds = time.perf_counter() - started
        _scored(seconds)
        if self.cache is not None:
            self.cache.put(key, value, seconds)
        return value


def node(name: str, first: bool = False) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., dict[str, Any]]]:
    """Decorate a node: adds ``usage`` = {seconds: {name: s}, calls: {name: 1}} and the
    :data:`COUNTERS`; the reducer on the state adds them up over the run. The ``first`` node of
    a question starts the count afresh (a chat thread asks many questions)."""

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


# --- resources --------------------------------------------------------------------------------


@dataclass
class Resources:
    llm: LLM
    scorer: Scorer
    nli: NLI
    index: Retriever
    cache: CallCache | None = None  # LLM calls already made (evaluations)
    likelihood: LLM | None = None  # GenSco's scorer LLM (log-likelihoods); None: the generative LLM

    def __post_init__(self) -> None:
        if not isinstance(self.llm, CountingLLM):
            self.llm = CountingLLM(self.llm, self.cache)
            if hasattr(self.nli, "llm"):
                self.nli.llm = self.llm  # the LLM judge's calls are counted too
        if self.likelihood is None:
            self.likelihood = self.llm
        elif not isinstance(self.likelihood, CountingLLM):
            self.likelihood = CountingLLM(self.likelihood, self.cache)


_CACHE: dict[tuple, Resources] = {}
_LLMS: dict[str, LLM] = {}


def _shared_llm(spec: str) -> LLM:
    """One instance per model: configurations that differ in other fields share the weights."""
    if spec not in _LLMS:
        _LLMS[spec] = make_llm(spec)
    return _LLMS[spec]
_LOCK = threading.Lock()


def demo_index_dir() -> Path:
    return sunar_home() / "demo-index"


def open_index(cfg: Configuration) -> Any:
    """The configured index, or the bundled demo index (built the first time it is needed)."""
    from sunar.stores.index import MANIFEST, Index, build_index

    if cfg.index_dir:
        return Index(cfg.index_dir, chroma_url=cfg.chroma_url, neighbours=cfg.neighbours)
    folder = demo_index_dir()
    if not (folder / MANIFEST).exists():
        log.info("first run: indexing the bundled demo corpus into %s", folder)
        build_index(DEMO_CORPUS, folder, progress=False)
    return Index(folder, neighbours=cfg.neighbours)


def resources(config: RunnableConfig | None) -> Resources:
    configurable = (config or {}).get("configurable") or {}
    if isinstance(configurable.get("resources"), Resources):
        return configurable["resources"]
    cfg = Configuration.from_runnable_config(config)
    key = (cfg.llm, cfg.scorer, cfg.nli, cfg.embedder, cfg.index_dir, cfg.chroma_url, cfg.neighbours, cfg.llm_cache, cfg.likelihood_llm)
    with _LOCK:
        if key not in _CACHE:
            index = open_index(cfg)
            llm = _shared_llm(cfg.llm)
            cache = CallCache(cfg.llm_cache) if cfg.llm_cache else None
            scorer = make_scorer(cfg.scorer, getattr(index, "embedder", None))
            # GenSco's scorer LLM: the generative one unless likelihood_llm names another model
            same = cfg.likelihood_llm in ("", cfg.llm, llm.name)
            likelihood = None if same else _shared_llm(cfg.likelihood_llm)
            _CACHE[key] = Resources(llm, scorer, make_nli(cfg.nli, llm), index, cache, likelihood)
        return _CACHE[key]
