"""The final answer cut to what the question asks for (``short_answer``; the prompt and why:
:mod:`sunar.prompts.shorten`). No call when the switch is off, the answer is unknown, or it holds
no shorter answer; a reply that is not one of the answer's parts keeps the answer. Then, with
``drop_country``, a country the answer ends with is dropped by rule (:func:`sunar.text.without_country`)."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.prompts.answer import read_answer, short_call
from sunar.prompts.shorten import shorten_messages, shorten_schema
from sunar.prompts.spans import parts
from sunar.resources import resources
from sunar.signals import known
from sunar.text import without_country
from sunar.usage import node


@node("shorten")
def shorten(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    cfg = Configuration.from_runnable_config(config)
    answer = state.get("answer") or ""
    update = cut(state["question"], answer, cfg, config) if cfg.short_answer and known(answer) else {}
    shorter = update.get("answer", answer)
    place, note = country_dropped(state["question"], shorter, cfg)
    return {"answer": place, "notes": [*update.get("notes", []), note]} if note else update


def country_dropped(question: str, answer: str, cfg: Configuration) -> tuple[str, str | None]:
    """``drop_country`` on a final answer: (the answer without the country it ends with, the note
    that says so), or (the answer, None) where the switch is off or there is none to drop."""
    if not cfg.drop_country or not known(answer) or (place := without_country(question, answer)) == answer:
        return answer, None
    return place, f"the country was dropped from the answer {answer!r}"


def cut(question: str, answer: str, cfg: Configuration, config: RunnableConfig) -> dict[str, Any]:
    """``short_answer``'s call: the answer cut to the part of it the model chooses (nothing: kept)."""
    shorter = parts(answer)
    if not shorter:
        return {}
    reply = resources(config).llm.generate(
        shorten_messages(question, answer),
        temperature=0.0,
        config=config,
        **short_call(cfg, shorten_schema(answer, shorter)),
    )
    short = read_answer(str(reply.content))
    chosen = next((p for p in shorter if p.casefold() == short.casefold()), None)
    if chosen is None:
        return {}
    return {"answer": chosen, "notes": [f"the answer {answer!r} was cut to what the question asks for"]}
