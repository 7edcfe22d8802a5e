"""Whether the pages a hop read state its answer, and what a doubted hop does (``hop_support``):
the answer_hop node's judge and second reading, for graphs with ASU.

The LLM judges whether the pages the hop read state its answer; P(yes) is kept with the hop
(``judge``). A hop is doubted when the judge says no (P(yes) < 0.5) or its sampled answers fall
into more than one semantic set naming something (:func:`doubted`: SUNAR's own uncertainty).
``cut_uncertain``, the ``cpu`` profile's, reads a doubted hop once more with the same LLM, from all its
pages cut to their most relevant sentences in reverse order, and takes that answer when the judge finds
it better supported (:func:`read_cut`). ``escalate`` has ``escalate_llm``, a larger model beside a small
one, read a hop the judge doubts and judge both answers (:func:`escalated`); ``escalate_uncertain`` sends
it every doubted hop.

:func:`support_notes` says what a second reading changed, for ``--stream`` and the trace."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.prompts.answer import answer_from, answer_messages, short_call
from sunar.prompts.support import LABELS, judged_better, p_yes, support_messages
from sunar.sentences import cut_to_sentences
from sunar.signals import agrees, fits_kind, known
from sunar.state import Hop

#: The sentences of a hop's pages its cut reading keeps (set before it was measured, not tuned).
CUT_SENTENCES = 6


def supported(hop: Hop, read: list, found: list, cfg: Configuration, res: Any, call: dict[str, Any], config: RunnableConfig) -> Hop:
    """The hop with its answer's support judged against the pages it ``read`` (``hop_support``), and,
    when doubted, read again: from ``found``, all its pages, cut short (``cut_uncertain``), or by the
    larger model under ``call``, the hop's own reading's arguments (``escalate``)."""
    if cfg.hop_support == "off" or not known(hop["answer"]):
        return hop
    judged = p_yes(res.llm.judge(support_messages(hop["question"], hop["answer"], read), LABELS))
    hop = {**hop, "support": judged}
    if cfg.hop_support == "judge" or not doubted(hop, judged, split_counts=cfg.hop_support != "escalate"):
        return hop
    if cfg.hop_support == "cut_uncertain":
        return read_cut(hop, read, found, cfg, res, config)
    return escalated(hop, read, res.larger("hop_support"), call, config)


def doubted(hop: Hop, judged: float | None, split_counts: bool = True) -> bool:
    """Whether a hop is read again: its judge doubts it (P(yes) < 0.5), or (``split_counts``) its answers
    fall into more than one semantic set naming something."""
    split = split_counts and len([c for c in hop.get("candidates") or [] if known(c["answer"])]) > 1
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


def read_cut(hop: Hop, read: list, found: list, cfg: Configuration, res: Any, config: RunnableConfig) -> Hop:
    """``hop_support=cut_uncertain``: the doubted hop read once more by the same LLM from all its pages,
    ``found`` (named or not), cut to their :data:`CUT_SENTENCES` sentences most relevant to the sub-question
    and reversed. An answer that names something else, of a kind the sub-question asks for (no bare date for
    a where or who), is judged against the pages the hop read, as the hop's was, and taken when it is better
    supported."""
    shortened = cut_to_sentences(hop["question"], found, res.scorer.score, CUT_SENTENCES)[::-1]
    reply = res.llm.generate(answer_messages(hop["question"], shortened), temperature=0.0, config=config, **short_call(cfg))
    other = answer_from(str(reply.content), hop["question"], found)
    kept = {**hop, "cut_read": other}
    if not known(other) or agrees(other, hop["answer"]) or not fits_kind(hop["question"], other):
        return kept
    judged = p_yes(res.llm.judge(support_messages(hop["question"], other, read), LABELS))
    return {**kept, "answer": other, "support": judged, "unsupported": hop["answer"]} if judged_better(judged, hop.get("support")) else kept


def support_notes(hop: Hop) -> list[str]:
    """What the hop's second reading changed (nothing: no note)."""
    if not hop.get("unsupported"):
        return []
    return [f"{hop['question']!r} read again from its pages cut short: {hop['answer']!r} is better supported than {hop['unsupported']!r}"]
