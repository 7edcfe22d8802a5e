"""The sub-question's evidence (top l of R+) and the LLM's intermediate answer, which feeds the
next Self-Ask step.

With hop sampling (``hop_samples`` m'), m' more answers are sampled from the same prompt and the
m'+1 answers are clustered into semantic sets: the hop's candidates. The chain follows the largest
set that names something; when the answers fall into more than one such set, the next largest ones
(up to ``branch_width`` in all, within ``max_chains``) become chains of their own, waiting in
``chains`` with their probability (the chain's so far times the set's share).

With ``focus_pages``, a sub-question that names pages of the evidence ("Where was Clifford Durr
born?" and the page "Clifford Durr") is answered from those pages only (:func:`sunar.text.focus`).
Where the graph has ASU, the hop is then judged, and a doubted one read again
(``hop_support``, :mod:`sunar.hop_support`)."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.hop_support import support_notes, supported
from sunar.models.nli import semantic_sets
from sunar.nar import stall_note, top
from sunar.prompts.answer import UNKNOWN, answer_from, answer_messages, echoes_example, read_answer, short_call
from sunar.resources import resources
from sunar.signals import known
from sunar.state import Candidate, Chain, Hop, evidence_of
from sunar.text import focus
from sunar.usage import node


def candidates_of(answers: list[str], sets: list[list[int]]) -> list[Candidate]:
    """The semantic sets as candidates, largest first; among sets of one size, the one holding the
    greedy answer (index 0) first, then in order. A set's answer is the greedy one when it holds it,
    else its first member; its share is its size over all the answers."""
    ranked = sorted(sets, key=lambda s: (-len(s), 0 not in s, s[0]))
    return [Candidate(answer=answers[0] if 0 in s else answers[s[0]], share=round(len(s) / len(answers), 4)) for s in ranked]


def branches(candidates: list[Candidate], cfg: Configuration, chains_taken: int) -> tuple[Candidate | None, list[Candidate]]:
    """The candidate the chain follows (the first that names something; None when none does) and
    the ones that become chains of their own: the next known ones, up to ``branch_width`` in all and
    while ``max_chains`` (counting ``chains_taken``, the chains already begun) leaves room."""
    named = [c for c in candidates if known(c["answer"])]
    if not named:
        return None, []
    room = max(0, cfg.max_chains - chains_taken)
    return named[0], named[1 : min(cfg.branch_width, 1 + room)]


def branch_off(hop: Hop, state: dict[str, Any], cfg: Configuration) -> tuple[Hop, dict[str, Any], list[str]]:
    """The hop as the chain follows it (its first candidate naming something), the state's update (the
    chain's weight; the waiting ``chains`` with the others, if any) and the note saying so."""
    chains = list(state.get("chains") or [])
    follow, others = branches(hop["candidates"], cfg, 1 + len(chains))
    update: dict[str, Any] = {}
    weight, path, base = float(state.get("weight", 1.0)), state.get("hops") or [], dict(hop)
    for i, candidate in enumerate(c for c in [follow, *others] if c is not None):  # the first is followed, the others wait as chains
        taken = {**base, "answer": candidate["answer"]}
        if i == 0:
            hop, update["weight"] = taken, round(weight * candidate["share"], 6)
        else:
            chains.append(Chain(hops=[*path, taken], draft_answer="", weight=round(weight * candidate["share"], 6), status="open", answer=""))
    if not others:
        return hop, update, []
    return hop, {**update, "chains": chains}, [f"{len(others) + 1} candidate answers for {hop['question']!r}: each is followed as a chain"]


def make_answer_hop(sampling: bool = True) -> Any:
    """The answer_hop node; hop sampling, branching and the support judge only where the graph has
    ASU (``sampling``)."""

    @node("answer_hop")
    def answer_hop(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        cfg = Configuration.from_runnable_config(config)
        res = resources(config)
        scored = state.get("scored") or {}
        found = evidence_of(res.index.documents(top(scored, cfg.evidence)), scored)
        read = focus(state["sub_question"], found) if cfg.focus_pages else found
        messages, call = answer_messages(state["sub_question"], read), short_call(cfg)
        reply = res.llm.generate(messages, temperature=0.0, config=config, **call)
        notes = stall_note(state, cfg)
        said = read_answer(str(reply.content))
        if echoes_example(said, state["sub_question"], read):
            notes.append(f"the answer {said!r} to {state['sub_question']!r} was copied from the prompt's worked example, not the pages: unknown")
            said = UNKNOWN
        hop = Hop(question=state["sub_question"], answer=said, evidence=found, batches=state.get("batches") or [])
        if len(read) < len(found):
            hop["read"] = [e["id"] for e in read]
        update: dict[str, Any] = {}
        if sampling and cfg.hop_samples:
            replies = res.llm.sample(messages, cfg.hop_samples, temperature=cfg.temperature, **call)
            answers = [hop["answer"], *(answer_from(str(r.content), state["sub_question"], read) for r in replies)]
            hop["samples"] = answers
            hop["candidates"] = candidates_of(answers, semantic_sets(state["sub_question"], answers, res.nli))
            hop, update, branched = branch_off(hop, state, cfg)
            notes += branched
        if sampling:  # judged where the graph has ASU; a doubted hop read again (hop_support)
            hop = supported(hop, read, found, cfg, res, call, config)
            notes += support_notes(hop)
        return {**update, "hops": [*(state.get("hops") or []), hop], "sub_question": "", "notes": notes}

    return answer_hop
