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

With ``hop_support``, the LLM judges whether the pages the hop read state its answer (P(yes) is kept
with the hop); with ``hop_support=reread``, an answer they do not state (P(yes) < 0.5) is read again
once, ruled out, and the new answer is taken when it names something else and is better supported;
with ``hop_support=escalate``, it is read again by ``escalate_llm`` (a larger model), which judges both
answers and keeps the better supported (:func:`escalated`); ``escalate_uncertain`` escalates as well a
hop whose answers fall into more than one semantic set, SUNAR's own uncertainty (:func:`escalating`;
the judge alone misses most wrong bridges: ``benchmarks/RESULTS.md``). ``careful`` sends the same hops to
the same LLM, which copies the pages' sentence that answers before the answer (:func:`read_carefully`).
``spans`` has the judge rate, for the same hops, every span of the pages the hop read as its answer,
and takes the best-rated one when it is better supported (:func:`judge_spans`): checking is easier than
finding for a small model; ``spans_first``, for a chain's first hop only, the bridge the rest stands
on. ``cut`` reads every hop once more with the same LLM, from all its pages cut short and reversed, and
takes that answer when the judge finds it better supported (:func:`read_cut`).

With ``requery``, an uncertain hop is first retrieved again, once (``requery`` names the query for
``retrieve``, and the graph goes back there); the hop is then answered from both rounds' evidence.
With ``hop_support=retrieve``, so is a hop whose pages do not state its answer (P(yes) < 0.5), for its
own sub-question: NAR goes on past the documents scored."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.models.nli import semantic_sets
from sunar.nar import stop_reason, top
from sunar.prompts import careful
from sunar.prompts.answer import SCHEMA, UNKNOWN, answer_from, answer_messages, echoes_example, read_answer, short_call
from sunar.prompts.spans import grounded_schema, spans
from sunar.prompts.support import LABELS, judged_better, p_yes, ruled_out, support_messages
from sunar.resources import resources
from sunar.sentences import cut_to_sentences, in_other_orders
from sunar.signals import agrees, fits_kind, known
from sunar.state import Candidate, Chain, Hop, evidence_of
from sunar.text import focus, names_of, normalize_answer
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


def supported(hop: Hop, read: list, found: list, cfg: Configuration, res: Any, call: dict[str, Any], config: RunnableConfig, first: bool = True) -> Hop:
    """The hop with its answer's support (``hop_support``; already judged with ``branch_support``),
    re-read once when unsupported (``reread``) with ``call``, the hop's own reading's arguments, or
    read again from ``found``, all its pages, cut short (``cut``). ``first``: the chain's first hop
    (``spans_first`` judges only its spans)."""
    if cfg.hop_support == "off" or not known(hop["answer"]):
        return hop
    judged = hop["support"] if "support" in hop else p_yes(res.llm.judge(support_messages(hop["question"], hop["answer"], read), LABELS))
    hop = {**hop, "support": judged}
    if cfg.hop_support == "cut":
        return read_cut(hop, read, found, cfg, res, config)
    if cfg.hop_support.startswith("escalate") and escalating(hop, judged, cfg):
        return escalated(hop, read, res.larger("hop_support"), call, config)
    if cfg.hop_support == "careful" and escalating(hop, judged, cfg):
        return read_carefully(hop, read, res.llm, cfg, config)
    if (cfg.hop_support == "spans" or cfg.hop_support == "spans_first" and first) and escalating(hop, judged, cfg):
        return judge_spans(hop, read, res.llm)
    if cfg.hop_support != "reread" or judged is None or judged >= 0.5:
        return hop
    other = read_again(res.llm, ruled_out(hop["question"], hop["answer"]), hop, read, call, config)
    if other is None or not judged_better(other[1], judged):
        return hop
    return {**hop, "answer": other[0], "support": other[1], "unsupported": hop["answer"]}


def escalating(hop: Hop, judged: float | None, cfg: Configuration) -> bool:
    """Whether the larger model (or, with ``careful``, the careful reading; with ``spans``, the judge of
    its pages' spans) reads the hop again: its judge doubts it (P(yes) < 0.5), or, with
    ``escalate_uncertain``, ``careful``, ``spans`` or ``spans_first``, its answers fall into more than
    one semantic set naming something."""
    split = cfg.hop_support in ("escalate_uncertain", "careful", "spans", "spans_first") and len([c for c in hop.get("candidates") or [] if known(c["answer"])]) > 1
    return split or (judged is not None and judged < 0.5)


def read_again(llm: Any, asked: str, hop: Hop, read: list, call: dict[str, Any], config: RunnableConfig) -> tuple[str, float | None] | None:
    """The hop's pages read again by ``llm``, asked ``asked``: (the answer, P(yes) that the pages state it
    as the answer to the hop's question, by ``llm``'s judge); None when it names nothing else."""
    reply = llm.generate(answer_messages(asked, read), temperature=0.0, config=config, **call)
    other = answer_from(str(reply.content), asked, read)
    if not known(other) or agrees(other, hop["answer"]):
        return None
    return other, p_yes(llm.judge(support_messages(hop["question"], other, read), LABELS))


