"""State schemas of the SUNAR graphs.

The state is small enough to checkpoint: documents are kept by id with their scores, and text only
for the evidence that prompts use. Names follow Algorithm 1 of the paper:

    R   ``ranking``      the first-stage ranking of the current sub-question, not yet scored
    N   ``frontier``     graph neighbours of scored documents, not yet scored, with priorities
    C   ``pool``         which of R and N the next batch comes from
    R+  ``scored``       every document scored so far for this sub-question, with its final score
    B   ``batch``        the batch being processed (scored, then answered, clustered, rescored)
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

Pool = Literal["ranking", "neighbours"]


class Evidence(TypedDict):
    """A document given to a prompt."""

    id: str
    title: str
    text: str
    score: float


class Batch(TypedDict, total=False):
    """One NAR iteration: where B came from, its scores before and after rescoring, the sampled
    answers and their semantic sets (the record that makes the algorithm inspectable)."""

    source: Pool
    ids: list[str]
    scores: list[float]  # scorer (cross-encoder) scores
    rescored: list[float]  # after rescoring (score / s, or the official penalty)
    answers: list[str]  # m sampled answers given (sub-question, B)
    sets: list[list[int]]  # semantic sets of ``answers`` (indices); s = len(sets)
    contradictions: int  # answer pairs judged contradictory (the official formula)
    missing: list[str]  # ids the store could not return (dropped from the pools, unscored)


class Hop(TypedDict):
    """One Self-Ask step: the sub-question, its evidence and intermediate answer, its batches."""

    question: str
    answer: str
    evidence: list[Evidence]
    batches: list[Batch]


def merge_usage(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer: add up counters, including nested per-node counters."""
    out: dict[str, Any] = dict(left or {})
    for key, value in (right or {}).items():
        if isinstance(value, dict):
            out[key] = merge_usage(out.get(key), value)
        else:
            out[key] = out.get(key, 0) + value
    return out


class InputState(TypedDict, total=False):
    """What a caller gives: a ``question``, or chat ``messages`` (the last human one is asked)."""

    question: str
    messages: Annotated[list[AnyMessage], add_messages]


class OutputState(TypedDict, total=False):
    """What a caller gets back."""

    question: str
    messages: Annotated[list[AnyMessage], add_messages]
    answer: str
    confidence: float
    reasoning_path: list[dict[str, str]]  # [{"question": sq_i, "answer": sa_i}, ...]
    evidence: list[Evidence]
    rationale: str
    hops: list[Hop]
    usage: Annotated[dict[str, Any], merge_usage]
    notes: Annotated[list[str], operator.add]  # deliberate fall-backs taken (format breaks, limits)


class SunarState(InputState, OutputState, total=False):
    """The whole state. Per-sub-question NAR fields are reset when a new sub-question starts."""

    sub_question: str  # sq_i being worked on ("" when Self-Ask is done)
    draft_answer: str  # Self-Ask's own final answer, when it gave one
    ranking: list[tuple[str, float]]  # R
    frontier: list[tuple[str, float]]  # N, highest priority first
    pool: Pool  # C
    scored: dict[str, float]  # R+
    batch: Batch  # B
    batches: list[Batch]  # this sub-question's batches so far


# ----------------------------------------------------------------------------------------------
# GenSco's state
# ----------------------------------------------------------------------------------------------

#: Why GenSco stopped selecting passages ("" while it goes on): the generator had enough, it
#: repeated a sub-question or broke the format, the hop limit, no candidate left, or (gensco_stop)
#: the question's log-likelihood stopped improving.
Halt = Literal["", "enough", "repeat", "format", "hop_limit", "no_candidates", "no_gain"]


class GenScoState(SunarState, total=False):
    """GenSco's whole state. Each step adds one ``hops`` entry: the sub-question, the one passage
    chosen for it (``evidence``, with its log-likelihood as score), ``answer`` = "passage: <title>"
    (GenSco answers no sub-question) and one batch recording every candidate's log-likelihood.
    ``evidence`` is the selected passage sequence, in order; ``sub_question`` the one being worked on."""

    candidates: list[Evidence]  # passages the scorer LLM compares for sub_question (scorer score)
    question_loglik: list[float]  # gensco_stop: log P(question | decomposition) after each step
    halt: Halt


# ----------------------------------------------------------------------------------------------
# RA-ISF's state
# ----------------------------------------------------------------------------------------------

#: What a frame waits for: the name of the node that works on it next, "wait" (its sub-questions
#: are on the stack above it) or "done".
FrameStage = Literal["self_knowledge", "retrieve", "relevance", "answer", "decompose", "wait", "compose", "done"]
#: Where a frame's answer came from: "self" (the LLM's own knowledge), "passages" (the passages
#: judged relevant), "leaf" (all retrieved passages, when decomposition gave nothing usable),
#: "sub_answers" (composed from its sub-questions' answers), or "unknown" set without a call:
#: "depth_limit" (deeper than D_th), "unresolved" (it refers to a sub-answer that is unknown).
Basis = Literal["", "self", "passages", "leaf", "sub_answers", "depth_limit", "unresolved"]


class Frame(TypedDict, total=False):
    """One (sub-)question of RA-ISF's recursion, kept in ``frames`` by its ``id``."""

    id: int
    question: str  # as worked on: references to earlier sub-answers (#1, #2) filled in
    written: str  # as the decomposition wrote it ("" for the original question)
    depth: int  # 0 for the original question
    parent: int | None
    children: list[int]  # ids of its sub-questions, in the decomposition's order
    stage: FrameStage
    known: bool  # the self-knowledge judgement
    passages: list[Evidence]  # retrieved and re-ranked
    relevant: list[str]  # ids of the passages judged relevant
    basis: Basis
    answer: str
    evidence: list[Evidence]  # the passages its answer used


class RaIsfState(InputState, OutputState, total=False):
    """RA-ISF's whole state: the recursion as an explicit work-list. ``stack`` holds frame ids, the
    one being worked on last; a frame's sub-questions are pushed above it, first one on top, and
    it is composed when they are all done. ``hops`` (output) lists the solved sub-questions in the
    order they were solved."""

    frames: list[Frame]
    stack: list[int]
    current: int | None  # the frame being worked on (None: the stack is empty)
