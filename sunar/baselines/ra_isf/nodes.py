"""RA-ISF's nodes: iterative self-feedback over an explicit work-list of question frames.

For each (sub-)question: a self-knowledge judgement (answer from memory when the LLM knows it);
otherwise retrieval and a relevance judgement per passage (answer from the relevant ones; the
original question needs ``ra_isf_min_relevant`` of them);
otherwise decomposition into sub-questions, solved the same way, and an answer composed from
theirs. The recursion is the ``stack`` of frame ids in :class:`~sunar.baselines.ra_isf.state.RaIsfState`: one node
per step, each working on the frame ``current`` and setting its ``stage`` (the node to run next
for it), so a person stepping through the graph sees every judgement. The frames and their caps
are :mod:`sunar.baselines.ra_isf.frames`; the settings RA-ISF's own
(:class:`~sunar.baselines.ra_isf.configuration.RaIsfConfiguration`).

Deliberate fall-backs, each leaving a note:
  * a frame deeper than ``ra_isf_depth`` (D_th) is "unknown" without any call;
  * a frame referring (#k) to a sub-answer that is unknown is "unknown" without any call;
  * an unusable answer (empty, "unknown", no letters or digits, the question echoed) from memory
    sends the frame to retrieval, from the relevant passages to decomposition;
  * a decomposition that breaks the format, only repeats the question, or finds no room under
    :data:`~sunar.baselines.ra_isf.frames.MAX_FRAMES`, makes the frame a leaf: answered from whatever was retrieved (a best
    guess), or "unknown" when nothing was;
  * a composition whose sub-answers are all unknown, or whose reply is unusable, does the same.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.baselines.ra_isf import prompts
from sunar.baselines.ra_isf.configuration import RaIsfConfiguration
from sunar.baselines.ra_isf.frames import (
    MAX_FRAMES,
    MAX_SUB_QUESTIONS,
    ancestors,
    current,
    fill_references,
    new_frame,
    pooled_evidence,
    post_order,
    put,
    settle,
    usable,
)
from sunar.baselines.ra_isf.prompts import ANSWER_SCHEMA, SCHEMA, parse_sub_questions, read_answer
from sunar.configuration import Configuration
from sunar.prompts.answer import UNKNOWN, short_call
from sunar.resources import resources
from sunar.state import Evidence, Hop, evidence_of
from sunar.usage import node


@node("start")
def start(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """The work-list holds the original question alone."""
    return {"frames": [new_frame(0, state["question"], 0, None)], "stack": [0], "current": None}


@node("next_frame")
def next_frame(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """Take the top of the stack: drop frames that are done, settle without a call the ones past
    the depth limit or with an unresolvable reference, and return the first that needs work (a new
    frame, or one whose sub-questions are all answered: to compose)."""
    cfg = RaIsfConfiguration.from_runnable_config(config)
    frames, stack, notes = list(state["frames"]), list(state["stack"]), []
    while stack:
        frame = frames[stack[-1]]
        if frame["stage"] == "done":
            stack.pop()
            continue
        if frame["stage"] == "wait":
            if any(frames[c]["stage"] != "done" for c in frame["children"]):
                raise RuntimeError(f"frame {frame['id']} is on top of the stack before its sub-questions")
            return {"frames": put(frames, frame, stage="compose"), "stack": stack, "current": frame["id"], "notes": notes}
        question, missing = fill_references(frame, frames)
        if frame["depth"] > cfg.ra_isf_depth:
            put(frames, frame, question=question, **settle(frame, UNKNOWN, "depth_limit"))
            notes.append(f"{question!r} is deeper than the depth limit ({cfg.ra_isf_depth}); answered unknown")
            continue
        if missing:
            put(frames, frame, question=question, **settle(frame, UNKNOWN, "unresolved"))
            notes.append(f"{question!r} needs the answer {', '.join(missing)}, which is unknown; answered unknown")
            continue
        return {"frames": put(frames, frame, question=question), "stack": stack, "current": frame["id"], "notes": notes}
    return {"frames": frames, "stack": stack, "current": None, "notes": notes}


def _yes(scores: dict[str, float], threshold: float = 0.0) -> bool:
    yes, no = prompts.LABELS
    return scores[yes] - scores[no] > threshold


@node("self_knowledge")
def self_knowledge(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """Can the LLM answer the question from memory alone?"""
    frames, frame = current(state)
    threshold = RaIsfConfiguration.from_runnable_config(config).self_knowledge_threshold
    known = _yes(resources(config).llm.judge(prompts.know_messages(frame["question"]), prompts.LABELS), threshold)
    changes: dict[str, Any] = {"known": known, "stage": "answer", "basis": "self"} if known else {"known": False, "stage": "retrieve"}
    return {"frames": put(frames, frame, **changes)}


def reranked(res: Any, question: str, cfg: Configuration) -> list[Evidence]:
    """First-stage ranking, the top ``budget`` re-ranked by the scorer, the best ``evidence`` kept."""
    ranking = res.index.first_stage(question, cfg.first_stage_depth, cfg.first_stage)
    docs = res.index.documents([doc_id for doc_id, _ in ranking[: max(1, cfg.budget)]])
    if not docs:
        return []
    scores = dict(zip([d.id for d in docs], res.scorer.score(question, docs), strict=True))
    return evidence_of(sorted(docs, key=lambda d: -scores[d.id])[: max(1, cfg.evidence)], scores)


@node("retrieve")
def retrieve(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """The frame's passages (:func:`reranked`); none sends it to decomposition."""
    frames, frame = current(state)
    question = frame["question"]
    passages = reranked(resources(config), question, RaIsfConfiguration.from_runnable_config(config))
    notes = [] if passages else [f"nothing retrieved for {question!r}; decomposing it"]
    return {"frames": put(frames, frame, passages=passages, stage="relevance" if passages else "decompose"), "notes": notes}


