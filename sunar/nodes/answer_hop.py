"""The sub-question's evidence (top l of R+) and the LLM's intermediate answer, which feeds the
next Self-Ask step.

With hop sampling (``hop_samples`` m'), m' more answers are sampled from the same prompt (or, with
``hop_reading=documents``, read greedily from each of the top m' documents the hop reads, alone; with
``hop_reading=sentences``, read greedily from all its pages, those it names or not, cut to their
``hop_sentences`` sentences most relevant to the sub-question, in m' other orders: reversed, rotated by
two, as ranked; a hop that reads only the page it names, read so, would only read it again) and the
m'+1 answers are clustered into semantic sets: the hop's candidates. The chain follows the largest
set that names something; when the answers fall into more than one such set, the next largest ones
(up to ``branch_width`` in all, within ``max_chains``) become chains of their own, waiting in
``chains`` with their probability (the chain's so far times the set's share). With
``branch_support`` (and ``hop_support``) each of those candidates is first judged against the hop's
pages, and weighs its share times P(yes) that they state it: the best-weighted is followed
(:func:`weighed`: who composed "Limehouse Blues", "Django Reinhardt", who recorded it, sampled twice,
against "Douglas Furber and Philip Braham", who wrote it, on the page the hop read).

With ``focus_pages``, a sub-question that names pages of the evidence ("Where was Clifford Durr
born?" and the page "Clifford Durr") is answered from those pages only (:func:`sunar.text.focus`).

With ``requery``, an uncertain hop is first retrieved again, once (``requery`` names the query for
``retrieve``, and the graph goes back there); the hop is then answered from both rounds' evidence.
With ``hop_support=retrieve``, so is a hop whose pages do not state its answer (P(yes) < 0.5), for its
own sub-question: NAR goes on past the documents scored."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.hop_support import read_from, support_notes, supported
from sunar.models.nli import semantic_sets
from sunar.nar import stop_reason, top
from sunar.prompts.answer import SCHEMA, UNKNOWN, answer_from, answer_messages, echoes_example, read_answer, short_call
from sunar.prompts.spans import grounded_schema
from sunar.prompts.support import LABELS, p_yes, support_messages
from sunar.replan import avoided
from sunar.resources import resources
from sunar.sentences import cut_to_sentences, in_other_orders
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


def weighed(branch: list[Candidate], question: str, read: list, llm: Any) -> list[tuple[Candidate, float | None]]:
    """``branch_support``: the candidates a hop branches into, each with P(yes) that the pages ``read``
    state it (the support judge) and weighing its share times that (its share alone when the judge
    gives neither label); best first, ties in their order."""
    judged = [(c, p_yes(llm.judge(support_messages(question, c["answer"], read), LABELS))) for c in branch]
    return sorted(((Candidate(answer=c["answer"], share=round(c["share"] * (1.0 if p is None else p), 6)), p) for c, p in judged),
                  key=lambda w: -w[0]["share"])


def weighed_note(ranked: list[tuple[Candidate, float | None]]) -> str:
    """How the branching note goes on with ``branch_support``: each candidate's P(yes), best first."""
    said = [f"{c['answer']!r} (p = {'-' if p is None else f'{p:.2f}'})" for c, p in ranked]
    return ", weighed by its pages' support: " + ", ".join(said)


def other_readings(question: str, reply: Any, messages: list, call: dict[str, Any], read: list, found: list, cfg: Configuration,
                   res: Any, config: RunnableConfig) -> tuple[list[Any], list]:
    """The hop's ``hop_samples`` other readings (``hop_reading``) and the pages they were given: sampled from
    its own prompt; or each page it reads alone (a hop that reads one page has already read it alone: its
    greedy ``reply`` is that page's); or all its pages, named or not, cut short, in other orders."""
    if cfg.hop_reading == "documents":
        return [reply if [doc] == read else read_from([doc], question, res.llm, cfg, config) for doc in read[: cfg.hop_samples]], read
    if cfg.hop_reading == "sentences":
        shortened = cut_to_sentences(question, found, res.scorer.score, cfg.hop_sentences)
        return [read_from(pages, question, res.llm, cfg, config) for pages in in_other_orders(shortened)[: cfg.hop_samples]], found
    return res.llm.sample(messages, cfg.hop_samples, temperature=cfg.temperature, **call), read


