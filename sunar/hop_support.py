"""Whether the pages a hop read state its answer, and what a doubted hop does (``hop_support``):
the answer_hop node's second reading, for graphs with ASU.

The LLM judges whether the pages the hop read state its answer (P(yes) is kept
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
takes that answer when the judge finds it better supported (:func:`read_cut`); ``cut_uncertain`` reads so
only the hops ``escalate_uncertain`` would escalate, those the judge doubts or whose answers split: the
``cpu`` profile's, as SUNAR's uncertainty acting on a hop at a small cost. ``escalate`` is for a user who has
a larger model beside a small one; the other second readings were measured and not kept
(``benchmarks/RESULTS.md``, *Tried and not kept*), and stay for ablation.

:func:`support_notes` says what a second reading changed, for ``--stream`` and the trace."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.prompts import careful
from sunar.prompts.answer import SCHEMA, answer_from, answer_messages, short_call
from sunar.prompts.spans import grounded_schema, spans
from sunar.prompts.support import LABELS, judged_better, p_yes, ruled_out, support_messages
from sunar.sentences import cut_to_sentences, in_other_orders
from sunar.signals import agrees, fits_kind, known
from sunar.state import Hop
from sunar.text import names_of, normalize_answer


def supported(hop: Hop, read: list, found: list, cfg: Configuration, res: Any, call: dict[str, Any], config: RunnableConfig, first: bool = True) -> Hop:
    """The hop with its answer's support (``hop_support``; already judged with ``branch_support``),
    re-read once when unsupported (``reread``) with ``call``, the hop's own reading's arguments, or
    read again from ``found``, all its pages, cut short (``cut``). ``first``: the chain's first hop
    (``spans_first`` judges only its spans)."""
    if cfg.hop_support == "off" or not known(hop["answer"]):
        return hop
    judged = hop["support"] if "support" in hop else p_yes(res.llm.judge(support_messages(hop["question"], hop["answer"], read), LABELS))
    hop = {**hop, "support": judged}
    if cfg.hop_support == "cut" or cfg.hop_support == "cut_uncertain" and escalating(hop, judged, cfg):
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
    its pages' spans; with ``cut_uncertain``, its pages cut short) reads the hop again: its judge doubts it
    (P(yes) < 0.5), or, with ``escalate_uncertain``, ``careful``, ``spans``, ``spans_first`` or
    ``cut_uncertain``, its answers fall into more than one semantic set naming something."""
    split = cfg.hop_support in ("escalate_uncertain", "careful", "spans", "spans_first", "cut_uncertain") and len([c for c in hop.get("candidates") or [] if known(c["answer"])]) > 1
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
    """``hop_support=cut`` (or ``cut_uncertain``, for a hop :func:`escalating` marks): the hop read once more by the
    same LLM from all its pages, ``found`` (named or not), cut to their ``hop_sentences`` sentences most relevant
    to the sub-question and reversed. An answer that names something else, of a kind the sub-question asks for (no
    bare date for a where or who), is judged against the pages the hop read, as the hop's was, and taken when it
    is better supported (what that would change on S's own hops: ``benchmarks/bench_hop_triggers.py``)."""
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


def support_notes(hop: Hop) -> list[str]:
    """What the hop's second reading changed (nothing: no note)."""
    notes = []
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
    return notes
