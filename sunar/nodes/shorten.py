"""The final answer cut to what the question asks for (``short_answer``; the prompt and why:
:mod:`sunar.prompts.shorten`). No call when the switch is off, the answer is unknown, or it holds
no shorter answer; a reply that is not one of the answer's parts keeps the answer."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.prompts.answer import read_answer, short_call
from sunar.prompts.shorten import shorten_messages, shorten_schema
from sunar.prompts.spans import parts
from sunar.resources import resources
from sunar.signals import known
from sunar.usage import node


@node("shorten")
def shorten(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    cfg = Configuration.from_runnable_config(config)
    answer = state.get("answer") or ""
    shorter = parts(answer) if cfg.short_answer and known(answer) else []
    if not shorter:
        return {}
    reply = resources(config).llm.generate(
        shorten_messages(state["question"], answer),
        temperature=0.0,
        config=config,
        **short_call(cfg, shorten_schema(answer, shorter)),
    )
    short = read_answer(str(reply.content))
    chosen = next((p for p in shorter if p.casefold() == short.casefold()), None)
    if chosen is None:
        return {}
    return {"answer": chosen, "notes": [f"the answer {answer!r} was cut to what the question asks for"]}
