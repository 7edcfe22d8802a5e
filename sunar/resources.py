"""What nodes need besides the state: the models and the index, built once per configuration.

Nodes call :func:`resources` with their ``RunnableConfig``. A caller may inject ready objects with
``config["configurable"]["resources"]`` (a :class:`Resources`; tests do, with scripted models);
otherwise :data:`POOL` builds them from the :class:`~sunar.configuration.Configuration` and keeps
those of the last few configurations, since loading models is expensive. Configurations that
differ only in other fields share the same LLM instance.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.errors import ConfigurationError
from sunar.models.llm import LLM
from sunar.models.llm_cache import CallCache
from sunar.models.nli import NLI, make_nli
from sunar.models.providers import make_llm
from sunar.models.recorded import RecordedLLM
from sunar.models.scorer import Scorer, make_scorer
from sunar.paths import DEMO_CORPUS, sunar_home
from sunar.stores.corpus import Document

log = logging.getLogger("sunar")


class Retriever(Protocol):
    """The index as nodes see it (implemented by :class:`sunar.stores.index.Index`)."""

    size: int

    def first_stage(self, query: str, depth: int, kind: str = "bm25") -> list[tuple[str, float]]: ...

    def neighbours(self, doc_id: str) -> list[tuple[str, float]]: ...

    def documents(self, ids: Sequence[str]) -> list[Document]: ...


@dataclass
class Resources:
    llm: LLM
    scorer: Scorer
    nli: NLI
    index: Retriever
    cache: CallCache | None = None  # LLM calls already made (evaluations)
    likelihood: LLM | None = None  # GenSco's scorer LLM (log-likelihoods); None: the generative LLM
    escalation: LLM | None = None  # escalate_llm: the larger LLM a doubted answer is read again by (None: not set)

    def __post_init__(self) -> None:
        if not isinstance(self.llm, RecordedLLM):
            self.llm = RecordedLLM(self.llm, self.cache)
            if hasattr(self.nli, "llm"):
                self.nli.llm = self.llm  # the LLM judge's calls are counted too
        if self.likelihood is None:
            self.likelihood = self.llm
        elif not isinstance(self.likelihood, RecordedLLM):
            self.likelihood = RecordedLLM(self.likelihood, self.cache)
        if self.escalation is not None and not isinstance(self.escalation, RecordedLLM):
            self.escalation = RecordedLLM(self.escalation, self.cache)

    def larger(self, field: str) -> LLM:
        """The escalation LLM that ``field``=escalate reads a doubted answer again with."""
        if self.escalation is None:  # only resources a Python caller built without it
            raise ConfigurationError(f"{field}=escalate: the resources given hold no escalation LLM; pass Resources(..., escalation=...)")
        return self.escalation


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
    build_index(DEMO_CORPUS, folder, progress=False)  # builds, upgrades an older format, or confirms (cheap)
    return Index(folder, neighbours=cfg.neighbours)


@dataclass
class ResourcePool:
    """Resources per configuration, and one LLM instance per model spec, for the ``size`` most
    recently used configurations (and the LLMs they use): a server whose clients vary settings
    does not keep every model it ever loaded.

    Loading holds a lock per configuration and per LLM spec only: a run whose resources are built
    never waits for another configuration's models to load, and two runs of one configuration
    load it once. ``llm_factory`` builds an LLM from its spec; None (the default) is
    :func:`sunar.models.providers.make_llm` with the configuration's ``openai_base_url``. An
    application that brings its own model object sets it, and so do the tests that run the product
    in another process with a scripted model."""

    llm_factory: Callable[[str], LLM] | None = None
    size: int = 4
    _built: OrderedDict[tuple, Resources] = field(default_factory=OrderedDict)
    _llms: dict[tuple, LLM] = field(default_factory=dict)
    _loading: dict[tuple, threading.Lock] = field(default_factory=dict)  # ("resources", ...) and ("llm", ...) keys
    _lock: threading.Lock = field(default_factory=threading.Lock)  # guards the tables, never held while loading

    def _once(self, table: dict, key: Any, build: Callable[[], Any]) -> Any:
        """``table[key]``, built by ``build`` under the key's own lock if it is not there yet."""
        with self._lock:
            if key in table:
                return table[key]
            key_lock = self._loading.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                if key in table:
                    return table[key]
            try:
                value = build()
                with self._lock:
                    table[key] = value
            finally:
                with self._lock:
                    self._loading.pop(key, None)
            return value

    @staticmethod
    def _llm_key(spec: str, openai_base_url: str) -> tuple:
        """One LLM per spec, and per server for an ``openai:`` spec."""
        return ("llm", spec, openai_base_url if spec.startswith("openai:") else "")

    def _llm(self, spec: str, openai_base_url: str) -> LLM:
        factory = self.llm_factory or (lambda s: make_llm(s, openai_base_url))
        return self._once(self._llms, self._llm_key(spec, openai_base_url), lambda: factory(spec))

    def get(self, cfg: Configuration) -> Resources:
        key = ("resources", cfg.llm, cfg.likelihood_llm, cfg.escalate_llm, cfg.openai_base_url, cfg.scorer, cfg.nli, cfg.index_dir, cfg.chroma_url, cfg.neighbours, cfg.llm_cache)
        built = self._once(self._built, key, lambda: self._build(cfg))
        with self._lock:
            if key in self._built:
                self._built.move_to_end(key)
            self._evict()
        return built

    def _build(self, cfg: Configuration) -> Resources:
        index = open_index(cfg)
        llm = self._llm(cfg.llm, cfg.openai_base_url)
        cache = CallCache(cfg.llm_cache) if cfg.llm_cache else None
        scorer = make_scorer(cfg.scorer, getattr(index, "embedder", None))
        # GenSco's scorer LLM: the generative one unless likelihood_llm names another model
        same = cfg.likelihood_llm in ("", cfg.llm, llm.name)
        likelihood = None if same else self._llm(cfg.likelihood_llm, cfg.openai_base_url)
        escalation = self._llm(cfg.escalate_llm, cfg.openai_base_url) if cfg.escalate_llm else None
        return Resources(llm, scorer, make_nli(cfg.nli, llm), index, cache, likelihood, escalation)

    def _evict(self) -> None:
        """Drop the least recently used configurations past ``size``, and the LLMs that neither a
        kept configuration nor one being loaded uses (call with the lock held)."""
        while len(self._built) > self.size:
            self._built.popitem(last=False)
        keys = [*self._built, *(k for k in self._loading if k[0] == "resources")]
        used = {self._llm_key(spec, key[4]) for key in keys for spec in key[1:4] if spec}
        for llm_key in [k for k in self._llms if k not in used]:
            del self._llms[llm_key]

    def clear(self) -> None:
        """Forget everything built (the next run loads models again)."""
        with self._lock:
            self._built.clear()
            self._llms.clear()


#: The process's resources.
POOL = ResourcePool()


def resources(config: RunnableConfig | None) -> Resources:
    """The resources of the run: injected ones, or the pool's for the run's configuration."""
    injected = ((config or {}).get("configurable") or {}).get("resources")
    if isinstance(injected, Resources):
        return injected
    return POOL.get(Configuration.from_runnable_config(config))
