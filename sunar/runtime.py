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

from sunar.config import Configuration, sunar_home
from sunar.models.llm import LLM, make_llm, usage
from sunar.models.nli import NLI, make_nli
from sunar.models.scorer import Scorer, make_scorer
from sunar.stores.corpus import Document

log = logging.getLogger("sunar")
DEMO_CORPUS = Path(__file__).parent / "data" / "demo_corpus.jsonl"


class Retriever(Protocol):
    """The index as nodes see it (implemented by :class:`sunar.stores.index.Index`)."""

    size: int

    def first_stage(self, query: str, depth: int, kind: str = "bm25") -> list[tuple[str, float]]: ...

    def neighbours(self, doc_id: str) -> list[tuple[str, float]]: ...

    def documents(self, ids: Sequence[str]) -> list[Document]: ...


# --- usage accounting -------------------------------------------------------------------------

_USAGE: ContextVar[dict[str, float] | None] = ContextVar("sunar_usage", default=None)


def _count(replies: Sequence[AIMessage], clock: str, seconds: float) -> None:
    counter = _USAGE.get()
    if counter is None:
        return
    counter[clock] += seconds
    for reply in replies:
        prompt, generated = usage(reply)
        counter["llm_calls"] += 1
        counter["prompt_tokens"] += prompt
        counter["generated_tokens"] += generated


class CountingLLM(LLM):
    """Passes calls through to an LLM and counts them for the node being run."""

    def __init__(self, inner: LLM):
        self.inner, self.name, self.chat = inner, inner.name, inner.chat

    def generate(self, messages, *, temperature=0.0, max_tokens=256, stop=None, config=None):
        started = time.perf_counter()
        reply = self.inner.generate(messages, temperature=temperature, max_tokens=max_tokens, stop=stop, config=config)
        _count([reply], "llm_seconds", time.perf_counter() - started)
        return reply

    def sample(self, messages, m, *, temperature, max_tokens=256, stop=None):
        started = time.perf_counter()
        replies = self.inner.sample(messages, m, temperature=temperature, max_tokens=max_tokens, stop=stop)
        _count(replies, "llm_seconds", time.perf_counter() - started)
        return replies

    def judge(self, messages: Sequence[BaseMessage], labels: Sequence[str]) -> dict[str, float]:
        started = time.perf_counter()
        scores = self.inner.judge(messages, labels)
        counter = _USAGE.get()
        if counter is not None:
            counter["judge_calls"] += 1
            counter["nli_seconds"] += time.perf_counter() - started
        return scores


def node(name: str) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., dict[str, Any]]]:
    """Decorate a node: adds ``usage`` = {seconds: {name: s}, calls: {name: 1}, llm_calls,
    judge_calls, prompt_tokens, generated_tokens, llm_seconds, nli_seconds}; the reducer on the
    state adds them up over the run."""

    def wrap(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        @functools.wraps(fn)
        def run(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            counter = {"llm_calls": 0, "judge_calls": 0, "prompt_tokens": 0, "generated_tokens": 0, "llm_seconds": 0.0, "nli_seconds": 0.0}
            token = _USAGE.set(counter)
            started = time.perf_counter()
            try:
                update = fn(state, config)
            finally:
                _USAGE.reset(token)
            spent = {"seconds": {name: time.perf_counter() - started}, "calls": {name: 1}, **counter}
            return {**update, "usage": spent}

        return run

    return wrap


# --- resources --------------------------------------------------------------------------------


@dataclass
class Resources:
    llm: LLM
    scorer: Scorer
    nli: NLI
    index: Retriever

    def __post_init__(self) -> None:
        if not isinstance(self.llm, CountingLLM):
            self.llm = CountingLLM(self.llm)
            if hasattr(self.nli, "llm"):
                self.nli.llm = self.llm  # the LLM judge's calls are counted too


_CACHE: dict[tuple, Resources] = {}
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
    key = (cfg.llm, cfg.scorer, cfg.nli, cfg.embedder, cfg.index_dir, cfg.chroma_url, cfg.neighbours)
    with _LOCK:
        if key not in _CACHE:
            index = open_index(cfg)
            llm = make_llm(cfg.llm)
            _CACHE[key] = Resources(llm, make_scorer(cfg.scorer, getattr(index, "embedder", None)), make_nli(cfg.nli, llm), index)
        return _CACHE[key]
