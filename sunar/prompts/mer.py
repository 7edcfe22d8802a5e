"""MER, the Meta Evidence Reasoner: the prompt (documents, question, reasoning path), the
follow-up asked when the reply has no usable final answer, and the reader of its reply. The reply
is the JSON object :data:`SCHEMA`, the rationale before the answer (the paper's "[Answer]:" and
"[Final Answer]:"); the follow-up's is :data:`sunar.prompts.answer.SCHEMA`."""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from sunar.prompts import answer
from sunar.prompts.answer import UNKNOWN, clean_answer
from sunar.prompts.structured import Schema, as_reply, object_schema, read_object
from sunar.text import normalize_answer

SYSTEM = (
    "You check a chain of reasoning against evidence and give the final answer to a complex question. "
    "The intermediate answers may contain mistakes: trust the documents over them."
)

#: Rationale and answer stay within the cpu profile's 128 tokens.
SCHEMA = object_schema(rationale=300, answer=80)


def grounded_schema(allowed: Sequence[str]) -> Schema:
    """:data:`SCHEMA` whose answer is one of ``allowed`` or "unknown" (``grounded_final``)."""
    return object_schema(rationale=300, answer=(*allowed, UNKNOWN))


#: Asked once more when MER's reply has no final answer (a small model often runs out of tokens
#: or forgets the format while reasoning).
#: The question is repeated: without it, a 1.5B model often named the bridge entity it had just
#: reasoned about (on dev: "Gustaf Molander" for "the place of birth of the director of film Dollar").
#: The last sentence is for the same fault with the question in view: for "Where was the director of
#: film Ronnie Rocket born?" it answered "David Lynch" without it and "Missoula, Montana" with it (on
#: the 98 dev fall-backs of sunar and sunar_no_asu, 26 -> 28 right, none lost).
#: The follow-up's answer is one short span (at most SHORT_TOKENS: fewer keep the retry cheap).
RETRY_TOKENS = 32
FINAL_ONLY = (
    "Question: {question}\nNow reply with " + as_reply(answer="...").replace("{", "{{").replace("}", "}}") + " holding the short answer to this question only: "
    "a name, place, date or number. Give what the question asks for, not a person or thing it names on the way."
)


#: An invented worked example, (documents, question, reasoning path, rationale, answer), given as
#: a turn: the answer is what the question asks for, as a short phrase.
EXAMPLE = (
    [
        {"title": "Harbour Lights (film)", "text": "Harbour Lights is a 1962 drama film directed by Tomas Ekdahl."},
        {"title": "Tomas Ekdahl", "text": "Tomas Ekdahl (1921-1990) was a Swedish film director, born in Uppsala."},
    ],
    "Where was the director of film Harbour Lights born?",
    [("Who directed Harbour Lights?", "Tomas Ekdahl"), ("Where was Tomas Ekdahl born?", "Uppsala")],
    "Document 1 says Tomas Ekdahl directed Harbour Lights; document 2 says he was born in Uppsala.",
    "Uppsala",
)


def _ask(question: str, path: Sequence[tuple[str, str]], evidence: Sequence[dict]) -> HumanMessage:
    steps = "\n".join(f"{i}. {q} -> {a}" for i, (q, a) in enumerate(path, start=1)) or "(none)"
    return HumanMessage(
        f"{answer.ask_message(question, evidence).content}\n"
        f"Reasoning path (sub-question -> answer):\n{steps}\n\n"
        f"Reply with a JSON object {as_reply(rationale='...', answer='...')}: the rationale is one or two sentences "
        "of reasoning from the documents, the answer the short answer only: a name, place, date or number, not a sentence."
    )


def mer_messages(question: str, path: Sequence[tuple[str, str]], evidence: Sequence[dict]) -> list[BaseMessage]:
    """The rule, the worked example as a turn, then this question, its reasoning path and evidence."""
    docs, example, example_path, rationale, short = EXAMPLE
    return [
        SystemMessage(SYSTEM),
        _ask(example, example_path, docs),
        AIMessage(as_reply(rationale=rationale, answer=short)),
        _ask(question, path, evidence),
    ]


def final_only_message(question: str) -> HumanMessage:
    return HumanMessage(FINAL_ONLY.format(question=question))


_POSSESSIVE = re.compile(r"['’]s?\b")


def _words(text: str) -> str:
    return f" {normalize_answer(_POSSESSIVE.sub(' ', text))} "


def bridges(path: Sequence[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """The reasoning path's bridge entities: each earlier hop's answer that a later sub-question
    names (possessive or not), by its normalised text -> (answer, the hop's sub-question)."""
    found: dict[str, tuple[str, str]] = {}
    later = [_words(q) for q, _ in path]
    for i, (step, said) in enumerate(path[:-1]):
        key = _words(said)
        if key.strip() and said != UNKNOWN and any(key in q for q in later[i + 1 :]):
            found.setdefault(key.strip(), (said, step))
    return found


def bridge_in(answer: str, found: dict[str, tuple[str, str]]) -> tuple[str, str] | None:
    """The bridge (answer, step) of ``found`` that ``answer`` is, possessive or not ("Jennifer
    Parker's" is "Jennifer Parker"), or None. An answer that holds a bridge and more ("Missoula
    County" for "Missoula") or a part of one ("Alabama" of "Montgomery, Alabama") may be what is
    asked for."""
    return found.get(_words(answer).strip())


_FINAL = re.compile(r"\[final answer\]\s*:?|final answer\s*:", re.IGNORECASE)
_RATIONALE = re.compile(r"^\s*\[?answer\]?\s*:\s*", re.IGNORECASE)


def parse_mer(text: str) -> tuple[str, str, bool]:
    """(rationale, answer, well_formed) of a :data:`SCHEMA` reply. Any other reply is read as the
    paper writes it, the answer after "[Final Answer]:"; without the marker, the last line is the
    answer and the reply is not well formed."""
    if (found := read_object(text, SCHEMA)) is not None:
        return found["rationale"].strip(), clean_answer(found["answer"]), True
    parts = _FINAL.split(str(text), maxsplit=1)
    if len(parts) == 2:
        return _RATIONALE.sub("", parts[0]).strip(), clean_answer(parts[1]), True
    lines = [ln for ln in str(text).splitlines() if ln.strip()]
    if not lines:
        return "", clean_answer(""), False
    return _RATIONALE.sub("", " ".join(lines[:-1])).strip(), clean_answer(_RATIONALE.sub("", lines[-1])), False


def parse_final_only(text: str) -> str:
    """The answer to :data:`FINAL_ONLY`: the JSON answer; in free text, after the marker if there
    is one, else its first line."""
    if _FINAL.search(text) and "{" not in text:
        return parse_mer(text)[1]
    return answer.read_answer(text)


def rationale_of(text: str) -> str:
    """A reply without the marker, as rationale: the whole reply, without a leading label."""
    return _RATIONALE.sub("", text).strip()