def escalated(hop: Hop, read: list, larger: Any, call: dict[str, Any], config: RunnableConfig) -> Hop:
    """``hop_support=escalate``: the doubted hop read again by the ``larger`` LLM from the same pages,
    which then judges both answers; the one it finds better supported is kept, with its P(yes)."""
    other = read_again(larger, hop["question"], hop, read, call, config)
    first = p_yes(larger.judge(support_messages(hop["question"], hop["answer"], read), LABELS))
    kept = {**hop, "support": hop["support"] if first is None else first, "escalated": hop["answer"]}
    return {**kept, "answer": other[0], "support": other[1]} if other is not None and judged_better(other[1], first) else kept


def read_carefully(hop: Hop, read: list, llm: Any, cfg: Configuration, config: RunnableConfig) -> Hop:
    """``hop_support=careful``: the doubted or uncertain hop read again by the same LLM, which copies
    the sentence of the pages that answers the sub-question before the answer (:mod:`sunar.prompts.careful`).
    Its answer is taken, judged, when that sentence is on the pages, is about what the sub-question names
    and holds it (:func:`sunar.prompts.careful.quoted_answer`), and the answer names something else."""
    reply = llm.generate(careful.careful_messages(hop["question"], read), temperature=0.0, config=config,
                         max_tokens=min(cfg.max_tokens, careful.TOKENS), schema=cfg.reply_schema(careful.SCHEMA))
    found = careful.quoted_answer(str(reply.content), hop["question"], read)
    if found is None or agrees(found[0], hop["answer"]):
        return {**hop, "read_carefully": hop["answer"]}  # read again, and kept
    judged = p_yes(llm.judge(support_messages(hop["question"], found[0], read), LABELS))
    return {**hop, "answer": found[0], "support": judged, "read_carefully": hop["answer"], "sentence": found[1]}


#: Most spans of its pages a doubted hop has judged (``hop_support=spans``), in the pages' order.
MOST_JUDGED = 40


def answer_spans(question: str, pages: list) -> list[str]:
    """The spans of ``pages`` (:func:`sunar.prompts.spans.spans`) that could answer ``question``: naming
    something, of the kind it asks for (no bare date for a where or who), and not one of its own names or
    words ("Limehouse Blues" does not answer "Who composed Limehouse Blues?"); at most :data:`MOST_JUDGED`."""
    asked, words = {normalize_answer(n) for n in names_of(question)}, f" {normalize_answer(question)} "
    fit = [s for s in spans(pages) if known(s) and fits_kind(question, s) and (n := normalize_answer(s)) not in asked and f" {n} " not in words]
    return fit[:MOST_JUDGED]


def span_ratings(question: str, read: list, llm: Any) -> list[tuple[str, float | None]]:
    """Each span of the pages ``read`` that could answer ``question`` (:func:`answer_spans`), with P(yes)
    from the support judge that those pages state it, in the pages' order."""
    return [(s, p_yes(llm.judge(support_messages(question, s, read), LABELS))) for s in answer_spans(question, read)]


def judge_spans(hop: Hop, read: list, llm: Any) -> Hop:
    """``hop_support=spans``: every span of the pages the doubted or uncertain hop read that could answer
    it (:func:`answer_spans`) judged as its answer, as the hop's own was (the prompts share their
    beginning, so llama.cpp reads only each span's words). The best-rated span is taken when it names
    something other than the hop's answer and is better supported (what that changes on S's own first
    hops: ``benchmarks/bench_span_judge.py``)."""
    judged = span_ratings(hop["question"], read, llm)
    kept = {**hop, "spans_judged": len(judged)}
    best = max(judged, key=lambda sp: -1.0 if sp[1] is None else sp[1], default=None)
    if best is None or agrees(best[0], hop["answer"]) or not judged_better(best[1], hop.get("support")):
        return kept
    return {**kept, "answer": best[0], "support": best[1], "unsupported": hop["answer"]}


def read_cut(hop: Hop, read: list, found: list, cfg: Configuration, res: Any, config: RunnableConfig) -> Hop:
    """``hop_support=cut``: the hop read once more by the same LLM from all its pages, ``found`` (named or
    not), cut to their ``hop_sentences`` sentences most relevant to the sub-question and reversed. An answer
    that names something else, of a kind the sub-question asks for (no bare date for a where or who), is judged against the pages the hop read, as the hop's was, and taken when
    it is better supported (what that would change on S's own hops: ``benchmarks/bench_hop_triggers.py``)."""
    shortened = cut_to_sentences(hop["question"], found, res.scorer.score, cfg.hop_sentences)
    reply = read_from(in_other_orders(shortened)[0], hop["question"], res.llm, cfg, config)
    other = answer_from(str(reply.content), hop["question"], found)
    kept = {**hop, "cut_read": other}
    if not known(other) or agrees(other, hop["answer"]) or not fits_kind(hop["question"], other):
        return kept
    judged = p_yes(res.llm.judge(support_messages(hop["question"], other, read), LABELS))
    return {**kept, "answer": other, "support": judged, "unsupported": hop["answer"]} if judged_better(judged, hop.get("support")) else kept


