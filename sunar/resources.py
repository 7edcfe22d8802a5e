"""What nodes need besides the state: the models and the index, built once per configuration.

Nodes call :func:`resources` with their ``RunnableConfig``. A caller may inject ready objects with
``config["configurable"]["resources"]`` (a :class:`Resources`; tests do, with scripted models);
otherwise :data:`POOL` builds them from the :class:`~sunar.configuration.Configuration` and keeps
them, since loading models is expensive. Configurations that differ only in other fields share the
same LLM instance.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.models.llm import LLM
from sunar.models.nli import NLI, make_nli
from sunar.models.providers import make_llm
from sunar.models.recorded import RecordedLLM
from sunar.models.scorer import Scorer, make_scorer
from sunar.paths import DEMO_CORPUS, sunar_home
from sunar.stores.corpus import Document
from sunar.stores.llm_cache import CallCache

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

    def __post_init__(self) -> None:
        if not isinstance(self.llm, RecordedLLM):
            self.llm = RecordedLLM(self.llm, self.cache)
            if hasattr(self.nli, "llm"):
                self.nli.llm = self.llm  # the LLM judge's calls are counted too
        if self.likelihood is None:
            self.likelihood = self.llm
        elif not isinstance(self.likelihood, RecordedLLM):
            self.likelihood = RecordedLLM(self.likelihood, self.cache)


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


@dataclass
class ResourcePool:
    """Resources per configuration, and one LLM instance per model spec.

    ``llm_factory`` builds an LLM from its spec (:func:`sunar.models.providers.make_llm`); an
    application that brings its own model object replaces it, and so do the tests that run the
    product in another process with a scripted model."""

    llm_factory: Callable[[str], LLM] = make_llm
    _built: dict[tuple, Resources] = field(default_factory=dict)
    _llms: dict[str, LLM] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _llm(self, spec: str) -> LLM:
        if spec not in self._llms:
            self._llms[spec] = self.llm_factory(spec)
        return self._llms[spec]

    def get(self, cfg: Configuration) -> Resources:
        key = (cfg.llm, cfg.scorer, cfg.nli, cfg.index_dir, cfg.chroma_url, cfg.neighbours, cfg.llm_cache, cfg.likelihood_llm)
        with self._lock:
            if key not in self._built:
                index = open_index(cfg)
                llm = self._llm(cfg.llm)
                cache = CallCache(cfg.llm_cache) if cfg.llm_cache else None
                scorer = make_scorer(cfg.scorer, getattr(index, "embedder", None))
                # GenSco's scorer LLM: the generative one unless likelihood_llm names another model
                same = cfg.likelihood_llm in ("", cfg.llm, llm.name)
                likelihood = None if same else self._llm(cfg.likelihood_llm)
                self._built[key] = Resources(llm, scorer, make_nli(cfg.nli, llm), index, cache, likelihood)
            return self._built[key]

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
