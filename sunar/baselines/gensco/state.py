"""GenSco's state: the shared input and output, and the selection's own fields."""

from __future__ import annotations

from typing import Literal

from sunar.state import Evidence, InputState, OutputState

#: Why GenSco stopped selecting passages ("" while it goes on): the generator had enough, it
#: repeated a sub-question or broke the format, the hop limit, no candidate left, or (gensco_stop)
#: the question's log-likelihood stopped improving.
Halt = Literal["", "enough", "repeat", "format", "hop_limit", "no_candidates", "no_gain"]


class PoolInput(InputState, total=False):
    """GenSco's input: a question, and optionally its own candidate passages by id (a dataset's
    pool of gold and distractor paragraphs, as the paper uses); without them the pool is the first
    stage of the question."""

    pool_ids: list[str]


class PoolState(PoolInput, OutputState, total=False):
    """What the graphs that choose from a pool share (GenSco, rag): the pool, fixed per question."""

    pool: list[Evidence]  # the question's candidate passages, fixed for the whole selection


class GenScoState(PoolState, total=False):
    """GenSco's whole state. Each step adds one ``hops`` entry: the sub-question, the one passage
    chosen for it (``evidence``, with its log-likelihood as score), ``answer`` = "passage: <title>"
    (GenSco answers no sub-question) and one batch recording every candidate's log-likelihood.
    ``evidence`` is the selected passage sequence, in order, out of ``pool``; ``sub_question`` the
    one being worked on."""

    sub_question: str  # the sub-question being worked on ("" once the selection stops)
    candidates: list[Evidence]  # passages the scorer LLM compares for sub_question (scorer score)
    question_loglik: list[float]  # gensco_stop: log P(question | decomposition) after each step
    halt: Halt
