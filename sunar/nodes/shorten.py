"""The rule-based clean-up of the final answer, no call (:func:`by_rule`). A comparison's answer is one
of the two things compared (:func:`sunar.compare.as_side`), and no other rule touches it. Else one switch per rule: with ``bridge_to_last``, an answer that is a bridge of its chain gives way to the
last hop's (:func:`past_the_bridge`); with ``whole_last``, so does an answer that is only the end of
the last hop's (:func:`end_of_last`); with ``drop_country``, a country the answer ends with is
dropped (:func:`sunar.text.without_country`); with ``one_answer``, a list of names where the question
asks for one keeps one of them (:func:`sunar.text.one_of_list`); with ``page_form``, a date or
ordinal the pages write another way is written theirs (:func:`sunar.text.in_pages_form`)."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.compare import as_side, comparison
from sunar.configuration import Configuration
from sunar.prompts.mer import bridge_in, bridges
from sunar.signals import known
from sunar.text import in_pages_form, is_full_date, one_of_list, without_country
from sunar.usage import node


@node("shorten")
def shorten(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    ruled, notes = by_rule(state, state.get("answer") or "", Configuration.from_runnable_config(config))
    return {"answer": ruled, "notes": notes} if notes else {}


def by_rule(state: dict[str, Any], answer: str, cfg: Configuration) -> tuple[str, list[str]]:
    """A final answer after the rules switched on: (the answer, the notes that say what each did).
    ``bridge_to_last`` takes the last hop's answer for a bridge; ``whole_last`` takes it for its own end;
    ``drop_country`` drops the country it ends with; ``one_answer`` cuts a list of names to one, found
    on its own in the chain's pages or its hops' samples; ``page_form`` writes a date or ordinal as the
    chain's pages do."""
    question, notes = state["question"], []
    if not known(answer):
        return answer, notes
    if comparison(question) is not None:  # the answer is one of the two things compared, as the question writes it
        if (side := as_side(question, answer, state.get("hops") or [])) is not None:
            notes = [f"the answer {answer!r} is what the chain found for {side!r}, one of the two compared; {side!r} was taken"]
        return side or answer, notes
    if cfg.bridge_to_last and (past := past_the_bridge(state.get("hops") or [], answer)) is not None:
        last, step = past
        answer, notes = last, [f"the answer {answer!r} answers the step {step!r} on the way; the last hop's answer was taken"]
    if cfg.whole_last and (whole := end_of_last(question, state.get("hops") or [], answer)) is not None:
        answer, notes = whole, [*notes, f"the answer {answer!r} is only the end of the last hop's answer {whole!r}, which was taken"]
    if cfg.drop_country and (place := without_country(question, answer)) != answer:
        answer, notes = place, [*notes, f"the country was dropped from the answer {answer!r}"]
    pages = [*(e for h in state.get("hops") or [] for e in h.get("evidence") or []), *(state.get("evidence") or [])]
    texts = [str(p["text"]) for p in pages]
    if cfg.one_answer:
        said = [str(s) for h in state.get("hops") or [] for s in h.get("samples") or []]
        if (one := one_of_list(question, answer, [str(p["title"]) for p in pages], [*texts, *said])) != answer:
            answer, notes = one, [*notes, f"the list {answer!r} was cut to the one name asked for"]
    if cfg.page_form and (written := in_pages_form(answer, texts)) != answer:
        answer, notes = written, [*notes, f"the answer {answer!r} was written as its pages write it"]
    return answer, notes


def past_the_bridge(hops: list[dict[str, Any]], answer: str) -> tuple[str, str] | None:
    """(the last hop's answer, the step ``answer`` answers) where ``answer`` is a bridge entity of the
    chain (an earlier hop's answer that a later sub-question names: :func:`sunar.prompts.mer.bridges`)
    and the last hop's answer names something and is none; else None."""
    found = bridges([(str(h["question"]), str(h["answer"])) for h in hops])
    if (bridge := bridge_in(answer, found)) is None:
        return None
    last = str(hops[-1]["answer"])
    return (last, bridge[1]) if known(last) and bridge_in(last, found) is None else None


_BEFORE_A_PLACE = re.compile(r"\s(?:in|at)\s+$", re.IGNORECASE)
_ASKS_FOR_PART = re.compile(r"\b(?:years?|decade|century|city|town|village|country|nation|state|province|region|county)\b", re.IGNORECASE)


def end_of_last(question: str, hops: list[dict[str, Any]], answer: str) -> str | None:
    """The last hop's answer where ``answer`` is only its end: the place after "in" or "at" ("Bratislava"
    of "Academy of Performing Arts in Bratislava") or the year of its full date ("1934" of "2 May 1934"),
    and the question asks for no year, city, country or the like (what that end would answer); else None."""
    last = str(hops[-1]["answer"]).strip() if hops else ""
    said = answer.strip()
    if not known(last) or not said or len(said) >= len(last) or not last.casefold().endswith(said.casefold()) or _ASKS_FOR_PART.search(question):
        return None
    head = last[: len(last) - len(said)]
    if head[-1].isalnum():  # the answer begins inside a word of the hop's
        return None
    year_of_date = said.isdigit() and is_full_date(last)
    return last if year_of_date or _BEFORE_A_PLACE.search(head) else None