@node("relevance")
def relevance(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """Judge each retrieved passage's relevance to the question: the LLM's yes or no, or the
    scorer's score (it ranked the passages already; no call). The original question needs
    ``ra_isf_min_relevant`` relevant passages to be answered from them, a sub-question one."""
    llm, cfg = resources(config).llm, RaIsfConfiguration.from_runnable_config(config)
    frames, frame = current(state)
    if cfg.ra_isf_relevance == "scorer":
        relevant = [p["id"] for p in frame["passages"] if p["score"] > cfg.relevance_threshold]
    else:
        relevant = [
            p["id"] for p in frame["passages"]
            if _yes(llm.judge(prompts.relevance_messages(frame["question"], p), prompts.LABELS), cfg.relevance_threshold)
        ]
    needed = cfg.ra_isf_min_relevant if frame["parent"] is None else 1
    if len(relevant) >= needed:
        return {"frames": put(frames, frame, relevant=relevant, stage="answer", basis="passages")}
    notes = [f"{len(relevant)} relevant passage(s) for the question, fewer than ra_isf_min_relevant ({needed}); decomposing it"] if relevant else []
    return {"frames": put(frames, frame, relevant=relevant, stage="decompose"), "notes": notes}


@node("answer")
def answer(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """Answer the frame from memory, from its relevant passages, or (a leaf) from all it retrieved."""
    cfg = RaIsfConfiguration.from_runnable_config(config)
    frames, frame = current(state)
    question, basis = frame["question"], frame["basis"]
    if basis == "self":
        used: list[Evidence] = []
        messages = prompts.self_answer_messages(question)
    elif basis == "passages":
        used = [p for p in frame["passages"] if p["id"] in set(frame["relevant"])]
        messages = prompts.passage_answer_messages(question, used, guess=False)
    else:  # leaf
        used = list(frame["passages"])
        if not used:
            return {"frames": put(frames, frame, **settle(frame, UNKNOWN, "leaf")), "notes": [f"nothing to answer {question!r} from; answered unknown"]}
        messages = prompts.passage_answer_messages(question, used, guess=True)
    reply = resources(config).llm.generate(
        messages, temperature=0.0, config=config, **short_call(cfg, ANSWER_SCHEMA),
    )
    text = read_answer(str(reply.content))
    if usable(text, question):
        return {"frames": put(frames, frame, **settle(frame, text, basis, used))}
    if basis == "self":
        note, changes = "the answer from memory was unusable; retrieving", {"stage": "retrieve", "basis": ""}
    elif basis == "passages":
        note, changes = "the relevant passages gave no usable answer; decomposing", {"stage": "decompose", "basis": ""}
    else:
        note, changes = "the leaf answer was unusable; answered unknown", settle(frame, UNKNOWN, "leaf", used)
    return {"frames": put(frames, frame, **changes), "notes": [f"{question!r}: {note} (reply {str(reply.content)[:60]!r})"]}


@node("decompose")
def decompose(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """Split the question into sub-questions, pushed above it (first on top); or make it a leaf."""
    cfg = RaIsfConfiguration.from_runnable_config(config)
    frames, frame = current(state)
    question, leaf = frame["question"], {"stage": "answer", "basis": "leaf"}
    room = min(MAX_SUB_QUESTIONS, MAX_FRAMES - len(frames))
    if room <= 0:
        return {"frames": put(frames, frame, **leaf), "notes": [f"frame cap ({MAX_FRAMES}) reached; {question!r} answered as a leaf"]}
    reply = resources(config).llm.generate(
        prompts.decompose_messages(question), temperature=0.0, max_tokens=cfg.max_tokens, config=config, schema=cfg.reply_schema(SCHEMA),
    )
    subs, notes = parse_sub_questions(str(reply.content), ancestors(frames, frame))
    if not subs:
        notes.append(f"the decomposition of {question!r} gave no usable sub-question ({str(reply.content)[:80]!r}); answered as a leaf")
        return {"frames": put(frames, frame, **leaf), "notes": notes}
    if len(subs) > room:
        notes.append(f"{len(subs)} sub-questions for {question!r}; kept the first {room} (at most {MAX_SUB_QUESTIONS} each, {MAX_FRAMES} frames in all)")
        subs = subs[:room]
    first = len(frames)
    children = [new_frame(first + i, sub, frame["depth"] + 1, frame["id"], written=sub) for i, sub in enumerate(subs)]
    frames = put([*frames, *children], frame, children=[c["id"] for c in children], stage="wait")
    stack = [*state["stack"], *reversed([c["id"] for c in children])]
    return {"frames": frames, "stack": stack, "notes": notes}


@node("compose")
def compose(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """Answer the question from its sub-questions' answers; a leaf when they are all unknown."""
    cfg = RaIsfConfiguration.from_runnable_config(config)
    frames, frame = current(state)
    question, leaf = frame["question"], {"stage": "answer", "basis": "leaf"}
    solved = [(frames[c]["question"], frames[c]["answer"]) for c in frame["children"]]
    if all(a == UNKNOWN for _, a in solved):
        return {"frames": put(frames, frame, **leaf), "notes": [f"every sub-question of {question!r} is unknown; answered as a leaf"]}
    reply = resources(config).llm.generate(
        prompts.compose_messages(question, solved), temperature=0.0, config=config, **short_call(cfg, ANSWER_SCHEMA),
    )
    text = read_answer(str(reply.content))
    if not usable(text, question):
        return {"frames": put(frames, frame, **leaf), "notes": [f"no usable answer composed for {question!r} ({str(reply.content)[:60]!r}); answered as a leaf"]}
    used = pooled_evidence(frames, frame["children"], max(1, cfg.evidence))
    return {"frames": put(frames, frame, **settle(frame, text, "sub_answers", used))}


@node("finish")
def finish(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """The original question's answer; the sub-questions as hops in the order they were solved; the
    passages the answer used (a composed answer's evidence is re-ranked by ``gather`` next)."""
    frames = state["frames"]
    root = frames[0]
    hops = [Hop(question=f["question"], answer=f["answer"], evidence=f["evidence"], batches=[]) for f in post_order(frames)[:-1]]
    return {"answer": root["answer"], "hops": hops, "evidence": [] if root["basis"] == "sub_answers" else root["evidence"]}


def after_finish(state: dict[str, Any]) -> str:
    return "gather" if state["frames"][0]["basis"] == "sub_answers" else "confidence"
