"""Entry node of every graph: take the question (plain ``question`` or the last human chat
message), check it, and clear what a previous question on the same thread left behind (the
shared output fields, and the graph's own per-question fields it names)."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import Overwrite

from sunar.configuration import Configuration
from sunar.errors import SunarError
from sunar.usage import node

#: The longest question, in UTF-8 bytes. Prompts are never truncated, and the question goes into
#: every prompt (twice into MER's) beside the few-shot turns and the documents, so it may take a
#: quarter of the embedded model's 4096-token context at most. A token is at least one byte, so
#: this bounds its tokens whatever the model's tokenizer (English: about 4 characters a token).
MAX_QUESTION_BYTES = 1024


def check_question(question: Any) -> str:
    """``question`` unchanged if a model can be asked it; else a one-line :class:`SunarError`:
    not text, not valid UTF-8 (Python keeps the bytes of a command-line argument that is not as surrogates),
    control characters (whitespace such as tabs and newlines is allowed), nothing to ask, or too
    long to fit the model's context (:data:`MAX_QUESTION_BYTES`)."""
    if not isinstance(question, str):
        raise SunarError(f"the question must be text, not {type(question).__name__}")
    for position, ch in enumerate(question, start=1):
        if "\ud800" <= ch <= "\udfff":
            raise SunarError(f"the question is not valid UTF-8 text (character {position}); write it in UTF-8")
        if unicodedata.category(ch) == "Cc" and not ch.isspace():
            raise SunarError(f"the question holds the control character U+{ord(ch):04X} at character {position}; remove it")
    if not question.strip():
        raise SunarError("the question is empty; ask something like: \"Where was the director of film Ronnie Rocket born?\"")
    if not any(ch.isalnum() for ch in question):
        raise SunarError("the question has no letters or digits; ask a question in words")
    size = len(question.encode("utf-8"))
    if size > MAX_QUESTION_BYTES:
        raise SunarError(
            f"the question is {size} bytes long; keep it under {MAX_QUESTION_BYTES} (UTF-8) so it fits the model's "
            "context beside the documents (prompts are never cut)"
        )
    return question


def validate_question(question: Any) -> str:
    """The question checked (:func:`check_question`), its whitespace collapsed to single spaces."""
    return " ".join(check_question(question).split())


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
        question = validate_question(asked if from_chat or state.get("question") is None else state.get("question"))
        return {
            "question": question,
            # a plain question joins the thread's history as a human message, like a chat one
            "messages": [] if from_chat else [HumanMessage(content=question)],
            "hops": [],
            "answer": "",
            "rationale": "",
            "confidence": 0.0,
            "signals": {},
            "trust": None,
            "abstained": False,
            "why": "",
            "evidence": [],
            "reasoning_path": [],
            "notes": Overwrite([]),  # the reducer appends; a new question starts with none
            **fresh,
        }

    return ask
