"""RA-ISF's work-list of question frames: the original question and its sub-questions at every
depth, each a :class:`~sunar.baselines.ra_isf.state.Frame` whose ``stage`` names the node that works
on it next (:func:`route`), and the caps that bound it. The nodes (:mod:`sunar.baselines.ra_isf.nodes`)
read and replace frames with these helpers only."""

from __future__ import annotations

import re
from typing import Any

from sunar.baselines.ra_isf.prompts import REFERENCE
from sunar.baselines.ra_isf.state import Basis, Frame, FrameStage
from sunar.prompts.answer import UNKNOWN
from sunar.state import Evidence
from sunar.text import restates

#: Most frames (the question and all its sub-questions, at every depth) per question. A chatty
#: model could otherwise decompose 4 ways at every level (1 + 4 + 16 + 64 frames at D_th = 3);
#: once the cap is reached a frame is answered as a leaf instead of decomposed.
MAX_FRAMES = 15
#: Most sub-questions kept from one decomposition (the prompt asks for two to four).
MAX_SUB_QUESTIONS = 4
#: Most graph steps one frame can take (next_frame twice, self_knowledge, answer three times,
#: retrieve, relevance, decompose, compose), used for the compiled graph's recursion limit.
STEPS_PER_FRAME = 10


def new_frame(fid: int, question: str, depth: int, parent: int | None, written: str = "") -> Frame:
    return Frame(
        id=fid, question=question, written=written, depth=depth, parent=parent, children=[], stage="self_knowledge",
        known=False, passages=[], relevant=[], basis="", answer="", evidence=[],
    )


def current(state: dict[str, Any]) -> tuple[list[Frame], Frame]:
    """A copy of the frame list (updates replace it whole) and the frame being worked on."""
    frames = list(state["frames"])
    return frames, dict(frames[state["current"]])  # type: ignore[return-value]


def put(frames: list[Frame], frame: Frame, **changes: Any) -> list[Frame]:
    frames[frame["id"]] = Frame(**{**frame, **changes})  # type: ignore[typeddict-item]
    return frames


def settle(frame: Frame, answer: str, basis: Basis, used: list[Evidence] | None = None) -> dict[str, Any]:
    """The fields that mark a frame done."""
    return {"answer": answer, "basis": basis, "evidence": list(used or []), "stage": "done"}


def usable(answer: str, question: str) -> bool:
    """Whether an answer can be used: not "unknown", has letters or digits, not the question again."""
    return answer != UNKNOWN and any(ch.isalnum() for ch in answer) and not restates(answer, question)


def route(state: dict[str, Any]) -> str:
    """The node that works next: the current frame's stage, ``next_frame`` once it is done or
    waits for its sub-questions, ``finish`` when the stack is empty."""
    fid = state.get("current")
    if fid is None:
        return "finish"
    stage: FrameStage = state["frames"][fid]["stage"]
    return "next_frame" if stage in ("done", "wait") else stage


def post_order(frames: list[Frame], fid: int = 0) -> list[Frame]:
    """The frames under ``fid`` in the order they were solved: sub-questions before their parent."""
    out: list[Frame] = []
    for child in frames[fid]["children"]:
        out += post_order(frames, child)
    return [*out, frames[fid]]


def pooled_evidence(frames: list[Frame], ids: list[int], limit: int) -> list[Evidence]:
    """The evidence of the given frames, first occurrence of each passage, at most ``limit``."""
    seen: dict[str, Evidence] = {}
    for fid in ids:
        for item in frames[fid]["evidence"]:
            seen.setdefault(item["id"], item)
    return list(seen.values())[:limit]


def fill_references(frame: Frame, frames: list[Frame]) -> tuple[str, list[str]]:
    """The sub-question with each #k replaced by the answer of its parent's k-th sub-question, and
    the references that could not be filled (not an earlier sub-question, or answered unknown)."""
    written = frame["written"] or frame["question"]
    if frame["parent"] is None:
        return written, []
    siblings = frames[frame["parent"]]["children"]
    position = siblings.index(frame["id"]) + 1
    missing: list[str] = []

    def fill(match: re.Match[str]) -> str:
        k = int(match.group(1))
        if 1 <= k < position:
            answer = frames[siblings[k - 1]]["answer"]
            if frames[siblings[k - 1]]["stage"] == "done" and answer != UNKNOWN:
                return answer
        missing.append(match.group(0))
        return match.group(0)

    return REFERENCE.sub(fill, written), missing


def ancestors(frames: list[Frame], frame: Frame) -> list[str]:
    """The frame's question and those of every frame above it."""
    questions, fid = [], frame["id"]
    while fid is not None:
        questions.append(frames[fid]["question"])
        fid = frames[fid]["parent"]
    return questions
