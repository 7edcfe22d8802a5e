"""RA-ISF's state: the shared input and output, and the recursion as an explicit work-list of
question frames."""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict  # pydantic reads the schema (Studio, MCP): it needs this one on Python 3.11

from sunar.state import Evidence, InputState, OutputState

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
