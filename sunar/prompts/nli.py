"""The LLM as a judge of whether two answers to one question mean the same (the NLI of semantic
sets when no MNLI classifier is available). The reply is read through the log-probabilities of
:data:`LABELS` (see :class:`sunar.models.nli.LLMJudgeNLI`)."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

SYSTEM = (
    "You check whether two answers to the same question give the same answer. Reply 'yes' if they "
    "name the same person, place, thing, date or number, even when worded differently (extra words "
    "such as 'in' or 'it was', a title, a middle name, an abbreviation, a shorter or fuller form of "
    "the same name, another date format). Reply 'no' if they name different people, places, things, "
    "dates or numbers, even when they share a word. Reply with one word: yes or no."
)

#: Invented exemplars (none from evaluation data): easy and hard cases of both verdicts.
EXAMPLES: list[tuple[str, str, str, str]] = [
    ("Where was the poet Rumi born?", "Balkh", "in the city of Balkh", "yes"),
    ("Who founded the company Sony?", "Masaru Ibuka", "Akio Morita", "no"),
    ("When did the Berlin Wall fall?", "9 November 1989", "November 9, 1989", "yes"),
    ("Who wrote Pride and Prejudice?", "Jane Austen", "Cassandra Austen", "no"),
    ("Which agency launched the Hubble Space Telescope?", "NASA", "National Aeronautics and Space Administration", "yes"),
    ("When was the Eiffel Tower finished?", "1889", "1887", "no"),
    ("Who painted The Night Watch?", "Rembrandt van Rijn", "It was Rembrandt.", "yes"),
    ("Where did Alan Turing study?", "King's College, Cambridge", "King's College London", "no"),
    ("Where was Frida Kahlo born?", "Coyoacan, Mexico City", "Coyoacan", "yes"),
    ("What is the capital of Australia?", "Sydney", "Canberra", "no"),
]
QUERY = "Question: {q}\nAnswer 1: {a}\nAnswer 2: {b}\nDo the two answers give the same answer?"

#: The judge's two replies: (same, different).
LABELS: Sequence[str] = ("yes", "no")


def nli_messages(question: str, a: str, b: str) -> list[BaseMessage]:
    """The judge prompt: the rule, each exemplar as a user/assistant turn, then the pair. All but
    the last turn is the same for every pair, so llama.cpp keeps it in its KV cache."""
    messages: list[BaseMessage] = [SystemMessage(SYSTEM)]
    for q, x, y, verdict in EXAMPLES:
        messages += [HumanMessage(QUERY.format(q=q, a=x, b=y)), AIMessage(verdict)]
    messages.append(HumanMessage(QUERY.format(q=question, a=a, b=b)))
    return messages
