"""RA-ISF (retrieval-augmented iterative self-feedback) as an explicit LangGraph state machine.

    ask -> start -> next_frame --(a new frame)--> self_knowledge --(known)--> answer
                      ^    |                           | (not known)            |
                      |    |                           v                        |
                      |    |      retrieve --(passages)--> relevance --(some relevant)--> answer
                      |    |         | (none)                  | (none relevant)
                      |    |         v                         v
                      |    |      decompose <------------------+
                      |    |         |--(sub-questions pushed)--> next_frame
                      |    |         +--(broken / repeated / frame cap: a leaf)--> answer
                      |    +--(its sub-questions are done)--> compose --> next_frame (or answer, a leaf)
                      +---------- answer (done; or back to retrieve / decompose when unusable)
    next_frame --(stack empty)--> finish -> gather (a composed answer) -> confidence -> respond

The recursion lives in the state (``frames``, ``stack``, ``current``; see
:class:`~sunar.baselines.ra_isf.state.RaIsfState` and :mod:`~sunar.baselines.ra_isf.nodes`),
so every judgement is one step.
Frames deeper than ``ra_isf_depth`` (D_th) are "unknown"; at most
:data:`~sunar.baselines.ra_isf.frames.MAX_FRAMES` frames per question.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from sunar.baselines.ra_isf.configuration import RaIsfConfiguration
from sunar.baselines.ra_isf.frames import MAX_FRAMES, STEPS_PER_FRAME, route
from sunar.baselines.ra_isf.nodes import (
    after_finish,
    answer,
    compose,
    decompose,
    finish,
    next_frame,
    relevance,
    retrieve,
    self_knowledge,
    start,
)
from sunar.baselines.ra_isf.state import RaIsfState
from sunar.configuration import SUNAR_ONLY
from sunar.nodes.ask import make_ask
from sunar.nodes.confidence import make_confidence
from sunar.nodes.gather import gather
from sunar.nodes.respond import respond
from sunar.state import InputState, OutputState
from sunar.streaming import describe_common

#: Enough graph steps for MAX_FRAMES frames and the nodes around them (LangGraph's default of 25
#: would stop a question with two sub-questions). A caller's own recursion_limit wins.
RECURSION_LIMIT = MAX_FRAMES * STEPS_PER_FRAME + 20


def build_ra_isf(variant: str = "ra_isf", checkpointer: Any = None) -> Any:
    g = StateGraph(RaIsfState, context_schema=RaIsfConfiguration, input_schema=InputState, output_schema=OutputState)
    g.add_node("ask", make_ask({}))
    g.add_node("start", start)
    g.add_node("next_frame", next_frame)
    g.add_node("self_knowledge", self_knowledge)
    g.add_node("retrieve", retrieve)
    g.add_node("relevance", relevance)
    g.add_node("answer", answer)
    g.add_node("decompose", decompose)
    g.add_node("compose", compose)
    g.add_node("finish", finish)
    g.add_node("gather", gather)
    g.add_node("confidence", make_confidence(variant, RaIsfConfiguration, unread=SUNAR_ONLY))
    g.add_node("respond", respond)

    g.add_edge(START, "ask")
    g.add_edge("ask", "start")
    g.add_edge("start", "next_frame")
    # Each router reads the current frame's stage; the lists are the only ways each node can go.
    g.add_conditional_edges("next_frame", route, ["self_knowledge", "compose", "finish"])
    g.add_conditional_edges("self_knowledge", route, ["answer", "retrieve"])
    g.add_conditional_edges("retrieve", route, ["relevance", "decompose"])
    g.add_conditional_edges("relevance", route, ["answer", "decompose"])
    g.add_conditional_edges("decompose", route, ["next_frame", "answer"])
    g.add_conditional_edges("answer", route, ["next_frame", "retrieve", "decompose"])
    g.add_conditional_edges("compose", route, ["next_frame", "answer"])
    g.add_conditional_edges("finish", after_finish, ["gather", "confidence"])
    g.add_edge("gather", "confidence")
    g.add_edge("confidence", "respond")
    g.add_edge("respond", END)
    return g.compile(checkpointer=checkpointer, name=variant).with_config(recursion_limit=RECURSION_LIMIT)


def describe_step(node: str, update: dict[str, Any], state: dict[str, Any]) -> str | None:
    """One line for an RA-ISF node's state update, as ``sunar ask --stream`` shows it: what the
    node decided about the frame it worked on (``state`` is the state before the node)."""
    frames = update.get("frames") or state.get("frames") or []
    current = update["current"] if "current" in update else state.get("current")
    frame = frames[current] if current is not None and current < len(frames) else None
    if node == "next_frame":
        if frame is None:
            return "every frame is done"
        return f"{'compose' if frame['stage'] == 'compose' else 'work on'} (depth {frame['depth']}): {frame['question']}"
    if frame is None or node not in ("self_knowledge", "retrieve", "relevance", "decompose", "answer", "compose"):
        return describe_common(node, update)
    if node == "self_knowledge":
        return f"known from memory: {'yes' if frame.get('known') else 'no'}"
    if node == "retrieve":
        return f"{len(frame.get('passages') or [])} passages"
    if node == "relevance":
        return f"{len(frame.get('relevant') or [])} of {len(frame.get('passages') or [])} passages judged relevant"
    if node == "decompose" and frame.get("children"):
        return "sub-questions: " + " | ".join(frames[c]["question"] for c in frame["children"])
    if frame.get("stage") == "done":
        return f"answer ({frame.get('basis')}): {frame.get('answer')}"
    return f"no usable result; next: {frame.get('stage')}"

