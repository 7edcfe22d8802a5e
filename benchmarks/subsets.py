"""The questions a switch can act on, read from a run made without it; and the run with and without
the switch put together from a rerun of only those questions, with the switch off and on.

A switch that acts at one point of the graph leaves every question that never reaches that point as
it was, so the first run's records stand for those, with the switch on or off. The others are run
again in one run, both ways, from one LLM call cache: the two then share every call up to the
switch. Not the first run's records: the embedded model is not bit-for-bit the same from one run to
the next (llama.cpp's reused prompt cache shifts near ties), and questions chosen for a trace that
mostly ends wrong would drift towards right on a rerun alone. Which questions can reach the switch
is read from the first run's trace, never from its answers' rightness.

``repeat_samples`` acts where a Self-Ask step repeats a follow-up, which the first run's notes say.

The two reading fixes (``reading_fixes``: a page named by one lower-case word alone is not named; an
answer copied from the answer prompt's example is unknown) act where a hop's answer is the example's,
or where its pages, found again in the index, are named otherwise by the two rules.

The possessive fix (``possessive``: a possessive's "'s" is no part of the name, so "Who is Humehume's
father?" names the page *Humehume*) acts where a hop's pages, found again, are named otherwise with it and
without it, on any chain the trace holds.

``final_vote`` acts where two chains or more ended and the final step's answer may lose their vote
(the trace shows the chains, their weights and the one the final step read). ``branch_support`` acts
where a hop that branched would follow another candidate first, weighed by the judge on its pages
found again in the index (the judge is the LLM, so choosing takes minutes).

``one_answer`` acts where an answer the trace holds (final, doubted, a hop's or a candidate's, on any
chain) lists names where the question asks for one. ``page_form`` acts where such an answer has a date
or ordinal that can be written another way and MER's pages, found again, do not hold it as it is.
``bridge_to_last`` acts where the final answer, or MER's that the judge doubted, is a bridge of the chain
shown (an earlier hop's answer a later sub-question names) and its last hop answered something else.

``careful`` and ``spans`` (``hop_support=careful``, ``hop_support=spans``) act where a hop of the chain
shown was doubted by the judge or its answers split (a chain not shown is not looked at); ``spans_first``
where the first hop was.

``past_bridge`` acts where Self-Ask's chain ends after one hop whose sub-question was only part of
the question. A chain whose reasoning path has one such hop can; so can any of S's questions whose
first hop branched (the chain not shown may have ended there); the subset lists the one-hop chains
first, so a rerun stopped part-way has measured where the switch acts for sure. A question that
ended otherwise in the first run but would reach the switch in another is left out: the switch is
measured where the first run says it acts.

    .venv/bin/python -m benchmarks.subsets past_bridge evals/results/RUN --variant VARIANT --questions dev.jsonl > SUBSET.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.results_runs import Records, noted, of, read_records
from sunar.configuration import Configuration
from sunar.hop_support import escalating
from sunar.nodes.answer_hop import weighed
from sunar.nodes.shorten import past_the_bridge
from sunar.nodes.vote import supported_hop
from sunar.prompts.answer import echoes_example
from sunar.signals import known, whole_chain
from sunar.text import (
    POSSESSIVE,
    content_words,
    listed_names,
    named_pages_of,
    named_share,
    normalize_answer,
    title_words,
    without_country,
    written_otherwise,
)

CAREFUL = Configuration(hop_support="careful")


def ends_on_one_hop(record: dict[str, Any]) -> bool:
    """Whether the chain shown has one hop, and that hop did not ask the whole question."""
    return whole_chain(record["question"], record.get("reasoning_path") or []) == 0.0


def past_bridge_can_act(record: dict[str, Any]) -> bool:
    """Whether ``past_bridge`` could have changed this record (made without it)."""
    path = record.get("reasoning_path") or []
    if not path:
        return False
    first = path[0]["question"]
    branched = any("candidate answers for" in note and first in note and "followed as a chain" in note for note in record.get("notes") or [])
    return ends_on_one_hop(record) or branched


def repeat_samples_can_act(record: dict[str, Any]) -> bool:
    """Whether ``repeat_samples`` could have changed this record (made without it): a step of one of
    its chains repeated a follow-up."""
    return noted(record, "repeated a follow-up")


def _words_share(title: str, question: str) -> float:
    """:func:`sunar.text.named_share` before the reading fixes: any of the title's words counts, one in
    lower case too (a possessive's "'s" made part of the word by SQuAD normalisation, as then)."""
    words = title_words(POSSESSIVE.sub("s", title))
    return len(words & content_words(POSSESSIVE.sub("s", question))) / len(words) if words else 0.0


def _possessive_kept_share(title: str, question: str) -> float:
    """:func:`sunar.text.named_share` before the possessive fix: "Humehume's" was the word "humehumes"."""
    return named_share(POSSESSIVE.sub("s", title), POSSESSIVE.sub("s", question))


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
    """Whether the possessive fix could have changed a record made before it: a hop of any of its
    chains (the one shown and the others) whose pages are named otherwise with the fix than without."""
    refocused = refocused_by(index, scorer, _possessive_kept_share)

    def hops(record: dict[str, Any]) -> list[dict[str, Any]]:
        return [*(record.get("reasoning_path") or []), *(h for chain in record.get("chains") or [] for h in chain.get("path") or [])]

    return lambda record: any(refocused(q) for q in {h["question"] for h in hops(record)})


def reading_fixes_can_act(index: Any, scorer: Any) -> Callable[[dict[str, Any]], bool]:
    """Whether the two reading fixes could have changed a record made before them: a hop answer or
    candidate is a name of the answer prompt's worked example, or a hop's pages (:func:`pages_of`) are
    named otherwise under the new rule than under the old (``focus_pages``)."""

    refocused = refocused_by(index, scorer, _words_share, _possessive_kept_share)

    def echoed(hop: dict[str, Any]) -> bool:  # the pages are not stored: only the question rules a name out
        said = [hop["answer"], *(c["answer"] for c in hop.get("candidates") or [])]
        return any(echoes_example(str(a), hop["question"], []) for a in said)

    def can_act(record: dict[str, Any]) -> bool:
        return any(echoed(h) or refocused(h["question"]) for h in record.get("reasoning_path") or [])

    return can_act


def final_vote_can_act(record: dict[str, Any]) -> bool:
    """Whether ``final_vote`` could have changed this record (made without it): two chains or more
    ended, and the final step's answer may not be in the heaviest set: it is not the chosen chain's
    own (or the check replaced it), or that chain weighs a third or less (the final step's vote weighs
    as much as the chain it read, so with that chain it outweighs the rest otherwise)."""
    chains, chosen = record.get("chains") or [], record.get("chosen")
    if len(chains) < 2 or chosen is None:
        return False
    read = chains[chosen]
    checked = noted(record, "the judge doubted")
    return checked or normalize_answer(record["answer"]) != normalize_answer(read["answer"]) or read["weight"] <= 1 / 3


def branch_support_can_act(index: Any, scorer: Any, llm: Any, width: int = 2) -> Callable[[dict[str, Any]], bool]:
    """Whether ``branch_support`` could have changed a record made without it: a hop that branched
    (its first ``width`` candidates naming something) would follow another candidate first when each
    weighs its share times P(yes) that the hop's pages (:func:`pages_of`) state it, by ``llm``'s judge."""

    def reordered(hop: dict[str, Any]) -> bool:
        branch = [c for c in hop.get("candidates") or [] if known(c["answer"])][:width]
        return len(branch) > 1 and weighed(branch, hop["question"], pages_of(index, scorer, hop["question"]), llm)[0][0]["answer"] != branch[0]["answer"]

    return lambda record: any(reordered(h) for h in record.get("reasoning_path") or [])


def careful_can_act(record: dict[str, Any]) -> bool:
    """Whether ``hop_support=careful`` could have changed this record (made with the judge, without it):
    a hop of the chain shown that names something and that the judge doubted or whose answers split."""
    return any(known(h["answer"]) and escalating(h, h.get("support"), CAREFUL) for h in record.get("reasoning_path") or [])


def first_hop_can_act(record: dict[str, Any]) -> bool:
    """Whether ``hop_support=spans_first`` could have changed this record: :func:`careful_can_act`, for
    the first hop of the chain shown."""
    return careful_can_act({**record, "reasoning_path": (record.get("reasoning_path") or [])[:1]})


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


CAN_ACT: dict[str, Callable[[dict[str, Any]], bool]] = {
    "past_bridge": past_bridge_can_act, "repeat_samples": repeat_samples_can_act, "final_vote": final_vote_can_act,
    "careful": careful_can_act, "spans": careful_can_act, "spans_first": first_hop_can_act,
    "one_answer": one_answer_can_act, "bridge_to_last": bridge_to_last_can_act}


def replayed(base: Records, rerun: Records, base_variant: str, variant: str, can_act: Callable[[dict[str, Any]], bool]) -> Records:
    """``variant``'s records (``base_variant``, or it with the switch on) for every question of ``base``:
    the rerun's where it has one, else ``base_variant``'s own. A question the switch can act on that
    the rerun lacks is an error, not a record taken as it was."""
    again = {r["id"]: r for r in of(rerun, variant)}
    out = []
    for record in of(base, base_variant):
        if record["id"] in again:
            out.append(again[record["id"]])
        elif can_act(record):
            raise ValueError(f"{variant}: question {record['id']} can be changed by the switch but was not run again")
        else:
            out.append({**record, "variant": variant})
    return out


def complete(base: Records, rerun: Records, base_variant: str, variant: str, can_act: Callable[[dict[str, Any]], bool]) -> bool:
    """Whether the rerun holds, as ``base_variant`` and as ``variant`` (it with the switch on), every
    question of ``base`` the switch can act on."""
    both = {r["id"] for r in of(rerun, base_variant)} & {r["id"] for r in of(rerun, variant)}
    return all(r["id"] in both for r in of(base, base_variant) if can_act(r))


def ruled(records: Records, variant: str, switch: str, rule: Callable[[dict[str, Any]], str | None]) -> Records:
    """``variant``'s records under ``variant+switch``, each answer replaced where ``rule`` gives one:
    a switch that is a rule on the final state and makes no call changes nothing else, so it is
    measured on a run's stored records (the reasoning path, with each hop's support)."""
    return [{**r, "variant": f"{variant}+{switch}", **({"answer": new} if (new := rule(r)) is not None else {})} for r in of(records, variant)]


def final_from_hop(record: dict[str, Any]) -> str | None:
    """``final_from_hop`` on a stored answer: the last hop's supported answer where it replaces the
    final one, with ``drop_country`` as the run had it after."""
    hop = supported_hop({"question": record["question"], "answer": record["answer"], "hops": record.get("reasoning_path") or []})
    return None if hop is None else without_country(record["question"], hop)


#: A question that asks where something or someone was or is (a place of birth, death, burial, study).
ASKS_WHERE = re.compile(r"^(where\b|what is the place of (birth|death|burial)\b)", re.IGNORECASE)


def without_region(record: dict[str, Any]) -> str | None:
    """A rule tried on stored answers, not a switch of the product: where the question asks where, a
    place answer keeps only its first part ("Passaic, New Jersey" -> "Passaic"); None: unchanged."""
    answer = str(record.get("answer") or "")
    if not ASKS_WHERE.search(str(record["question"])) or ", " not in answer or re.search(r"\d", answer):
        return None
    return answer.split(", ")[0]


def with_index(switch: str, index: Path | None, llm: str) -> Callable[[dict[str, Any]], bool]:
    """:func:`reading_fixes_can_act`, :func:`possessive_can_act`, :func:`branch_support_can_act` or :func:`page_form_can_act`
    on the index at ``index``, with the offline scorer the runs used (and, for ``branch_support``, the LLM ``llm`` as the judge)."""
    if index is None:
        raise SystemExit(f"{switch} needs --index: the index the runs read")
    from sunar.models.providers import make_llm
    from sunar.models.scorer import make_scorer
    from sunar.stores.index import Index

    opened = Index(index)
    scorer = make_scorer("hybrid", opened.embedder)
    if switch == "branch_support":
        return branch_support_can_act(opened, scorer, make_llm(llm))
    if switch == "page_form":
        return page_form_can_act(opened)
    return (reading_fixes_can_act if switch == "reading_fixes" else possessive_can_act)(opened, scorer)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("switch", choices=[*sorted(CAN_ACT), "reading_fixes", "possessive", "branch_support", "page_form"])
    p.add_argument("run", nargs="+", type=Path, help="runs made without the switch (evals/results/RUN)")
    p.add_argument("--variant", required=True, help="the variant, as recorded, whose trace is read")
    p.add_argument("--questions", required=True, type=Path, help="the questions file of those runs")
    p.add_argument("--index", type=Path, help="reading_fixes, possessive, branch_support, page_form: the index the runs read (its pages are found again)")
    p.add_argument("--llm", default="embedded:qwen2.5-1.5b", help="branch_support: the judge (the runs' LLM)")
    args = p.parse_args(argv)
    can_act = CAN_ACT.get(args.switch) or with_index(args.switch, args.index, args.llm)
    acts = {r["id"]: r for run in args.run for r in of(read_records(run, committed=True), args.variant) if can_act(r)}
    questions = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    # the chains that ended on one hop first: a run stopped part-way has measured where the switch acts for sure
    kept = sorted((q for q in questions if q["id"] in acts), key=lambda q: not ends_on_one_hop(acts[q["id"]]))
    sys.stdout.write("".join(f"{json.dumps(q)}\n" for q in kept))
    print(f"{len(kept)} questions {args.switch} can act on", file=sys.stderr)


if __name__ == "__main__":
    main()
