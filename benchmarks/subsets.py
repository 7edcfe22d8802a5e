"""The questions a fix of the reader can act on, read from a run made without it.

A fix that acts at one point of the graph leaves every question that never reaches that point as it
was. The others are run by the code before the fix and again after it, from one LLM call cache: the
two then share every call up to the fix. Not the first run's records: the embedded model is not
bit-for-bit the same from one run to the next (llama.cpp's reused prompt cache shifts near ties), and
questions chosen for a trace that mostly ends wrong would drift towards right on a rerun alone. Which
questions can reach the fix is read from the first run's trace, never from its answers' rightness.

The two reading fixes (``reading_fixes``: a page named by one lower-case word alone is not named; an
answer copied from the answer prompt's example is unknown) act where a hop's answer is the example's,
or where its pages, found again in the index, are named otherwise by the two rules.

The possessive fix (``possessive``, measured and not kept: a possessive's "'s" is no part of the name, so "Who is
Humehume's father?" names the page *Humehume*) acts where a hop's pages, found again, are named otherwise with it
and without it, on any chain the trace holds.

``one_answer`` acts where an answer the trace holds (final, doubted, a hop's or a candidate's, on any
chain) lists names where the question asks for one. ``page_form`` acts where such an answer has a date
or ordinal that can be written another way and MER's pages, found again, do not hold it as it is.
A larger ``max_hops`` (``hop_limit``) acts where a chain of the trace reached the limit.
``bridge_to_last`` acts where the final answer, or MER's that the judge doubted, is a bridge of the chain
shown (an earlier hop's answer a later sub-question names) and its last hop answered something else.

    .venv/bin/python -m benchmarks.subsets one_answer evals/results/RUN --variant VARIANT --questions dev.jsonl > SUBSET.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.results_runs import of, read_records
from sunar.nodes.shorten import past_the_bridge
from sunar.prompts.answer import echoes_example
from sunar.signals import whole_chain
from sunar.text import (
    POSSESSIVE,
    content_words,
    listed_names,
    named_pages_of,
    named_share,
    title_words,
    without_possessive,
    written_otherwise,
)


def ends_on_one_hop(record: dict[str, Any]) -> bool:
    """Whether the chain shown has one hop, and that hop did not ask the whole question."""
    return whole_chain(record["question"], record.get("reasoning_path") or []) == 0.0


def _words_share(title: str, question: str) -> float:
    """:func:`sunar.text.named_share` before the reading fixes: any of the title's words counts, one in
    lower case too (a possessive's "'s" made part of the word by SQuAD normalisation, as then)."""
    words = title_words(POSSESSIVE.sub("s", title))
    return len(words & content_words(POSSESSIVE.sub("s", question))) / len(words) if words else 0.0


def _possessive_dropped_share(title: str, question: str) -> float:
    """:func:`sunar.text.named_share` with the possessive fix (measured, not kept): "Humehume's" is "Humehume"."""
    return named_share(without_possessive(title), without_possessive(question))


def pages_of(index: Any, scorer: Any, question: str) -> list[dict[str, str]]:
    """A hop's pages as the hop would find them (they are not stored with it): its sub-question's
    first 16 documents of the fused first stage, the ``scorer``'s best 5."""
    docs = index.documents([doc_id for doc_id, _ in index.first_stage(question, 50, "fused")][:16])
    scores = scorer.score(question, docs)
    return [{"title": docs[i].title, "text": docs[i].text} for i in sorted(range(len(docs)), key=lambda i: -scores[i])][:5]


def refocused_by(index: Any, scorer: Any, before: Callable[[str, str], float], after: Callable[[str, str], float] = named_share) -> Callable[[str], bool]:
    """Whether a sub-question's pages (:func:`pages_of`) are named otherwise by the share ``before`` a
    fix than by the share ``after`` it (``focus_pages`` reads other pages)."""

    def refocused(question: str) -> bool:
        pages = pages_of(index, scorer, question)
        return named_pages_of(question, pages, before) != named_pages_of(question, pages, after)

    return refocused


def possessive_can_act(index: Any, scorer: Any) -> Callable[[dict[str, Any]], bool]:
    """Whether the possessive fix could change a record made with it or without it: a hop of any of its
    chains (the one shown and the others) whose pages are named otherwise with the fix than without."""
    refocused = refocused_by(index, scorer, _possessive_dropped_share)

    def hops(record: dict[str, Any]) -> list[dict[str, Any]]:
        return [*(record.get("reasoning_path") or []), *(h for chain in record.get("chains") or [] for h in chain.get("path") or [])]

    return lambda record: any(refocused(q) for q in {h["question"] for h in hops(record)})


def reading_fixes_can_act(index: Any, scorer: Any) -> Callable[[dict[str, Any]], bool]:
    """Whether the two reading fixes could have changed a record made before them: a hop answer or
    candidate is a name of the answer prompt's worked example, or a hop's pages (:func:`pages_of`) are
    named otherwise under the new rule than under the old (``focus_pages``)."""

    refocused = refocused_by(index, scorer, _words_share)

    def echoed(hop: dict[str, Any]) -> bool:  # the pages are not stored: only the question rules a name out
        said = [hop["answer"], *(c["answer"] for c in hop.get("candidates") or [])]
        return any(echoes_example(str(a), hop["question"], []) for a in said)

    def can_act(record: dict[str, Any]) -> bool:
        return any(echoed(h) or refocused(h["question"]) for h in record.get("reasoning_path") or [])

    return can_act


def finals_said(record: dict[str, Any]) -> list[str]:
    """The final answers a record's trace holds: its own, and MER's that the judge doubted (which a rule
    at ``shorten`` saw before ``check`` replaced it)."""
    doubted = (a for note in record.get("notes") or [] for a in re.findall(r"^the judge doubted the final answer '(.*?)' \(p", note))
    return [str(a) for a in (record["answer"], *doubted)]


def answers_said(record: dict[str, Any]) -> list[str]:
    """Every answer a record's trace holds: its final ones (:func:`finals_said`), and each hop's and
    candidate's, on any chain (what a rule on the final answer may be given)."""
    chains = [record.get("reasoning_path") or [], *(chain.get("path") or [] for chain in record.get("chains") or [])]
    return [*finals_said(record), *(str(a) for hops in chains for h in hops for a in (h["answer"], *(c["answer"] for c in h.get("candidates") or [])))]


def one_answer_can_act(record: dict[str, Any]) -> bool:
    """Whether ``one_answer`` could have changed a record made without it: an answer its trace holds
    lists names where the question asks for one (:func:`sunar.text.listed_names`; the pages are not stored)."""
    return any(listed_names(record["question"], a) for a in answers_said(record))


def bridge_to_last_can_act(record: dict[str, Any]) -> bool:
    """Whether ``bridge_to_last`` could have changed a record made without it: its final answer, or MER's
    that the judge doubted, is a bridge of the chain shown and the last hop's answer would replace it."""
    return any(past_the_bridge(record.get("reasoning_path") or [], a) is not None for a in finals_said(record))


def page_form_can_act(index: Any) -> Callable[[dict[str, Any]], bool]:
    """Whether ``page_form`` could have changed a record made without it: an answer its trace holds has a
    date or ordinal that can be written another way, and MER's pages (found again in the index; a hop's
    are not stored, and they hold MER's) do not hold the answer as it is."""

    def can_act(record: dict[str, Any]) -> bool:
        pages = " | ".join(d.text for d in index.documents(record.get("evidence_ids") or [])).casefold()
        return any(written_otherwise(a) and a.casefold() not in pages for a in answers_said(record))

    return can_act


def hop_limit_can_act(record: dict[str, Any]) -> bool:
    """A larger ``max_hops`` acts where a chain of the trace reached the limit (the notes say so)."""
    return any(n.startswith("hop limit (") for n in record.get("notes") or [])


CAN_ACT: dict[str, Callable[[dict[str, Any]], bool]] = {"one_answer": one_answer_can_act, "bridge_to_last": bridge_to_last_can_act,
                                                        "hop_limit": hop_limit_can_act}


def with_index(switch: str, index: Path | None) -> Callable[[dict[str, Any]], bool]:
    """:func:`reading_fixes_can_act`, :func:`possessive_can_act` or :func:`page_form_can_act` on the index at
    ``index``, with the offline scorer the runs used."""
    if index is None:
        raise SystemExit(f"{switch} needs --index: the index the runs read")
    from sunar.models.scorer import make_scorer
    from sunar.stores.index import Index

    opened = Index(index)
    scorer = make_scorer("hybrid", opened.embedder)
    if switch == "page_form":
        return page_form_can_act(opened)
    return (reading_fixes_can_act if switch == "reading_fixes" else possessive_can_act)(opened, scorer)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("switch", choices=[*sorted(CAN_ACT), "reading_fixes", "possessive", "page_form"], help="the fix")
    p.add_argument("run", nargs="+", type=Path, help="runs made without the fix (evals/results/RUN)")
    p.add_argument("--variant", required=True, help="the variant, as recorded, whose trace is read")
    p.add_argument("--questions", required=True, type=Path, help="the questions file of those runs")
    p.add_argument("--index", type=Path, help="reading_fixes, possessive, page_form: the index the runs read (its pages are found again)")
    args = p.parse_args(argv)
    can_act = CAN_ACT.get(args.switch) or with_index(args.switch, args.index)
    acts = {r["id"]: r for run in args.run for r in of(read_records(run, committed=True), args.variant) if can_act(r)}
    questions = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    # the chains that ended on one hop first, as the subsets of the committed runs were made
    kept = sorted((q for q in questions if q["id"] in acts), key=lambda q: not ends_on_one_hop(acts[q["id"]]))
    sys.stdout.write("".join(f"{json.dumps(q)}\n" for q in kept))
    print(f"{len(kept)} questions {args.switch} can act on", file=sys.stderr)


if __name__ == "__main__":
    main()
