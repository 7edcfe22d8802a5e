"""The state of the SUNAR graphs, and the input, output and records every graph shares.

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
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

# typing_extensions: pydantic (LangGraph Studio and MCP read the graphs' JSON schemas from it) needs its
# TypedDict and NotRequired on Python 3.11
from typing_extensions import TypedDict

from sunar.stores.corpus import Document

Pool = Literal["ranking", "neighbours"]
#: What a step that acted on a doubt did: a doubted final answer replaced by another answer found ("chose"), its chain of one hop gone one step further
#: ("went_on"), answered again by the larger model ("escalated"; kept or replaced, the notes say), or
#: left standing, no next step having been found ("stands"), or replaced by the answer of a second,
#: planned decomposition ("replanned").
Acted = Literal["chose", "went_on", "escalated", "stands", "replanned"]


class Evidence(TypedDict):
    """A document given to a prompt."""

    id: str
    title: str
    text: str
    score: float


class Cited(Evidence):
    """A page the reply cites (:mod:`sunar.citations`): whether the reasoning used it, and which steps did."""

    used: bool  # a step of the reasoning read its answer from it (listed first)
    steps: list[int]  # the steps of the reasoning path (1-based) that did
    final: bool  # the final step did: the top-scored page of the final evidence that holds the final answer


def evidence_of(docs: Sequence[Document], scores: Mapping[str, float]) -> list[Evidence]:
    """Evidence records of documents, with their scores (0 where none is given)."""
    return [Evidence(id=d.id, title=d.title, text=d.text, score=float(scores.get(d.id, 0.0))) for d in docs]


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


class Candidate(TypedDict):
    """One semantic set of a hop's answers: its representative and its share of the answers."""

    answer: str
    share: float


class Hop(TypedDict):
    """One Self-Ask step: the sub-question, its evidence and intermediate answer, its batches; with
    hop sampling, the answers sampled beside the greedy one and their semantic sets as candidates."""

    question: str
    answer: str
    evidence: list[Evidence]
    batches: list[Batch]
    samples: NotRequired[list[str]]  # [greedy answer, *sampled answers]
    candidates: NotRequired[list[Candidate]]  # their semantic sets, largest first (answer: the set's first member)
    read: NotRequired[list[str]]  # with focus_pages: the ids of the pages the answer was read from, when not all
    support: NotRequired[float | None]  # with hop_support: P(the pages it read state its answer), the LLM's yes/no
    unsupported: NotRequired[str]  # with hop_support=cut_uncertain: the answer read first, replaced by a better-supported one
    cut_read: NotRequired[str]  # with hop_support=cut_uncertain: what the hop's pages cut short and reversed read (kept or taken)
    escalated: NotRequired[str]  # with hop_support=escalate: the doubted answer escalate_llm read the hop again for


class Chain(TypedDict):
    """One line of reasoning: its hops, Self-Ask's own final answer, and its probability (the product
    of the shares of the candidates it took). An ``open`` chain waits to be followed; a ``done``
    one has ended (``answer``: what it concluded)."""

    hops: list[Hop]
    draft_answer: str
    weight: float
    status: Literal["open", "done"]
    answer: str


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
    confidence: float  # the number shown: the calibrated trust, or (not calibrated) the samples' agreement
    confidence_basis: str  # what that number is: the calibration it comes from, or why none applies
    reasoning_path: list[dict[str, str]]  # [{"question": sq_i, "answer": sa_i}, ...]
    evidence: list[Evidence]
    cited: list[Cited]  # the pages the reply cites, in its [n] order: those the reasoning used first, marked, then the rest of the evidence
    rationale: str
    hops: list[Hop]
    plan: list[str]  # replan_below's planned decomposition: the planned questions, "#k" standing for the k-th answer
    signals: dict[str, Any]  # the evidence of trust in the answer (sunar.signals), beside confidence
    trust: float | None  # the signals combined: the probability the answer is right (with a calibration)
    abstained: bool  # the trust is below min_trust: "I don't know", the answer only a best guess
    why: str  # what pulls the trust down most (when below one half or abstained)
    chains: list[Chain]  # chains branched off uncertain hops: open ones wait, done ones have ended
    chosen: int | None  # the done chain the final step read (None while chains are followed)
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
    weight: float  # the probability of the chain being followed (in ``hops``)
    judged: dict[str, float | None]  # with hop_support: the check's judge of the final answer (answer_fits, chain_support)
    went_on: bool  # unfit_answer=go_on: the chain went one step further once already
    replanned: str  # replan_below: "" not started, "pending", "planning" (the second, planned decomposition), "done"
    first_try: dict[str, Any]  # ... the first answer's outcome, kept while the planned chain runs (sunar.replan)
    compared: dict[str, Any]  # a comparison decided in code (sunar.compare): its answer and each side's value; {} when not
    acted: Acted  # what the last step that acted on a doubt did (the stream's and Studio's line; the notes say why)
