"""The reply: an AI message with the answer and its cited evidence (for chat apps), and the
structured reasoning path and the cited pages in the state. The evidence list names first the
pages the reasoning used, each marked with the steps that used it (:mod:`sunar.citations`), then
the rest of the evidence."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig

from sunar.citations import cited, used_words
from sunar.result import confidence_lines
from sunar.usage import node

#: What the reasoning path shows of a hop beside its question and answer, where the hop has it.
PATH_EXTRAS = ("candidates", "support", "unsupported", "escalated")


def reply_text(state: dict[str, Any], evidence: list[dict], path: list[dict]) -> str:
    """The chat reply: the answer and its confidence, the reasoning path and the cited evidence
    (:func:`sunar.citations.cited`: a used page's line ends with how it was used)."""
    lines = confidence_lines(
        state["answer"], state.get("confidence", 0.0), state.get("trust"), bool(state.get("abstained")), state.get("why", ""),
        state.get("confidence_basis", ""),
    )
    if path:
        lines += ["", "Reasoning:"] + [f"{i}. {step['question']} -> {step['answer']}" for i, step in enumerate(path, 1)]
    if evidence:
        lines += ["", "Evidence:"] + [f"[{i}] {e['title']} ({e['id']})" + (f" — {used_words(e)}" if e.get("used") else "") for i, e in enumerate(evidence, 1)]
    return "\n".join(lines)


@node("respond")
def respond(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    path = [{"question": h["question"], "answer": h["answer"], **{k: h[k] for k in PATH_EXTRAS if h.get(k) not in (None, [], "")}} for h in state.get("hops") or []]
    pages = cited(state)
    text = reply_text(state, pages, path)
    return {"reasoning_path": path, "cited": pages, "messages": [AIMessage(content=text, name="sunar")]}
