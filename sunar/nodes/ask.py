"""Entry node of every graph: take the question (plain ``question`` or the last human chat
message), check it, and clear what a previous question on the same thread left behind (the
shared output fields, and the graph's own per-question fields it names)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import Overwrite

from sunar.configuration import Configuration
from sunar.errors import SunarError
from sunar.question import validate_question
from sunar.usage import node


def latest_human_text(messages: list[Any]) -> str | None:
    for message in reversed(messages or []):
        if getattr(message, "type", None) == "human":
            content = message.content
            if isinstance(content, list):  # multimodal content blocks: keep the text parts
                content = " ".join(b.get("text", "") for b in content if isinstance(b, dict))
            return content
    return None


def make_ask(fresh: Mapping[str, Any]) -> Callable[[dict[str, Any], RunnableConfig], dict[str, Any]]:
    """The entry node of a graph whose own per-question fields start as ``fresh``."""

    @node("ask", first=True)
    def ask(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        Configuration.from_runnable_config(config)  # a bad setting stops the run here, before any work
        messages = state.get("messages") or []
        asked = latest_human_text(messages)
        last = messages[-1] if messages else None
        # A new human message on a chat thread is a new question; otherwise the plain field is asked.
        from_chat = last is not None and last.type == "human"
        chosen = asked if from_chat or state.get("question") is None else state.get("question")
        if chosen is None:  # neither field holds one (an empty chat, only AI turns)
            raise SunarError('no question was sent; send {"question": "..."} or {"messages": [...]} ending with a human message')
        question = validate_question(chosen)
        return {
            "question": question,
            # a plain question joins the thread's history as a human message, like a chat one
            "messages": [] if from_chat else [HumanMessage(content=question)],
            "hops": [],
            "answer": "",
            "rationale": "",
            "confidence": 0.0,
            "confidence_basis": "",
            "signals": {},
            "trust": None,
            "abstained": False,
            "why": "",
            "evidence": [],
            "cited": [],
            "reasoning_path": [],
            "notes": Overwrite([]),  # the reducer appends; a new question starts with none
            **fresh,
        }

    return ask
