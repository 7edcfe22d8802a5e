"""MER, the Meta Evidence Reasoner: one LLM call with the original question, the whole reasoning
path and the gathered evidence; the reply is a rationale, then the answer (one JSON object). With
``grounded_final``, the answer is decoded as one of the hops' answers, "yes", "no", a name in the
question or a span of the evidence (:func:`sunar.prompts.spans.final_spans`); with ``whole_answers``
never a piece of a hop's answer (:func:`sunar.prompts.spans.without_parts`). With
``final_not_bridge``, an answer that is a bridge entity of the path (:func:`sunar.prompts.mer.bridges`)
is asked for once more, the step pointed out."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.prompts import answer as short
from sunar.prompts.answer import UNKNOWN
from sunar.prompts.mer import (
    RETRY_TOKENS,
    SCHEMA,
    bridge_in,
    bridges,
    final_only_message,
    grounded_schema,
    mer_messages,
    not_bridge_message,
    parse_final_only,
    parse_mer,
    rationale_of,
)
from sunar.prompts.spans import choice_schema, final_spans, without_parts
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
    if allowed is not None and cfg.whole_answers:
        allowed = without_parts(allowed, [a for _, a in path])
    schema = grounded_schema(allowed) if allowed is not None else SCHEMA
    reply = str(llm.generate(messages, temperature=0.0, max_tokens=cfg.max_tokens, config=config, schema=cfg.reply_schema(schema)).content)
    rationale, answer, well_formed = parse_mer(reply)
    notes: list[str] = []

    def ask_again(follow_up: HumanMessage, spans: list[str] | None) -> str:
        short_schema = short.SCHEMA if spans is None else choice_schema(spans)
        call = short.short_call(cfg, short_schema, RETRY_TOKENS)
        return parse_final_only(str(llm.generate([*messages, AIMessage(reply), follow_up], temperature=0.0, config=config, **call).content))

    if not well_formed or answer == UNKNOWN:
        # No usable final answer (cut off by the token limit, the format forgotten, or nothing after
        # the marker while the rationale has one): ask for it once.
        retried = ask_again(final_only_message(state["question"]), allowed)
        answer = retried if retried != UNKNOWN else answer
        rationale = rationale if well_formed else rationale_of(reply)
        notes.append("MER gave no usable final answer; asked again for the short answer")
    steps = bridges(path) if cfg.final_not_bridge else {}
    if (bridge := bridge_in(answer, steps)) is not None:
        spans = None if allowed is None else [s for s in allowed if bridge_in(s, steps) is None]
        said = f"MER answered with {answer!r}, the answer to the step {bridge[1]!r}"
        # (grounded, ``spans`` always keeps "yes", "no" and the question's names, so it is never empty)
        if (retried := ask_again(not_bridge_message(state["question"], *bridge), spans)) != UNKNOWN and bridge_in(retried, steps) is None:
            notes.append(f"{said}; asked again, it answered {retried!r}")
            answer = retried
        else:
            notes.append(f"{said}; asked again, it kept to it ({retried!r})")
    return {"answer": answer, "rationale": rationale, **({"notes": notes} if notes else {})}