def read_from(pages: list, question: str, llm: Any, cfg: Configuration, config: RunnableConfig) -> Any:
    """``question`` read greedily from ``pages`` (a hop's other readings), as its first reply was: under the
    pages' grounded grammar with ``grounded_answers``."""
    return llm.generate(answer_messages(question, pages), temperature=0.0, config=config,
                        **short_call(cfg, grounded_schema(pages) if cfg.grounded_answers else SCHEMA))


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
            shown = read  # the pages the other readings are given
            if cfg.hop_reading == "documents":  # each page it reads alone (the named ones with focus_pages): do they agree?
                # a hop that reads one page has already read it alone: its greedy reply is that page's
                replies = [reply if [doc] == read else read_from([doc], state["sub_question"], res.llm, cfg, config) for doc in read[: cfg.hop_samples]]
            elif cfg.hop_reading == "sentences":  # all its pages (not only those it names) cut short, in other orders: do they agree?
                shown = found
                shortened = cut_to_sentences(state["sub_question"], found, res.scorer.score, cfg.hop_sentences)
                replies = [read_from(pages, state["sub_question"], res.llm, cfg, config) for pages in in_other_orders(shortened)[: cfg.hop_samples]]
            else:
                replies = res.llm.sample(messages, cfg.hop_samples, temperature=cfg.temperature, **call)
            answers = [hop["answer"], *(answer_from(str(r.content), state["sub_question"], shown) for r in replies)]
            hop["samples"] = answers
            hop["candidates"] = candidates_of(answers, semantic_sets(state["sub_question"], answers, res.nli))
            named = [c["answer"] for c in hop["candidates"] if known(c["answer"])]
            if cfg.requery and not prior and len(named) > 1:
                query = " ".join([state["sub_question"], *named])
                return {"requery": query, "acted": "uncertain", "notes": [f"{len(named)} candidate answers for {state['sub_question']!r}: retrieving again with them"]}
            if prior:
                hop["requery"] = state.get("requery", "")
            chains = list(state.get("chains") or [])
            follow, others = branches(hop["candidates"], cfg, 1 + len(chains))
            ranked: list[tuple[Candidate, float | None]] = [(c, None) for c in [follow, *others] if c is not None]
            weighing = bool(others) and cfg.branch_support and cfg.hop_support != "off"
            if weighing:
                ranked = weighed([c for c, _ in ranked], state["sub_question"], read, res.llm)
            weight, path, base = float(state.get("weight", 1.0)), state.get("hops") or [], dict(hop)
            for i, (candidate, judged) in enumerate(ranked):  # the first is followed, the others wait as chains
                taken = {**base, "answer": candidate["answer"], **({} if judged is None else {"support": judged})}
                if i == 0:
                    hop, update["weight"] = taken, round(weight * candidate["share"], 6)
                else:
                    chains.append(Chain(hops=[*path, taken], draft_answer="", weight=round(weight * candidate["share"], 6), status="open", answer=""))
            if others:
                update["chains"] = chains
                said = f"{len(others) + 1} candidate answers for {state['sub_question']!r}: each is followed as a chain"
                notes.append(said + (weighed_note(ranked) if weighing else ""))
        if sampling:  # judged where the graph has ASU; re-read, if at all, under the greedy reading's call
            hop = supported(hop, read, found, cfg, res, call, config, first=not state.get("hops"))
            if hop.get("unsupported") and "spans_judged" in hop:
                notes.append(f"{hop['spans_judged']} spans of the pages read for {hop['question']!r} judged as its answer: "
                             f"{hop['answer']!r} is better supported than {hop['unsupported']!r}")
            elif hop.get("unsupported") and "cut_read" in hop:
                notes.append(f"{hop['question']!r} read again from its pages cut short: {hop['answer']!r} is better supported than {hop['unsupported']!r}")
            elif hop.get("unsupported"):
                notes.append(f"{hop['unsupported']!r} is not what the pages read for {hop['question']!r} state: {hop['answer']!r} is")
            if hop.get("read_carefully") and hop.get("sentence"):
                notes.append(f"{hop['read_carefully']!r} to {hop['question']!r} was doubted or uncertain; read again carefully, the pages' "
                             f"sentence {hop['sentence']!r} gives {hop['answer']!r}")
            if cfg.hop_support == "retrieve" and not prior and hop.get("support") is not None and hop["support"] < 0.5:
                return {"requery": state["sub_question"], "acted": "unsupported", "notes": [*notes, f"the pages read for {hop['question']!r} do not state "
                        f"{hop['answer']!r} (p = {hop['support']:.2f}): retrieving again, past the documents scored"]}
        return {**update, "hops": [*(state.get("hops") or []), hop], "sub_question": "", "requery": "", "prior": {}, "notes": notes}

    return answer_hop
