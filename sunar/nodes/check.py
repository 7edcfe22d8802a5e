"""The final answer checked against the whole question (with ``hop_support``): the LLM judges
whether it answers the question, given the chain's steps (``answer_fits``, P(yes); 0 for no
answer), and the chain's weakest link, that or its weakest hop's support (``chain_support``), is
kept for the confidence step.

With ``unfit_answer``, the judge's doubt acts (P(yes) < 0.5; on dev 1-100 all 13 such answers
were wrong). 'choose': the other answers the graph found are judged the same way (the last hop's,
Self-Ask's own, the other chains'; never a bridge, an answer a later step built on), and the one
that fits best replaces it when it fits. 'go_on': a chain of one hop that asked only part of the
question (it ended on the hidden name it found first) goes one step further, once
(:func:`sunar.nodes.decompose.going_on`): the graph goes back to ``retrieve`` and the final step
answers again from the longer chain. 'both': choose, else go on. 'escalate': ``escalate_llm`` (a larger
model) reads the same path and evidence as MER did (:func:`sunar.nodes.mer.reasoned`), judges both
answers the same way, and the one it finds fits better is kept. With ``replan_below``, an answer whose
weakest link stays weak is tried again with a planned decomposition (:mod:`sunar.replan`)."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.models.llm import LLM
from sunar.nodes.decompose import going_on
from sunar.nodes.mer import reasoned
from sunar.nodes.shorten import by_rule
from sunar.prompts.support import LABELS, fits_messages, judged_better, p_yes
from sunar.replan import replanned
from sunar.resources import resources
from sunar.signals import agrees, chain_support, hop_support, known, whole_chain
from sunar.text import normalize_answer
from sunar.usage import node

#: Below this P(yes), the judge says the answer does not answer the question.
FITS = 0.5


def chose_note(doubted: str, p: float, found: str, q: float) -> str:
    """The note left when ``found`` (P(yes) ``q``) replaced the doubted final answer (P(yes) ``p``)."""
    return f"the judge doubted the final answer {doubted!r} (p = {p:.2f}); {found!r} answers the question (p = {q:.2f})"


def fits(llm: LLM, state: dict[str, Any], answer: str) -> float | None:
    """P(``answer`` answers the whole question, given the chain's steps), as the LLM judges it (0.0
    for no answer, None for a reply neither yes nor no)."""
    if not known(answer):
        return 0.0
    steps = [(str(h["question"]), str(h["answer"])) for h in state.get("hops") or []]
    return p_yes(llm.judge(fits_messages(state["question"], steps, answer), LABELS))


def judged(state: dict[str, Any], answer_fits: float | None) -> dict[str, float | None]:
    """The signals the check gives: ``answer_fits`` and ``chain_support``."""
    return {"answer_fits": answer_fits, "chain_support": chain_support(hop_support(state.get("hops") or []), answer_fits)}


def conclusions(question: str, hops: list[dict[str, Any]], draft: str) -> list[str]:
    """What a chain concluded (its last hop's answer, then Self-Ask's own) that is not one of its
    bridges: the answers of its hops but the last, and the last's when the chain is one hop that
    asked only part of the question."""
    bridges = hops if hops and not whole_chain(question, hops) else hops[:-1]
    said = {normalize_answer(str(h["answer"])) for h in bridges}
    return [a for a in (str(hops[-1]["answer"]) if hops else "", draft) if known(a) and normalize_answer(a) not in said]


def alternatives(state: dict[str, Any]) -> list[str]:
    """The other answers the graph found, once each: the followed chain's conclusions, then the other
    finished chains' (:func:`conclusions`), leaving out those that agree with the final answer."""
    question, answer = state["question"], str(state.get("answer") or "")
    found = conclusions(question, state.get("hops") or [], str(state.get("draft_answer") or ""))
    for chain in state.get("chains") or []:
        found += conclusions(question, chain["hops"], chain["draft_answer"]) if chain["status"] == "done" else []
    unique: dict[str, str] = {}
    for a in found:
        unique.setdefault(normalize_answer(a), a)
    return [a for a in unique.values() if not agrees(answer, a)]


def make_check(judging: bool = True) -> Any:
    """The check node; it judges only where the graph has ASU (``judging``): elsewhere it passes. A
    weak answer may then be tried again, planned (``replan_below``, :mod:`sunar.replan`)."""

    @node("check")
    def checked(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        return replanned(state, check(state, config), Configuration.from_runnable_config(config).replan_below) if judging else {}

    return checked


def check(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """The final answer judged against the question; a doubted one acts (``unfit_answer``)."""
    cfg = Configuration.from_runnable_config(config)
    if cfg.hop_support == "off":
        return {}
    if state.get("compared"):  # decided in code, one of the two compared: only its hops can be weak links
        return {"judged": judged(state, None)}
    llm, answer = resources(config).llm, str(state.get("answer") or "")
    p = fits(llm, state, answer)
    if cfg.unfit_answer == "keep" or p is None or p >= FITS:
        return {"judged": judged(state, p)}
    if cfg.unfit_answer == "escalate":
        return escalated(state, config, cfg, p)
    if cfg.unfit_answer in ("choose", "both"):
        scored = [(q, a) for a in alternatives(state) if (q := fits(llm, state, a)) is not None]
        best = max(scored, key=lambda s: s[0], default=None)
        if best is not None and best[0] >= FITS:
            place, ruled = by_rule(state, best[1], cfg)  # as shorten, before the check, does MER's
            notes = [chose_note(answer, p, best[1], best[0]), *ruled]
            return {"answer": place, "judged": judged(state, best[0]), "acted": "chose", "notes": notes}
    if cfg.unfit_answer in ("go_on", "both") and not state.get("went_on"):
        step, note = going_on(state, config, cfg)
        if step:
            chains, chosen = list(state.get("chains") or []), state.get("chosen")
            rest = [c for i, c in enumerate(chains) if i != chosen]  # the chain goes on: it is done again when it ends
            return {"sub_question": step, "went_on": True, "chains": rest, "chosen": None, "draft_answer": "", "acted": "went_on", "notes": [note]}
        if note:  # it could not go on: why stays in the trace
            return {"judged": judged(state, p), "acted": "stands", "notes": [note]}
    return {"judged": judged(state, p)}


def escalated(state: dict[str, Any], config: RunnableConfig, cfg: Configuration, p: float) -> dict[str, Any]:
    """``unfit_answer=escalate``: the doubted final answer (P(yes) ``p``) read again by the larger LLM
    from MER's path and evidence; it judges both answers, and its own replaces the first (with its
    rationale) when it fits better. Either way the larger model's judgement is the one kept."""
    larger, answer = resources(config).larger("unfit_answer"), str(state.get("answer") or "")
    read = reasoned(larger, state, config)
    other = str(read["answer"])
    first = fits(larger, state, answer)
    second = fits(larger, state, other) if known(other) and not agrees(other, answer) else None
    doubted = f"the final answer {answer!r} (p = {p:.2f}) was read again by the larger model"
    if not judged_better(second, first):
        said = f"it kept to it (p = {first:.2f})" if first is not None else "it found no answer that fits better"
        return {"judged": judged(state, p if first is None else first), "acted": "escalated", "notes": [f"{doubted}: {said}"]}
    place, ruled = by_rule(state, other, cfg)
    notes = [f"{doubted}: it answered {other!r} (p = {second:.2f})", *read.get("notes", []), *ruled]
    return {"answer": place, "rationale": read["rationale"], "judged": judged(state, second), "acted": "escalated", "notes": notes}
