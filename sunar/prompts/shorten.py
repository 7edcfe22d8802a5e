"""The final answer cut to what the question asks for (``short_answer``): a small model often answers
"Munich, Germany", "Rabbi Dovber Schneuri" or "Gustaf Molander was born in Helsingfors" where the
question wants "Munich", "Dovber Schneuri", "Helsingfors". Given the question and the answer, the
model copies the part that answers it, decoded as one of the answer's own spans
(:func:`sunar.prompts.spans.parts`) or the whole answer, so it cannot add anything."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from sunar.prompts.spans import choice_schema
from sunar.prompts.structured import Schema, as_reply

SYSTEM = (
    "You are given a question and an answer to it. Copy the shortest part of the answer that still answers the "
    "question exactly: the name, place, date or number the question asks for, without a title before a name, the "
    "region or country after a town, or the rest of a sentence. When all of the answer is needed, copy all of it. "
    'Reply with a JSON object {"answer": "..."}.'
)

#: Invented worked examples (question, answer, the part that answers it); the same in every prompt,
#: so llama.cpp keeps them in its KV cache.
EXAMPLES: list[tuple[str, str, str]] = [
    ("Where was the author of The Salt Road born?", "Lyon, France", "Lyon"),
    ("When did the founder of Brightwater Mills die?", "Thomas Hale died on 12 March 1871", "12 March 1871"),
    ("Who taught the composer of Night Ferry?", "Professor Anton Reiss", "Anton Reiss"),
    ("Which university did the director of Pale Harbour attend?", "University of Uppsala", "University of Uppsala"),
    ("Who is the mother of the star of Blue Meadow?", "Ingrid Vale is the mother of Lena Vale", "Ingrid Vale"),
]


def _ask(question: str, answer: str) -> HumanMessage:
    return HumanMessage(f"Question: {question}\nAnswer: {answer}")


def shorten_messages(question: str, answer: str) -> list[BaseMessage]:
    """The rule, the worked examples as turns, then this question and its answer."""
    messages: list[BaseMessage] = [SystemMessage(SYSTEM)]
    for example, full, short in EXAMPLES:
        messages += [_ask(example, full), AIMessage(as_reply(answer=short))]
    return [*messages, _ask(question, answer)]


def shorten_schema(answer: str, shorter: list[str]) -> Schema:
    """The reply: the answer itself or one of its shorter parts (or "unknown", which keeps it)."""
    return choice_schema([answer, *shorter])
