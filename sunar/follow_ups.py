"""What a Self-Ask follow-up does, told from the words of the question and the steps so far (rules,
no model): whether it builds on an answer found, goes round the last one, still describes a person it
has not named, restates the question or repeats a step; what the question still asks after its first
hop; whether a chain ended on its bridge. :mod:`sunar.nodes.decompose` acts on them."""

from __future__ import annotations

import re
from typing import Any

from sunar.compare import spelled_out
from sunar.signals import known
from sunar.text import content_words, normalize_answer, restates, substituted


def builds_on(follow_up: str, hops: list[dict[str, Any]]) -> bool:
    """Whether a follow-up names one of the answers found so far (any content word of one), or
    whether that cannot be told (no answer has a content word)."""
    found = set().union(*(content_words(str(h.get("answer", ""))) for h in hops))
    return not found or bool(found & content_words(follow_up))


def remaining(question: str, hops: list[dict[str, Any]]) -> str | None:
    """What the question still asks after its first hop: the question with that hop's part of it
    replaced by its answer (:func:`sunar.text.substituted`). None after more hops (a second
    replacement reads the first one's answer as a part), or when the part is not found."""
    if len(hops) != 1 or not known(str(hops[0]["answer"])):
        return None
    return substituted(question, hops[0]["question"], str(hops[0]["answer"]))


def new_rest(question: str, hops: list[dict[str, Any]], asked: set[str]) -> str | None:
    """:func:`remaining`, unless that was asked already."""
    rest = remaining(question, hops)
    return rest if rest and normalize_answer(rest) not in asked else None


def loops_on_answer(follow_up: str, hops: list[dict[str, Any]], question: str) -> bool:
    """Whether a follow-up only goes round the last answer: it names that answer and asks nothing
    else ("Who is Chris Pérez?"), or asks of it what the step before asked ("Who is the spouse of
    Selena?" -> Chris Pérez, then "Who is the spouse of Chris Pérez?") while the question names
    that relation no more often than the chain has asked it (not at the second step of "the father of X's
    father", nor of "the paternal grandfather of X", but at its third)."""
    if len(hops) < 1 or not known(str(hops[-1]["answer"])):
        return False
    answer = content_words(str(hops[-1]["answer"]))
    words = content_words(follow_up)
    if not answer or not answer <= words:
        return False
    asks = words - answer
    if not asks:
        return True
    before = content_words(hops[-1]["question"])
    told = normalize_answer(spelled_out(question)).split()
    asked = [content_words(str(h["question"])) for h in hops]
    return asks <= before and any(told.count(w) <= sum(w in a for a in asked) for w in asks)


#: People a multi-hop question describes instead of naming ("X's father", "the director of film Y").
_RELATIONS = (
    "father|mother|husband|wife|spouse|son|daughter|brother|sister|child|parent|grandfather|grandmother|"
    "father-in-law|mother-in-law|uncle|aunt|director|composer|author|writer|screenwriter|lyricist|performer|"
    "producer|founder|creator|designer|architect|painter|singer|publisher|owner|cast member|actor|actress"
)
_POSSESSIVE = re.compile(rf"(?:['’]s|s['’])\s+(?:{_RELATIONS})\b", re.IGNORECASE)
_OF = re.compile(rf"\bthe\s+(?:{_RELATIONS})\s+of\b", re.IGNORECASE)
_ASKS_FOR_NAME = re.compile(r"^\W*(?:who|whom|whose)\b|^\W*(?:what|which)\s+(?:is|was|are|were)\b", re.IGNORECASE)


def describes_hidden(follow_up: str) -> bool:
    """Whether a follow-up still describes a person instead of asking for them: it holds "X's
    father" with more words after it, or "the director of ...", and does not ask who that is
    ("When was X's father born?", not "Who is X's father?" or "What nationality is X's father?")."""
    if _ASKS_FOR_NAME.search(follow_up):
        return False
    if (m := _POSSESSIVE.search(follow_up)) is not None:
        return any(ch.isalnum() for ch in follow_up[m.end() :])
    return _OF.search(follow_up) is not None


FAULTS = {
    "echo": "repeated the question",
    "described": "asked its first follow-up about a person it had not named",
    "repeat": "repeated a follow-up",
}


def fault(kind: str, text: str, question: str, hops: list[dict[str, Any]], asked: set[str]) -> str:
    """'echo' (the first follow-up is the question again), 'described' (the first follow-up asks
    about "X's father" before asking who that is), 'repeat' (a follow-up asked before) or ''."""
    if kind != "follow_up":
        return ""
    if not hops and restates(text, question):
        return "echo"
    if not hops and describes_hidden(text):
        return "described"
    return "repeat" if normalize_answer(text) in asked else ""
