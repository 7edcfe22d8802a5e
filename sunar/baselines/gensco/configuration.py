"""GenSco's own settings, beside the fields every graph shares (:class:`~sunar.configuration.Configuration`).

:class:`PoolConfiguration` is the fixed candidate pool, which ``rag`` borrows with GenSco's reader;
:class:`GenscoConfiguration` adds the candidates the scorer LLM compares per step. The scorer LLM
itself is the shared ``likelihood_llm`` (a model the resources load, as every graph's are).
"""

from __future__ import annotations

from pydantic import Field

from sunar.configuration import Configuration


class PoolConfiguration(Configuration):
    """A question's fixed pool of candidate passages (GenSco's, and ``rag``'s)."""

    cpu_profile = {"gensco_pool": 10}

    gensco_pool: int = Field(
        20,
        ge=1,
        le=100,
        description="GenSco and rag: passages in a question's fixed candidate pool when the input gives none (pool_ids): "
        "the first stage of the question, this deep (the paper's pools hold 10-20 passages).",
    )


class GenscoConfiguration(PoolConfiguration):
    """Settings of a GenSco run (``gensco``, ``gensco_stop``)."""

    cpu_profile = {"gensco_candidates": 5}

    gensco_candidates: int = Field(
        20,
        ge=1,
        le=100,
        description="GenSco: candidate passages the scorer LLM compares per step: the pool's passages not chosen yet, "
        "pre-ranked by the scorer against the sub-question, top ones (the whole pool, as in the paper, when it is no larger).",
    )
