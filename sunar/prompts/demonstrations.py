"""Worked decompositions retrieved for a question: the Self-Ask prompt shows, after its invented
examples, the ``k`` worked decompositions of a pool whose questions are shaped most like this one
(Self-Ask and SUNAR alike, so the comparison stays the paper's).

A pool is a JSON Lines file of ``{"question", "steps": [[follow-up, answer], ...], "answer"}``. The
shipped pool (``sunar/data/decompositions.jsonl``) holds the decompositions of the first 100 dev
questions and the comparisons and inferences of dev_b (:func:`pool_records` builds it from the data's
own ``decomposition`` or ``evidence_triples``), so dev questions past the first 100 never see their own
or their neighbours' answers, and no question sees its own.

Questions are compared by shape, not subject: the words left when names, titles and numbers are
taken out ("what is the place of birth of the director of film"), so a demonstration teaches how
to split this kind of question without bringing a related question's entities along. A question
never gets its own decomposition.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from sunar.errors import SunarError
from sunar.text import normalize_answer

SHIPPED_POOL = Path(__file__).resolve().parent.parent / "data" / "decompositions.jsonl"

Demonstration = tuple[str, list[tuple[str, str]], str]

#: Follow-up questions for 2WikiMultiHopQA's relations (its records give triples, not questions).
RELATIONS = {
    "place of birth": "Where was {} born?",
    "place of death": "Where did {} die?",
    "place of burial": "Where was {} buried?",
    "date of birth": "When was {} born?",
    "date of death": "When did {} die?",
    "cause of death": "What did {} die of?",
    "director": "Who directed {}?",
    "composer": "Who composed {}?",
    "performer": "Who performed {}?",
    "publisher": "Who published {}?",
    "father": "Who is the father of {}?",
    "mother": "Who is the mother of {}?",
    "spouse": "Who is the spouse of {}?",
    "country of citizenship": "What is the nationality of {}?",
    "educated at": "Where did {} study?",
    "employer": "Who employed {}?",
    "award received": "What award did {} receive?",
    "inception": "When was {} founded?",
    "publication date": "When was {} released?",
    "country": "Which country is {} in?",
    # MuSiQue's "X >> relation" sub-questions, where the dev data has them
    "sibling": "Who is the sibling of {}?",
    "child": "Who is the child of {}?",
    "cast member": "Who is a cast member of {}?",
    "producer": "Who produced {}?",
    "screenwriter": "Who wrote the screenplay of {}?",
    "author": "Who wrote {}?",
    "developer": "Who developed {}?",
    "manufacturer": "Who made {}?",
    "owned by": "Who owns {}?",
    "member of political party": "Which political party is {} a member of?",
    "located in the administrative territorial entity": "In which administrative territory is {} located?",
    "mouth of the watercourse": "Into which body of water does {} flow?",
    "shares border with": "What borders {}?",
    "headquarters location": "Where is {} headquartered?",
    "record label": "What is the record label of {}?",
}

_NAMES = re.compile(r"\b[A-Z0-9][\w'’.\-]*(?:\s+(?:of|the|de|von|van|and|in)?\s*[A-Z0-9][\w'’.\-]*)*")


def as_question(text: str) -> str:
    """A MuSiQue sub-question as a question: "Vivien Leigh >> spouse" becomes "Who is the spouse of
    Vivien Leigh?"; a lower-case one gets its capital and question mark."""
    subject, arrow, relation = text.partition(">>")
    if arrow:
        relation = relation.strip()
        return RELATIONS.get(relation, f"What is the {relation} of {{}}?").format(subject.strip())
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith("?") else "?")


