"""Whether the pages a hop read state its answer as the answer to its sub-question (the hop's
support check, ``hop_support``), and whether the final answer answers the whole question given the
steps that found it (``answer_fits``): the LLM is asked yes or no and its label probabilities are read.

The exemplars are invented. The hop's "no" ones are the reader's usual slips on this data: a person
the page names in another role (the director given as the composer), and a name the page does not
hold at all; the final answer's are a chain that ended on its bridge, and an answer of the wrong kind."""

from __future__ import annotations

import math
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from sunar.prompts.answer import documents_block

SYSTEM = (
    "You check an answer against documents. Say yes if the documents state that the proposed answer is "
    "the answer to the question, and no if they do not (it is not in them, or it is there in another "
    "role). Reply with yes or no only."
)
LABELS = ("yes", "no")
#: A page is cut to this many characters for the judge (a hop's page is rarely longer).
PAGE_CHARS = 1200

#: Invented exemplars: (page title, page text, question, proposed answer, verdict).
EXAMPLES: list[tuple[str, str, str, str, str]] = [
    ("The Quiet Lanterns", "The Quiet Lanterns is a 1962 drama film directed by Mira Solberg, with music by Ivo Kesler.",
     "Who composed The Quiet Lanterns?", "Mira Solberg", "no"),
    ("The Quiet Lanterns", "The Quiet Lanterns is a 1962 drama film directed by Mira Solberg, with music by Ivo Kesler.",
     "Who composed The Quiet Lanterns?", "Ivo Kesler", "yes"),
    ("Arne Velland", "Arne Velland (1889-1950) was a Norwegian engineer born in Bergen. He died in Oslo.",
     "Who is the spouse of Arne Velland?", "Ingrid Velland", "no"),
]
QUERY = "Documents:\n{documents}\n\nQuestion: {question}\nProposed answer: {answer}\nDo the documents state this answer?"


def _query(question: str, answer: str, pages: Sequence[dict]) -> HumanMessage:
    cut = [{"title": p["title"], "text": " ".join(str(p["text"]).split())[:PAGE_CHARS]} for p in pages]
    return HumanMessage(QUERY.format(documents=documents_block(cut), question=question, answer=answer))


def support_messages(question: str, answer: str, pages: Sequence[dict]) -> list[BaseMessage]:
    """The rule, the exemplars as turns, then the hop's pages, sub-question and answer."""
    messages: list[BaseMessage] = [SystemMessage(SYSTEM)]
    for title, text, q, a, verdict in EXAMPLES:
        messages += [_query(q, a, [{"title": title, "text": text}]), AIMessage(verdict)]
    return [*messages, _query(question, answer, pages)]


def p_yes(scores: dict[str, float]) -> float | None:
    """P(yes) among the two labels from their log-probabilities; None when the reply was neither."""
    yes, no = scores.get("yes", -math.inf), scores.get("no", -math.inf)
    if yes == no == -math.inf:
        return None
    top = max(yes, no)
    return round(math.exp(yes - top) / (math.exp(yes - top) + math.exp(no - top)), 4)


def judged_better(new: float | None, first: float | None) -> bool:
    """Whether a second answer's P(yes) beats the first's: it has one, above the first's (a first the
    judge gave none loses to any)."""
    return new is not None and (first is None or new > first)


FITS_SYSTEM = (
    "You check whether a proposed answer answers a question. The steps show how it was found. Say yes if the "
    "proposed answer is what the question asks for. Say no if it is only a step on the way (a person or thing "
    "the question mentions through a description), or if it answers another question. Reply with yes or no only."
)
#: Invented exemplars: (question, steps as (sub-question, answer), proposed answer, verdict).
FITS_EXAMPLES: list[tuple[str, list[tuple[str, str]], str, str]] = [
    ("Where was the composer of The Quiet Lanterns born?", [("Who composed The Quiet Lanterns?", "Ivo Kesler")], "Ivo Kesler", "no"),
    ("Where was the composer of The Quiet Lanterns born?",
     [("Who composed The Quiet Lanterns?", "Ivo Kesler"), ("Where was Ivo Kesler born?", "Tromsø")], "Tromsø", "yes"),
    ("How many people work for the company that bought Velland Works?",
     [("Which company bought Velland Works?", "Norsk Hydro"), ("How many people work for Norsk Hydro?", "Norsk Hydro")], "Norsk Hydro", "no"),
]
FITS_QUERY = "Question: {question}\nSteps:\n{steps}\nProposed answer: {answer}\nDoes the proposed answer answer the question?"


def _fits_query(question: str, steps: Sequence[tuple[str, str]], answer: str) -> HumanMessage:
    lines = "\n".join(f"{i}. {q} {a}" for i, (q, a) in enumerate(steps, 1)) or "(none)"
    return HumanMessage(FITS_QUERY.format(question=question, steps=lines, answer=answer))


def fits_messages(question: str, steps: Sequence[tuple[str, str]], answer: str) -> list[BaseMessage]:
    """The rule, the exemplars as turns, then the question, the chain's steps and the final answer."""
    messages: list[BaseMessage] = [SystemMessage(FITS_SYSTEM)]
    for q, s, a, verdict in FITS_EXAMPLES:
        messages += [_fits_query(q, s, a), AIMessage(verdict)]
    return [*messages, _fits_query(question, steps, answer)]
