"""Questions that compare, decided in code on the values their chains found.

A comparison ("Who was born later, A or B?", "Which film has the director who died first, A or
B?", "Are A and B from the same country?") names two entities. Self-Ask asks about each side (for a
bridge comparison, first the side's bridge: "Who directed A?", then "When was <director> born?"); a
small model then compares by shortcut (the order of mention, the better-known name) more than by the
values it found. So the values are read back from the chain and compared here:

- :func:`comparison` reads the question: its two sides as the question writes them, and what it asks
  (the earlier, the later, the longer life, the more, or whether the two are the same);
- :func:`sides` gives each side the hops that are about it (they name the side, or a name its hops found);
- :func:`decide` compares the last value of each side (dates or years; numbers for "more"; countries and
  nationalities for "the same") and answers with the side's name as the question writes it, or yes/no;
- :func:`as_side`: a final answer that names what one side's chain found (its director, its date)
  instead of the side is that side.

Where a side has no hop, a value does not parse, or the two are equal, nothing is decided and the
final step answers as for any question. :func:`shape` says which kind of question it is (a chain, a
comparison, or an inference over family relations), so each sees worked examples of its own shape.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from sunar.signals import agrees
from sunar.text import content_words, normalize_answer, title_words
from sunar.values import a_country, country_of, date_of, number_of

T = TypeVar("T", bound=tuple)
Asks = Literal["earliest", "latest", "longest", "most", "same"]
Shape = Literal["chain", "comparison", "inference"]

#: Hops a comparison may take, whatever ``max_hops``: two sides of two hops each (a bridge comparison:
#: each side's bridge, then its value; "who lived longer": each side's birth and death).
COMPARISON_HOPS = 4

_EARLY = r"earlier|first|older|oldest|sooner|before"
_LATE = r"later|last|younger|youngest|more recently|most recently|newer|after"
_MORE = r"more|most|larger|largest|bigger|biggest|higher|highest|greater|longer"
_WHICH = re.compile(
    rf"^(?P<head>(?:which|who|what)\b.*?\b(?P<word>{_EARLY}|{_LATE}|{_MORE})\b(?:\s+\w+(?=\s*,))?(?: than the other)?)\s*[,:]?\s+"
    r"(?:out of\s+|between\s+)?(?P<a>.+?)\s+(?:or|and)\s+(?P<b>.+?)\s*\?\s*$",
    re.IGNORECASE,
)
_WAS = re.compile(rf"^(?:was|is|were|did)\s+(?P<a>.+?)\s+or\s+(?P<b>.+?)\s+(?P<head>(?:born|died|released|founded|established|published|formed|created|built|opened|came out|come out)\b[\w\s]*?\b(?P<word>{_EARLY}|{_LATE}))\s*\?\s*$",
    re.IGNORECASE,
)
_OUT_OF = re.compile(rf"^(?P<head>(?:which|who|what)\b.*?\b(?P<word>{_EARLY}|{_LATE}|longer))\s+(?:out of|between)\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)\s*\?\s*$", re.IGNORECASE)
_SAME = re.compile(
    r"^(?:are|is|were|was|do|does|did)\s+(?P<middle>.+?)\s+(?:both\s+)?(?:located in the same|from the same|(?:come|came) from the same|born in the same|have the|has the|shares? the same)\b.*\?\s*$",
    re.IGNORECASE,
)
_SIDE_PREFIX = re.compile(
    r"^(?:both\s+)?(?:(?:the\s+)?(?:directors?|producers?|composers?|performers?|authors?|creators?)\s+of\s+(?:the\s+)?"
    r"(?:films?|movies?|songs?|albums?|books?|shows?)\s*:?\s+|(?:films?|movies?|songs?|albums?|books?|villages?|towns?|cities|places|people|"
    r"persons|players|bands|magazines|companies)\s*[:,]?\s+)?",
    re.IGNORECASE,
)
_SIDE_SUFFIX = re.compile(r"(?:,|\s+(?:films?|movies?|both))+$", re.IGNORECASE)
_KIN = re.compile(
    r"\b(?:(?:paternal|maternal)\s+grand(?:father|mother)|(?:father|mother|brother|sister|son|daughter)[\s-]in[\s-]law|"
    r"grand(?:father|mother|son|daughter)|uncle|aunt|nephew|niece|step-?(?:father|mother|son|daughter))\b",
    re.IGNORECASE,
)


#: What a comparison asks for, as the stream says it.
COMPARED: dict[str, str] = {"earliest": "the earlier", "latest": "the later", "longest": "the longer life", "most": "the more",
                             "same": "whether the same"}


@dataclass(frozen=True)
class Comparison:
    """What a comparing question asks: its two sides as it writes them, and which of them it wants."""

    a: str
    b: str
    asks: Asks

    @property
    def sides(self) -> tuple[str, str]:
        return self.a, self.b


def _side(text: str) -> str:
    return _SIDE_SUFFIX.sub("", _SIDE_PREFIX.sub("", text.strip())).strip(" ,:")


def comparison(question: str) -> Comparison | None:
    """The comparison ``question`` asks, or None when it does not compare two named things."""
    q = " ".join(question.split())
    for pattern in (_OUT_OF, _WHICH, _WAS):
        if (m := pattern.match(q)) is not None:
            word = m["word"].lower()
            lived = word == "longer" and "live" in m["head"].lower()
            asks: Asks = "longest" if lived else "earliest" if re.fullmatch(_EARLY, word) else "latest" if re.fullmatch(_LATE, word) else "most"
            a, b = _side(m["a"]), _side(m["b"])
            return Comparison(a, b, asks) if a and b and normalize_answer(a) != normalize_answer(b) else None
    if (m := _SAME.match(q)) is not None:
        middle = _SIDE_PREFIX.sub("", m["middle"].strip())
        a, sep, b = middle.partition(" and ")  # names are title-cased ("Leo And Loree"): the lower-case "and" joins them
        if sep and (a := _side(a)) and (b := _side(b)) and normalize_answer(a) != normalize_answer(b):
            return Comparison(a, b, "same")
    return None


@functools.lru_cache(maxsize=4096)
def shape(question: str) -> Shape:
    """The kind of question: a comparison of two named things, an inference over family relations
    ("Who is the paternal grandfather of X?": two relations the pages never state together), or a chain."""
    if comparison(question) is not None:
        return "comparison"
    return "inference" if _KIN.search(question) else "chain"


#: Family relations a question names in one word, spelled out as the steps ask them.
_SPELLED = {
    "paternal grandfather": "father of the father", "paternal grandmother": "mother of the father",
    "maternal grandfather": "father of the mother", "maternal grandmother": "mother of the mother",
    "father-in-law": "father of the spouse", "mother-in-law": "mother of the spouse",
    "father in law": "father of the spouse", "mother in law": "mother of the spouse",
}


def spelled_out(question: str) -> str:
    """``question`` with its compound family relations spelled out ("paternal grandfather" -> "father of
    the father"), so a step that asks the same relation twice is seen to be asked for."""
    for compound, spelled in _SPELLED.items():
        question = re.sub(rf"\b{compound}\b", spelled, question, flags=re.IGNORECASE)
    return question


def about_a_side(question: str, follow_up: str) -> bool:
    """Whether ``follow_up`` asks about one of the two things ``question`` compares."""
    c = comparison(question)
    return c is not None and any(_about(follow_up, side) for side in c.sides)


def of_its_kind(question: str, pool: Sequence[T]) -> list[T]:
    """The worked examples (``(question, steps, answer)``) of ``pool`` whose questions are of
    ``question``'s kind (:func:`shape`), or all of them when none is."""
    kind = shape(question)
    return [d for d in pool if shape(d[0]) == kind] or list(pool)


def hop_budget(question: str, max_hops: int) -> int:
    """The most hops a question may take: ``max_hops``, or :data:`COMPARISON_HOPS` for a comparison."""
    return max(max_hops, COMPARISON_HOPS) if shape(question) == "comparison" else max_hops


# --- each side's hops ----------------------------------------------------------------------------


def _about(hop_question: str, name: str) -> bool:
    """Whether a hop's question is about ``name``: it holds two thirds or more of the name's content
    words (its bracketed qualifier left out: "Oloibiri (Film)" is asked about as "Oloibiri")."""
    words = title_words(name) or content_words(name)
    return bool(words) and 3 * len(words & content_words(hop_question)) >= 2 * len(words)


def sides(c: Comparison, hops: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """The hops about each side, in order: a hop is a side's when its question names the side or a
    name that side's hops found (its bridge). None when a hop is about both sides or neither side has one."""
    mine: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
    for hop in hops:
        question = str(hop["question"])
        about = [i for i, side in enumerate(c.sides) if _about(question, side) or any(_about(question, str(h["answer"])) for h in mine[i])]
        if len(about) == 2:
            # "Who directed A?" also names a bridge a shared word away: the side named in full wins
            about = [i for i in about if _about(question, c.sides[i])] or about
        if len(about) == 1:
            mine[about[0]].append(hop)
        elif len(about) == 2:
            return None
    return mine if mine[0] and mine[1] else None


@dataclass(frozen=True)
class Decision:
    """A comparison decided in code: the answer, and the values each side was decided on."""

    answer: str
    values: tuple[str, str]
    note: str


def _value(asks: Asks, hops: Sequence[dict[str, Any]]) -> tuple[Any, str] | None:
    """A side's value to compare, and how it reads: its last hop's answer (for "longest", the span
    between its last two dates); None where it does not parse."""
    last = str(hops[-1]["answer"])
    if asks == "same":  # the side's country or nationality, not a name found on the way (its director)
        return (country_of(last), last) if a_country(last) else None
    if asks == "most":
        return None if (n := number_of(last)) is None else ((n, 0, 0), last)
    if asks == "longest":
        dates = [d for h in hops if (d := date_of(str(h["answer"]))) is not None][-2:]
        if len(dates) < 2:
            return None
        (y1, m1, d1), (y2, m2, d2) = sorted(dates)
        return (y2 - y1) * 372 + (m2 - m1) * 31 + (d2 - d1), f"{y2 - y1} years"
    if (d := date_of(last)) is not None:
        return d, last
    return None


def decide(question: str, hops: Sequence[dict[str, Any]]) -> Decision | None:
    """The comparison's answer from the values its chain found, or None when it cannot be decided
    in code (not a comparison, a side without a hop or a value, a tie, or dates too coarse to order)."""
    c = comparison(question)
    if c is None or (split := sides(c, hops)) is None:
        return None
    values = [_value(c.asks, side) for side in split]
    if values[0] is None or values[1] is None:
        return None
    (va, ra), (vb, rb) = values[0], values[1]
    said = f"{c.a}: {ra}; {c.b}: {rb}"
    if c.asks == "same":
        same = va == vb
        return Decision("yes" if same else "no", (ra, rb), f"{said}: {'the same' if same else 'not the same'}")
    if c.asks != "longest" and va[0] == vb[0] and (0 in va[1:] or 0 in vb[1:]) and va[1:] != vb[1:]:
        return None  # the same year, a month or day missing: no order
    if va == vb:
        return None
    first = va < vb
    want_a = first if c.asks == "earliest" else not first  # the latest, the longest life, the most: the larger
    return Decision(c.a if want_a else c.b, (ra, rb), f"{said}: {COMPARED[c.asks]} is {c.a if want_a else c.b}")


def as_side(question: str, answer: str, hops: Sequence[dict[str, Any]]) -> str | None:
    """For a question that asks which of two things, a final answer that is not one of them but what
    one side's hops found (its bridge, "the director", or its value): that side, as the question writes
    it. None for any other question or answer, or when both sides found it."""
    c = comparison(question)
    if c is None or c.asks == "same" or any(_about(answer, side) for side in c.sides) or (split := sides(c, hops)) is None:
        return None
    owners = [i for i, side in enumerate(split) if any(agrees(str(h["answer"]), answer) for h in side)]
    return c.sides[owners[0]] if len(owners) == 1 else None


def unfinished(question: str, hops: Sequence[dict[str, Any]], budget: int) -> bool:
    """Whether a comparison is being answered before its chain found what it compares (:func:`decide`
    cannot decide it) while its hop budget has room for another step."""
    return len(hops) < budget and comparison(question) is not None and decide(question, hops) is None
