"""A short answer to a (sub-)question from documents (NAR's answer sampling, a hop's intermediate
answer, Self-Ask's own conclusion, the confidence samples), and :func:`clean_answer`, which reads
every short answer the product asks for. The reply is the JSON object :data:`SCHEMA`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from sunar.prompts.structured import as_reply, object_schema, read_object
from sunar.text import normalize_answer

UNKNOWN = "unknown"
#: Gold answers of the dev data are at most 61 characters.
SCHEMA = object_schema(answer=80)
#: Most tokens a short answer may take (80 characters are well under it).
SHORT_TOKENS = 48

SYSTEM = (
    "Answer the question from the documents. Reply with a JSON object {\"answer\": \"...\"} holding the "
    "short answer only (a name, place, date or a few words), no sentence. If the documents do not "
    "say, give your best guess."
)


def documents_block(evidence: Sequence[dict]) -> str:
    """Numbered documents, "[i] title: text", as every evidence prompt shows them."""
    if not evidence:
        return "(no documents found)"
    return "\n".join(f"[{i}] {e['title']}: {e['text']}" for i, e in enumerate(evidence, start=1))


#: Invented worked examples, (documents, question, answer): the reply is the short phrase, never a
#: sentence (a 1.5B model otherwise often answers with one). They are the same for every prompt,
#: so llama.cpp keeps them in its KV cache.
EXAMPLES: list[tuple[list[dict], str, str]] = [
    (
        [{"title": "Kalmar Castle", "text": "Kalmar Castle is a castle in the city of Kalmar, in the province of Smaland in Sweden."}],
        "In which province is Kalmar Castle?",
        "Smaland",
    ),
    (
        [{"title": "The Lighthouse Keeper (novel)", "text": "The Lighthouse Keeper is a 1994 novel by the Irish writer Maeve Brennan-Quinn. It was first published on 3 May 1994."}],
        "When was The Lighthouse Keeper first published?",
        "3 May 1994",
    ),
]


def ask_message(question: str, evidence: Sequence[dict]) -> HumanMessage:
    """A question and its numbered documents, as every reading prompt asks it."""
    return HumanMessage(f"Documents:\n{documents_block(evidence)}\n\nQuestion: {question}")


def answer_messages(question: str, evidence: Sequence[dict]) -> list[BaseMessage]:
    """The rule, the worked examples as turns, then this question and its documents."""
    messages: list[BaseMessage] = [SystemMessage(SYSTEM)]
    for docs, example, short in EXAMPLES:
        messages += [ask_message(example, docs), AIMessage(as_reply(answer=short))]
    return [*messages, ask_message(question, evidence)]


_LABEL = r"(short answer|answer|intermediate answer|final answer)"
#: A leading label: "Answer: X", or bracketed as MER is asked to write it, where small models
#: sometimes drop the colon ("[Final Answer] X").
_LEAD = re.compile(rf"^(\[{_LABEL}\]\s*:?|{_LABEL}\s*:)\s*", re.IGNORECASE)
_UNKNOWN = re.compile(r"^(unknown|i don'?t know|not (stated|mentioned|given|specified|provided)|no answer|none|n/?a)\b", re.IGNORECASE)


def clean_answer(text: str) -> str:
    """The first non-empty line of a reply, without labels, quotes and a trailing full stop.
    Empty or "I don't know"-like replies become ``unknown``."""
    line = next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")
    line = _LEAD.sub("", line).strip().rstrip(".").strip("*\"'` ").rstrip(".").strip()
    if not line or _UNKNOWN.match(line):
        return UNKNOWN
    return line[:300]


def said(text: str) -> str:
    """What a :data:`SCHEMA` reply says, uncleaned: its answer field, or the whole reply when it is
    not the object (read as free text)."""
    found = read_object(text, SCHEMA)
    return found["answer"] if found else str(text)


def short_call(cfg: Any, schema: dict = SCHEMA, tokens: int = SHORT_TOKENS) -> dict[str, Any]:
    """The arguments every short-answer call takes (``generate`` and ``sample``): at most ``tokens``
    (fewer when the configuration's ``max_tokens`` is lower), decoded as ``schema`` where the
    configured model takes one (``cfg.reply_schema``)."""
    return {"max_tokens": min(cfg.max_tokens, tokens), "schema": cfg.reply_schema(schema)}


def read_answer(text: str) -> str:
    """The short answer of a :data:`SCHEMA` reply; a reply that is not one is read as free text."""
    return clean_answer(said(text))


def _example_text() -> str:
    """Every word of the worked examples, normalised, with a space at either end."""
    parts = [f"{d['title']} {d['text']}" for docs, _, _ in EXAMPLES for d in docs] + [f"{q} {a}" for _, q, a in EXAMPLES]
    return f" {normalize_answer(' '.join(parts))} "


EXAMPLE_TEXT = _example_text()


def echoes_example(answer: str, question: str, evidence: Sequence[dict]) -> bool:
    """Whether a short answer of two words or more is taken from the worked examples, not from the
    question or the documents shown: when its documents do not say, a small model may copy the
    example's name ("Maeve Brennan-Quinn" for who plays Vision, seen on dev questions)."""
    words = normalize_answer(answer)
    if len(words.split()) < 2 or f" {words} " not in EXAMPLE_TEXT:
        return False
    shown = normalize_answer(" ".join([question, *(f"{e['title']} {e['text']}" for e in evidence)]))
    return f" {words} " not in f" {shown} "


def answer_from(text: str, question: str, evidence: Sequence[dict]) -> str:
    """The short answer of a reply to :func:`answer_messages` (``question``, ``evidence``); one copied
    from the worked examples (:func:`echoes_example`) is ``unknown``."""
    answer = read_answer(text)
    return UNKNOWN if echoes_example(answer, question, evidence) else answer
