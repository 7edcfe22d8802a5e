"""The answer's confidence: m answers to the original question are sampled from the same
evidence, when something reads them (:data:`SAMPLED`), and their agreement with the final answer
(in its semantic set, or contained in it: small models often write the final answer as a sentence
that a short sample cannot entail both ways) is one of the signals of :mod:`sunar.signals`. A
calibration fitted for this graph, model, settings and corpus turns the signals into the number
shown: the probability that the answer is right (:mod:`sunar.trust`). Where none applies, the
agreement is shown for what it is, with the reason. Below ``min_trust`` the product says it does
not know and gives its best guess. With ``hop_support``, the check's judge of the answer
(:mod:`sunar.nodes.check`) joins the signals. An answer that is one of the two options its question
names is read above its chance floor (:mod:`sunar.choice`): a calibration fitted on chains would
otherwise give a coin's pick less than one half."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig

from sunar import choice, trust
from sunar.configuration import Configuration
from sunar.errors import ModelUnavailable
from sunar.models.llm import LLM
from sunar.models.nli import semantic_sets
from sunar.prompts.answer import answer_from, answer_messages, short_call
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


#: The signals read from answers sampled to the question: sampled only when read (by the calibration
#: in use, or as the agreement shown where none applies), or when ``confidence_samples`` asks.
SAMPLED = frozenset({"agreement", "semantic_entropy", "sets"})


def agreement_of(state: dict[str, Any], messages: list[BaseMessage], cfg: Configuration, res: Any) -> tuple[list[str], list[list[int]], float]:
    """(the m answers sampled from the final evidence, their semantic sets with the final answer
    first, the share that agrees with it: in its set, or contained in it)."""
    m = max(1, cfg.confidence_samples or cfg.samples)
    replies = res.llm.sample(messages, m, temperature=cfg.temperature, **short_call(cfg))
    samples = [answer_from(str(r.content), state["question"], state.get("evidence") or []) for r in replies]
    sets = semantic_sets(state["question"], [state["answer"], *samples], res.nli)
    same_set = set(next(s for s in sets if 0 in s)) - {0}
    answer = f" {normalize_answer(state['answer'])} "
    agreeing = sum(1 for i, sample in enumerate(samples, 1) if i in same_set or f" {normalize_answer(sample)} " in answer)
    return samples, sets, round(agreeing / m, 4)


def corpus_of(index: Any) -> str | None:
    """The fingerprint of the corpus an index was built from (None: an index that does not say)."""
    return (getattr(index, "manifest", None) or {}).get("corpus_fingerprint")


def make_confidence(
    graph: str, schema: type[Configuration] = Configuration, unread: frozenset[str] = frozenset()
) -> Callable[[dict[str, Any], RunnableConfig], dict[str, Any]]:
    """The confidence step of the named graph (a calibration is fitted per graph, and must match
    the settings of the graph's own configuration ``schema`` that change its answers: every field
    but those of ``unread``, which the graph's structure never reads)."""

    @node("confidence")
    def confidence(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        cfg = schema.from_runnable_config(config)
        read = {k: v for k, v in cfg.values().items() if k not in unread}
        res = resources(config)
        messages = answer_messages(state["question"], state.get("evidence") or [])
        calibration, why_not = trust.choose(cfg.calibration, graph, read, schema.as_recorded)
        if calibration and not cfg.confidence_samples and not SAMPLED & set(calibration["features"]):
            samples, sets, agreement = [], [], None  # nothing reads them: no sampling
        else:
            samples, sets, agreement = agreement_of(state, messages, cfg, res)
        found = signals(state, samples, sets, agreement)
        found.update(state.get("judged") or {})  # the check's judge (hop_support; a baseline has none)
        if cfg.answer_likelihood:
            found["answer_logprob"] = answer_logprob(res.likelihood, messages, state["answer"])
        if calibration:
            found.update(trust.held_signals(calibration, lambda: res.llm, state["question"], state["answer"]))
            floor = choice.floor(state["question"], str(state.get("answer") or ""))
            verdict = trust.judge(found, calibration, cfg.min_trust, floor)
            basis = trust.describe(calibration, corpus_of(res.index)) + (choice.FLOOR_SAID if floor else "")
        else:  # nothing to turn the agreement into a probability: shown for what it is, with the reason
            verdict = {"trust": None, "abstained": cfg.min_trust > 0, "why": why_not if cfg.min_trust > 0 else ""}
            basis = f"not calibrated: {why_not}"
        return {
            "confidence": agreement if verdict["trust"] is None else verdict["trust"],
            "confidence_basis": basis,
            "signals": found,
            **verdict,
            "notes": ["no sampled answer agrees with the final answer"] if agreement == 0 else [],
        }

    return confidence
