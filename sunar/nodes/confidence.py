"""The answer's confidence from semantic uncertainty: m answers to the original question are
sampled from the same evidence, and the confidence is the share of them that agree with the final
answer: in its semantic set, or contained in it. The second test is cover-EM's, the paper's
metric: small models often write the final answer as a sentence ("David Lynch was born in
Missoula, Montana") that a short sample ("Missoula, Montana") cannot entail both ways. The
other signals of trust are kept beside it (:mod:`sunar.signals`); with a calibration, they are
combined and the answer is marked as a best guess when their trust is below its threshold
(:mod:`sunar.trust`)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig

from sunar import trust
from sunar.configuration import Configuration
from sunar.errors import ModelUnavailable
from sunar.models.llm import LLM
from sunar.models.nli import semantic_sets
from sunar.prompts.answer import SCHEMA, SHORT_TOKENS, answer_messages, read_answer
from sunar.resources import resources
from sunar.signals import known, signals
from sunar.text import normalize_answer
from sunar.usage import node


def answer_logprob(llm: LLM, messages: list[BaseMessage], answer: str) -> float | None:
    """The answer's log-likelihood per word as the reply to the short-answer prompt (None for
    "unknown", or a model that cannot score a given text)."""
    if not known(answer):
        return None
    try:
        return round(llm.loglik(messages, answer) / max(1, len(answer.split())), 4)
    except ModelUnavailable:
        return None


@node("confidence")
def confidence(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    cfg = Configuration.from_runnable_config(config)
    res = resources(config)
    m = max(1, cfg.confidence_samples or cfg.samples)
    messages = answer_messages(state["question"], state.get("evidence") or [])
    replies = res.llm.sample(messages, m, temperature=cfg.temperature, max_tokens=min(cfg.max_tokens, SHORT_TOKENS), schema=cfg.reply_schema(SCHEMA))
    samples = [read_answer(str(r.content)) for r in replies]
    sets = semantic_sets(state["question"], [state["answer"], *samples], res.nli)
    same_set = set(next(s for s in sets if 0 in s)) - {0}
    answer = f" {normalize_answer(state['answer'])} "
    agreeing = sum(1 for i, sample in enumerate(samples, 1) if i in same_set or f" {normalize_answer(sample)} " in answer)
    agreement = round(agreeing / m, 4)
    found = signals(state, samples, sets, agreement)
    if cfg.answer_likelihood:
        found["answer_logprob"] = answer_logprob(res.likelihood, messages, state["answer"])
    calibration = trust.load(cfg.calibration, cfg.llm)
    verdict = trust.judge(found, calibration) if calibration else {"trust": None, "abstained": False, "why": ""}
    return {
        "confidence": agreement,
        "signals": found,
        **verdict,
        "notes": [] if agreeing else ["no sampled answer agrees with the final answer"],
    }
