"""The reply: an AI message with the answer and its cited evidence (for chat apps), and the
structured reasoning path in the state."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig

from sunar.usage import node


def confidence_lines(answer: str, confidence: float, trust: float | None, abstained: bool, why: str, basis: str) -> list[str]:
    """The answer and what to make of it, in words that never contradict each other: a calibrated
    probability that it is right (with what pulls it down, below one half), the samples' agreement
    named as such where no calibration applies, and "I don't know" with the best guess below the
    level the user asked for (``min_trust``)."""
    if abstained:
        level = f"{trust:.0%} likely right, below the level set to answer" if trust is not None else basis
        return ["I don't know.", f"Best guess: {answer} ({level}).", *([f"Why: {why}."] if why and trust is not None else [])]
    if trust is None:
        return [answer, "", f"Sampled answers agreeing with it: {confidence:.0%} (not a probability of being right; {basis})."]
    lines = [answer, "", f"Confidence: {trust:.0%} that this is right ({basis})."]
    return lines + ([f"Doubts: {why}."] if why else [])


def reply_text(state: dict[str, Any], evidence: list[dict], path: list[dict]) -> str:
    """The chat reply: the answer and its confidence, the reasoning path and the cited evidence."""
    lines = confidence_lines(
        state["answer"], state.get("confidence", 0.0), state.get("trust"), bool(state.get("abstained")), state.get("why", ""),
        state.get("confidence_basis", ""),
    )
    if path:
        lines += ["", "Reasoning:"] + [f"{i}. {step['question']} -> {step['answer']}" for i, step in enumerate(path, 1)]
    if evidence:
        lines += ["", "Evidence:"] + [f"[{i}] {e['title']} ({e['id']})" for i, e in enumerate(evidence, 1)]
    return "\n".join(lines)


@node("respond")
def respond(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    path = [{"question": h["question"], "answer": h["answer"], **({"candidates": h["candidates"]} if h.get("candidates") else {})} for h in state.get("hops") or []]
    evidence = state.get("evidence") or []
    text = reply_text(state, evidence, path)
    return {"reasoning_path": path, "messages": [AIMessage(content=text, name="sunar")]}
