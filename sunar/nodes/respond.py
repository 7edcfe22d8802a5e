"""The reply: an AI message with the answer and its cited evidence (for chat apps), and the
structured reasoning path in the state."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig

from sunar.usage import node


def best_guess(why: str) -> str:
    """The line saying the product does not stand behind the answer, and why."""
    return f"Not sure: this is a best guess. Why: {why}."


def reply_text(answer: str, confidence: float, evidence: list[dict], path: list[dict], why: str = "") -> str:
    """The chat reply: the answer on the first line; below it the confidence, and, when the product
    does not stand behind the answer, that it is a best guess and why."""
    lines = [answer, "", f"Confidence: {confidence:.0%}"]
    if why:
        lines += ["", best_guess(why)]
    if path:
        lines += ["", "Reasoning:"] + [f"{i}. {step['question']} -> {step['answer']}" for i, step in enumerate(path, 1)]
    if evidence:
        lines += ["", "Evidence:"] + [f"[{i}] {e['title']} ({e['id']})" for i, e in enumerate(evidence, 1)]
    return "\n".join(lines)


@node("respond")
def respond(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    path = [{"question": h["question"], "answer": h["answer"], **({"candidates": h["candidates"]} if h.get("candidates") else {})} for h in state.get("hops") or []]
    evidence = state.get("evidence") or []
    why = state.get("why", "") if state.get("abstained") else ""
    text = reply_text(state["answer"], state.get("confidence", 0.0), evidence, path, why)
    return {"reasoning_path": path, "messages": [AIMessage(content=text, name="sunar")]}
