"""MER, the Meta Evidence Reasoner: one LLM call with the original question, the whole reasoning
path and the gathered evidence; the reply is a rationale, then the answer (one JSON object). With
``grounded_final``, the answer is decoded as one of the hops' answers, "yes", "no", a name in the
question or a span of the evidence (:func:`sunar.prompts.spans.final_spans`)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.prompts import answer as short
from sunar.prompts.answer import UNKNOWN
from sunar.prompts.mer import (
    RETRY_TOKENS,
    SCHEMA,
    final_only_message,
    grounded_schema,
    mer_messages,
    parse_final_only,
    parse_mer,
    rationale_of,
)
from sunar.prompts.spans import choice_schema, final_spans
from sunar.resources import resources
from sunar.usage import node


@node("mer")
def mer(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    return reasoned(resources(config).llm, state, config)


def reasoned(llm: Any, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """MER's reading by ``llm`` (the graph's, or ``escalate_llm`` for a doubted final answer): the
    state's update, its answer, rationale and notes."""
    cfg = Configuration.from_runnable_config(config)
    path = [(h["question"], h["answer"]) for h in state.get("hops") or []]
    evidence = state.get("evidence") or []
    messages = mer_messages(state["question"], path, evidence)
    allowed = final_spans(state["question"], [a for _, a in path], evidence) if cfg.grounded_final else None
    schema = grounded_schema(allowed) if allowed is not None else SCHEMA
    reply = str(llm.generate(messages, temperature=0.0, max_tokens=cfg.max_tokens, config=config, schema=cfg.reply_schema(schema)).content)
    rationale, answer, well_formed = parse_mer(reply)
    notes: list[str] = []

    if not well_formed or answer == UNKNOWN:
        # No usable final answer (cut off by the token limit, the format forgotten, or nothing after
        # the marker while the rationale has one): ask for it once.
        call = short.short_call(cfg, short.SCHEMA if allowed is None else choice_schema(allowed), RETRY_TOKENS)
        follow_up = final_only_message(state["question"])
        retried = parse_final_only(str(llm.generate([*messages, AIMessage(reply), follow_up], temperature=0.0, config=config, **call).content))
        answer = retried if retried != UNKNOWN else answer
        rationale = rationale if well_formed else rationale_of(reply)
        notes.append("MER gave no usable final answer; asked again for the short answer")
    return {"answer": answer, "rationale": rationale, **({"notes": notes} if notes else {})}
