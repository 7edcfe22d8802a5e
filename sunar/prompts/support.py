"""Whether the pages a hop read state its answer as the answer to its sub-question (the hop's
support check, ``hop_support``): the LLM is asked yes or no and its label probabilities are read.

The exemplars are invented. The "no" ones are the reader's usual slips on this data: a person the
page names in another role (the director given as the composer), and a name the page does not
hold at all."""

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


def ruled_out(question: str, answer: str) -> str:
    """The sub-question asked again with an answer its pages did not state ruled out."""
    return f"{question} (The answer is not {answer}.)"