def branch_off(hop: Hop, state: dict[str, Any], read: list, cfg: Configuration, res: Any) -> tuple[Hop, dict[str, Any], list[str]]:
    """The hop as the chain follows it (its first candidate naming something), the state's update (the
    chain's weight; the waiting ``chains`` with the others, if any) and the note saying so."""
    chains = list(state.get("chains") or [])
    follow, others = branches(hop["candidates"], cfg, 1 + len(chains))
    ranked: list[tuple[Candidate, float | None]] = [(c, None) for c in [follow, *others] if c is not None]
    weighing = bool(others) and cfg.branch_support and cfg.hop_support != "off"
    if weighing:
        ranked = weighed([c for c, _ in ranked], hop["question"], read, res.llm)
    update: dict[str, Any] = {}
    weight, path, base = float(state.get("weight", 1.0)), state.get("hops") or [], dict(hop)
    for i, (candidate, judged) in enumerate(ranked):  # the first is followed, the others wait as chains
        taken = {**base, "answer": candidate["answer"], **({} if judged is None else {"support": judged})}
        if i == 0:
            hop, update["weight"] = taken, round(weight * candidate["share"], 6)
        else:
            chains.append(Chain(hops=[*path, taken], draft_answer="", weight=round(weight * candidate["share"], 6), status="open", answer=""))
    if not others:
        return hop, update, []
    said = f"{len(others) + 1} candidate answers for {hop['question']!r}: each is followed as a chain"
    return hop, {**update, "chains": chains}, [said + (weighed_note(ranked) if weighing else "")]


def make_answer_hop(sampling: bool = True) -> Any:
    """The answer_hop node; hop sampling, branching and the support judge only where the graph has
    ASU (``sampling``)."""

    @node("answer_hop")
    def answer_hop(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        cfg = Configuration.from_runnable_config(config)
        res = resources(config)
        prior = state.get("prior") or {}
        scored = {**(prior.get("scored") or {}), **(state.get("scored") or {})}
        found = evidence_of(res.index.documents(top(scored, cfg.evidence)), scored)
        read = focus(state["sub_question"], found) if cfg.focus_pages else found
        messages = answer_messages(state["sub_question"], read)
        call = short_call(cfg, grounded_schema(read) if cfg.grounded_answers else SCHEMA)
        reply = res.llm.generate(messages, temperature=0.0, config=config, **call)
        notes = []
        if stop_reason(state, cfg) == "stalled":
            notes.append(
                f"NAR stopped early for {state['sub_question']!r} after {len(scored)} of {cfg.budget} documents: "
                f"the last {cfg.nar_patience} batch(es) added nothing to the top {cfg.evidence}"
            )
        said = read_answer(str(reply.content))
        if echoes_example(said, state["sub_question"], read):
            notes.append(f"the answer {said!r} to {state['sub_question']!r} was copied from the prompt's worked example, not the pages: unknown")
            said = UNKNOWN
        hop = Hop(question=state["sub_question"], answer=said, evidence=found, batches=[*(prior.get("batches") or []), *(state.get("batches") or [])])
        if len(read) < len(found):
            hop["read"] = [e["id"] for e in read]
        update: dict[str, Any] = {}
        if sampling and cfg.hop_samples:
            replies, shown = other_readings(state["sub_question"], reply, messages, call, read, found, cfg, res, config)
            answers = [hop["answer"], *(answer_from(str(r.content), state["sub_question"], shown) for r in replies)]
            hop["samples"] = answers
            hop["candidates"] = candidates_of(answers, semantic_sets(state["sub_question"], answers, res.nli))
            named = [c["answer"] for c in hop["candidates"] if known(c["answer"])]
            if cfg.requery and not prior and len(named) > 1:
                query = " ".join([state["sub_question"], *named])
                return {"requery": query, "acted": "uncertain", "notes": [f"{len(named)} candidate answers for {state['sub_question']!r}: retrieving again with them"]}
            if prior:
                hop["requery"] = state.get("requery", "")
            hop, update, branched = branch_off(hop, state, read, cfg, res)
            notes += branched
        if sampling and cfg.replan_avoid:  # the planned chain, after a weak first answer (sunar.replan)
            hop, avoiding = avoided(hop, state, read, call, res, config)
            notes += avoiding
        if sampling:  # judged where the graph has ASU; re-read, if at all, under the greedy reading's call
            hop = supported(hop, read, found, cfg, res, call, config, first=not state.get("hops"))
            notes += support_notes(hop)
            if cfg.hop_support == "retrieve" and not prior and hop.get("support") is not None and hop["support"] < 0.5:
                return {"requery": state["sub_question"], "acted": "unsupported", "notes": [*notes, f"the pages read for {hop['question']!r} do not state "
                        f"{hop['answer']!r} (p = {hop['support']:.2f}): retrieving again, past the documents scored"]}
        return {**update, "hops": [*(state.get("hops") or []), hop], "sub_question": "", "requery": "", "prior": {}, "notes": notes}

    return answer_hop
