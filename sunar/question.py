"""Whether a question can be asked: the one check every way in uses (the graphs' entry node, the
CLI, the OpenAI endpoint, the eval's question files), with a one-line error that says what to do."""

from __future__ import annotations

import unicodedata
from typing import Any

from sunar.errors import SunarError

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