def steps_of(record: dict[str, Any]) -> list[tuple[str, str]] | None:
    """A dev record's worked decomposition: MuSiQue's sub-questions with "#k" filled in by the
    k-th answer, or 2Wiki's triples as follow-ups. A chain's triples (compositional, inference) each
    ask about the answer before; a comparison's ask about each entity it names (a bridge
    comparison's later ones about the answers found for them). None when the record has neither."""
    if record.get("decomposition"):
        steps: list[tuple[str, str]] = []
        for part in record["decomposition"]:
            question = re.sub(r"#(\d+)", lambda m: steps[int(m.group(1)) - 1][1] if int(m.group(1)) <= len(steps) else m.group(0), part["question"])
            steps.append((as_question(question), str(part["answer"])))
        return steps
    if record.get("evidence_triples"):
        compares = record.get("type") in ("comparison", "bridge_comparison")
        steps = []
        for subject, relation, answer in record["evidence_triples"]:
            about = (found_as(subject, steps) if compares else None) or (steps[-1][1] if steps else subject)
            steps.append((RELATIONS.get(relation, f"What is the {relation} of {{}}?").format(about), str(answer)))
        return steps
    return None


def found_as(subject: str, steps: Sequence[tuple[str, str]]) -> str:
    """A comparison triple's subject as its step names it: an earlier step's answer when it is one
    ("Johannes Meyer (director)" is the "Johannes Meyer" found as a film's director), else the subject
    without its bracketed qualifier."""
    plain = re.sub(r"\s*\([^)]*\)\s*$", "", subject).strip()
    return next((a for _, a in steps if normalize_answer(a) == normalize_answer(plain)), plain)


def final_answer(record: dict[str, Any], steps: Sequence[tuple[str, str]]) -> str:
    """The worked decomposition's final answer: its last step's, or for a comparison the gold (yes, no,
    or one of the compared entities, written as its step names it rather than in the question's title case)."""
    if record.get("type") not in ("comparison", "bridge_comparison"):
        return steps[-1][1]
    gold = str((record.get("answers") or [""])[0])
    if normalize_answer(gold) in ("yes", "no"):
        return normalize_answer(gold)
    named = [re.sub(r"\s*\([^)]*\)\s*$", "", s).strip() for s, _, _ in record["evidence_triples"]]
    return next((n for n in named if normalize_answer(n) == normalize_answer(gold)), gold)


def pool_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pool lines for dev records (those with a worked decomposition)."""
    out = []
    for record in records:
        steps = steps_of(record)
        if steps:
            out.append({"question": record["question"], "steps": [list(s) for s in steps], "answer": final_answer(record, steps),
                        "dataset": record.get("dataset", "")})
    return out


@functools.lru_cache(maxsize=4096)
def shape(question: str) -> frozenset[str]:
    """The question's words without its names, titles and numbers."""
    return frozenset(normalize_answer(_NAMES.sub(" ", question[:1].lower() + question[1:])).split())


def likeness(shaped: frozenset[str], question: str) -> float:
    """How alike ``question`` is shaped to a question whose :func:`shape` is ``shaped``: the Jaccard of the two."""
    theirs = shape(question)
    return len(shaped & theirs) / len(shaped | theirs) if shaped | theirs else 0.0


@functools.cache
def load_pool(path: str) -> tuple[Demonstration, ...]:
    """The pool at ``path`` ("" for the shipped one), read once per process."""
    file = Path(path) if path else SHIPPED_POOL
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise SunarError(f"demonstration pool {file} cannot be read ({exc.strerror}); give a JSON Lines file or leave demonstration_pool empty") from None
    pool = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            pool.append((str(rec["question"]), [(str(q), str(a)) for q, a in rec["steps"]], str(rec["answer"])))
        except (ValueError, KeyError, TypeError):
            raise SunarError(f"demonstration pool {file} line {number}: expected {{\"question\", \"steps\": [[q, a], ...], \"answer\"}}") from None
    return tuple(pool)


def retrieve(question: str, pool: Sequence[Demonstration], k: int) -> list[Demonstration]:
    """The ``k`` demonstrations whose questions are shaped most like ``question`` (Jaccard of
    :func:`shape`; ties keep the pool's order), never the question itself; the closest last. They
    are drawn from the pool's questions of the same kind (a chain, a comparison or an inference:
    :func:`sunar.compare.shape`) where it has any."""
    if k <= 0:
        return []
    own, mine = normalize_answer(question), shape(question)
    ranked = sorted((d for d in pool if normalize_answer(d[0]) != own), key=lambda d: -likeness(mine, d[0]))
    return ranked[:k][::-1]
