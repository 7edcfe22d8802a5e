"""RA-ISF's own settings, beside the fields every graph shares (:class:`~sunar.configuration.Configuration`):
its recursion depth and its three judges."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from sunar.configuration import Configuration


class RaIsfConfiguration(Configuration):
    """Settings of an RA-ISF run."""

    #: The judges as measured on dev questions 101-140 (benchmarks/RESULTS.md): the 1.5B model
    #: answered 1 of 40 from memory and its self-knowledge judge said yes to 22, so it is asked to be
    #: surer than any margin seen; its relevance judge is at chance and the scorer's score is not
    #: (1.36 is on the hybrid scorer's scale, the offline default; another scorer needs its own).
    #: One passage about the question's subject is relevant to a two-hop question yet one hop short
    #: (the scorer's judge let RA-ISF answer 28 of 40 dev questions at once, 1 of them right).
    cpu_profile = {"ra_isf_relevance": "scorer", "relevance_threshold": 1.36, "self_knowledge_threshold": 1.0, "ra_isf_min_relevant": 2}

    ra_isf_depth: int = Field(3, ge=0, le=10, description="RA-ISF: deepest recursion of sub-questions (D_th); past it a sub-question is 'unknown'.")
    ra_isf_relevance: Literal["llm", "scorer"] = Field(
        "llm",
        description="RA-ISF: who judges a passage's relevance: 'llm' (the LLM asked yes or no; the paper's judge is "
        "a fine-tuned 7B model) or 'scorer' (the scorer's score, a relevance model, without an LLM call).",
    )
    relevance_threshold: float = Field(
        0.0,
        ge=-50.0,
        le=50.0,
        description="RA-ISF: a passage is relevant when the judge's margin is above this: the LLM's logp(yes) - logp(no) "
        "(0: the argmax) or the scorer's score (benchmarks/bench_ra_isf_judges measures both).",
    )
    ra_isf_min_relevant: int = Field(
        1,
        ge=1,
        le=20,
        description="RA-ISF: the original question is answered from its relevant passages only when at least this many "
        "are relevant, else decomposed; a sub-question needs one. The paper's appendix judges the passages relevant and "
        "sufficient, which one passage about a multi-hop question's subject is not (1: the paper's rule).",
    )
    self_knowledge_threshold: float = Field(
        0.0,
        ge=-50.0,
        le=50.0,
        description="RA-ISF: the question is answered from memory when the self-knowledge judge's logp(yes) - logp(no) "
        "is above this (0: the argmax).",
    )
