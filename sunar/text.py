"""Text: the corpus's passages (:class:`Document`, what stores keep and models score), the SQuAD
normalisation every comparison of answers uses (metrics, NLI's short-cut, the repeat checks of the
decompositions), the word-level tests built on it (which page a question names), and three rules on
a final answer: without its country, one name of a list, and its dates and ordinals as its pages write them."""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD-style normalisation: lower case, no punctuation, no articles, single spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def restates(text: str, question: str) -> bool:
    """Whether ``text`` is the whole question again (same words, give or take one in twenty)."""
    a, b = set(normalize_answer(text).split()), set(normalize_answer(question).split())
    return bool(a) and len(a & b) / len(a | b) >= 0.95


#: Words too common to show that a question names an earlier answer ("unknown" is no answer).
_COMMON = frozenset(
    ["and", "for", "from", "with", "who", "whom", "what", "was", "were", "did", "does", "which", "where", "when", "how", "that", "this", "his", "her", "its", "not", "unknown"]
)


def content_words(text: str) -> set[str]:
    """Normalised words longer than two letters that are not question or function words."""
    return {w for w in normalize_answer(text).split() if len(w) > 2 and w not in _COMMON}


#: A page title's bracketed qualifier: "Henry Edwards (actor)" is a page about "Henry Edwards".
_QUALIFIER = re.compile(r"\s*\([^)]*\)\s*$")


def title_words(title: str) -> set[str]:
    """A page title's content words, its bracketed qualifier left out."""
    return content_words(_QUALIFIER.sub("", title))


def _capitalised(question: str) -> set[str]:
    """The content words a question writes with a capital or a digit, its first word left out: its names."""
    written = [w.lstrip("\"'(\u201c\u2018") for w in question.split()[1:]]
    return {c for w in written if w[:1].isupper() or w[:1].isdigit() for c in content_words(w)}


#: A possessive's "'s" (straight or curly apostrophe).
POSSESSIVE = re.compile(r"['\u2019]s\b")


def without_possessive(text: str) -> str:
    """``text`` with each possessive's "'s" left out: "Humehume's father" is "Humehume father"."""
    return POSSESSIVE.sub("", text)


def names_of(question: str) -> set[str]:
    """The question's names (:func:`_capitalised`), a possessive's "'s" left out: "humehume" in
    "Who is Humehume's father?"."""
    return _capitalised(without_possessive(question))


def named_share(title: str, question: str) -> float:
    """How much of a page's title (its qualifier left out) the question names: the share of the
    title's content words among the question's ("Munjong of Goryeo" in "Where was Munjong born?": 0.5).
    One word alone names a page only when the question writes it as a name: "computer" in "... connection
    of computer peripherals?" is a common noun, not the page "Computer"."""
    words = title_words(title)
    named = words & content_words(question)
    if len(named) == 1 and not named & _capitalised(question):
        return 0.0
    return len(named) / len(words) if words else 0.0


Page = TypeVar("Page", bound=Mapping[str, Any])
#: The least share of a page title's words a sub-question must name for the hop to be read from it.
FOCUS_SHARE = 0.5


def named_pages_of(question: str, evidence: Sequence[Page], share: Callable[[str, str], float] = named_share) -> list[Page]:
    """The pages the question names most (``share``, at least :data:`FOCUS_SHARE`), in the
    evidence's order; none when it names none."""
    shares = [share(e["title"], question) for e in evidence]
    best = max(shares, default=0.0)
    return [e for e, s in zip(evidence, shares, strict=True) if s == best] if best >= FOCUS_SHARE else []


def focus(question: str, evidence: Sequence[Page]) -> list[Page]:
    """The pages the question names most (:func:`named_pages_of`); all of the evidence when it names none."""
    return named_pages_of(question, evidence) or list(evidence)


#: Countries a place answer ends with that ISO 3166 names otherwise or not at all (former states).
_MORE_COUNTRIES = (
    "United States", "USA", "U.S.", "US", "United Kingdom", "UK", "England", "Scotland", "Wales", "Northern Ireland",
    "Russia", "Iran", "Syria", "Vietnam", "Laos", "Taiwan", "South Korea", "North Korea", "Korea", "Czech Republic",
    "Bolivia", "Venezuela", "Tanzania", "Moldova", "Macedonia", "Brunei", "Palestine", "Vatican City", "Ivory Coast",
    "Austria-Hungary", "Russian Empire", "Ottoman Empire", "Soviet Union", "USSR", "Prussia", "German Empire",
    "West Germany", "East Germany", "Holy Roman Empire", "British India", "Czechoslovakia", "Yugoslavia",
)
#: Country names that are also the last part of places elsewhere ("Atlanta, Georgia"): never dropped.
_ALSO_A_STATE = frozenset({"georgia"})
_ASKS_FOR_A_COUNTRY = re.compile(r"\b(countr(y|ies)|nations?|nationality|citizenship|state)\b", re.IGNORECASE)


@cache
def countries() -> frozenset[str]:
    """Country names, case-folded: ISO 3166's current and former countries (pycountry) and more.
    (pycountry is imported here, not at start-up: only ``drop_country`` needs it.)"""
    import pycountry

    names = {getattr(c, a, None) for c in pycountry.countries for a in ("name", "common_name", "official_name")}
    names |= {c.name for c in pycountry.historic_countries}
    return frozenset(n.casefold() for n in (*names, *_MORE_COUNTRIES) if n and "," not in n) - _ALSO_A_STATE


def without_country(question: str, answer: str) -> str:
    """``answer`` without the countries it ends with ("Munich, Germany" -> "Munich"), unless the
    question asks for a country or the answer is nothing but one."""
    if _ASKS_FOR_A_COUNTRY.search(question):
        return answer
    pieces = [p.strip() for p in answer.split(", ")]
    while len(pieces) > 1 and pieces[-1].casefold() in countries():
        pieces.pop()
    return ", ".join(pieces)


#: How a list of names is joined: commas (", and" too) or "and".
_LIST_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")
#: A question that asks for several ("Who were the founders", "both", "all"), or (comma lists only)
#: for a place, written "city, county, state".
_ASKS_FOR_SEVERAL = re.compile(r"^\W*(who|what|which)\s+(are|were)\b|\b(both|all|members|list)\b", re.IGNORECASE)
_ASKS_FOR_A_PLACE = re.compile(r"^\W*where\b|\b(place|city|town|county|state|country|region|province|territor\w*|located|location)\b", re.IGNORECASE)


def _a_name(piece: str) -> bool:
    """Whether a list's piece reads as a name: two to five words, capitalised, no digit, no article first."""
    words = piece.split()
    return 2 <= len(words) <= 5 and piece[:1].isupper() and not any(c.isdigit() for c in piece) and words[0].lower() not in _ARTICLES


def listed_names(question: str, answer: str) -> list[str]:
    """The names ``answer`` lists where the question asks for one (none when it is no such list: see
    :func:`one_of_list`, which looks for them on the pages)."""
    pieces = [p.strip() for p in _LIST_SEPARATOR.split(answer.strip())]
    if len(pieces) < 2 or not all(_a_name(p) for p in pieces) or _ASKS_FOR_SEVERAL.search(question):
        return []
    if re.search(r"\band\b", answer) is None and (len(pieces) < 3 or _ASKS_FOR_A_PLACE.search(question)):
        return []
    return pieces


def one_of_list(question: str, answer: str, titles: Sequence[str], texts: Sequence[str]) -> str:
    """``answer`` cut to its first name that ``texts`` (pages' texts, sampled answers) hold apart from
    the whole and the question does not name, where it lists names ("Michael Bublé and Josh Groban" ->
    "Michael Bublé", sampled alone) and the question asks for one. Kept when a piece is no name (a date,
    a number, one word, "The ...") or none is found but within the whole ("American Car and Foundry
    Company"), when the whole is in one of ``titles`` ("Master and Commander"), or, for a list of commas
    alone, when it has two pieces or the question asks for a place ("Springfield, Sangamon County, Illinois")."""
    pieces = listed_names(question, answer)
    if not pieces:
        return answer
    whole = f" {normalize_answer(answer)} "
    if any(whole in f" {normalize_answer(t)} " for t in titles):
        return answer
    apart = f" {' | '.join(normalize_answer(t) for t in texts)} ".replace(whole, " | ")  # not only as a part of the whole
    asked = f" {normalize_answer(question)} "
    return next((p for p in pieces if (name := f" {normalize_answer(p)} ") in apart and name not in asked), answer)


MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
#: A date written day first ("22 February 1720") or month first ("February 22, 1720"), and an ordinal
#: written in figures ("3rd") or in words ("third"), up to the twentieth.
_DAY_FIRST = re.compile(rf"\b(\d{{1,2}}) ({MONTHS}),? (\d{{1,4}})\b")
_MONTH_FIRST = re.compile(rf"\b({MONTHS}) (\d{{1,2}}),? (\d{{1,4}})\b")
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh", "twelfth",
             "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth")
_ORDINAL = re.compile(rf"\b(?:(\d{{1,2}})(?:st|nd|rd|th)|({'|'.join(_ORDINALS)}))\b", re.IGNORECASE)


def is_full_date(text: str) -> bool:
    """Whether ``text`` is a whole date, day first or month first ("2 May 1934", "May 2, 1934")."""
    return any(re.fullmatch(p.pattern, text.strip(), re.IGNORECASE) for p in (_DAY_FIRST, _MONTH_FIRST))


def _other_ways(match: re.Match[str]) -> list[str]:
    """The other usual ways to write a date or an ordinal that one of the patterns above matched."""
    if match.re is _DAY_FIRST:
        day, month, year = match.groups()
        return [f"{month} {day}, {year}", f"{month} {day} {year}"]
    if match.re is _MONTH_FIRST:
        month, day, year = match.groups()
        return [f"{day} {month} {year}"]
    figures, words = match.groups()
    if figures:
        return [_ORDINALS[int(figures) - 1]] if 1 <= int(figures) <= len(_ORDINALS) else []
    n = _ORDINALS.index(words.lower()) + 1
    return [f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n, 'th')}"]


def in_pages_form(answer: str, texts: Sequence[str]) -> str:
    """``answer`` as ``texts`` (pages' texts) write it, where they do not hold it as it is but hold it
    with a date or an ordinal of it written another usual way ("22 February 1720" -> "February 22,
    1720", "3rd generation" -> "third generation"); else as it was."""
    pages = " | ".join(texts).casefold()
    if answer.casefold() in pages:
        return answer
    return next((other for other in written_otherwise(answer) if other.casefold() in pages), answer)


def written_otherwise(answer: str) -> list[str]:
    """``answer`` with one of its dates or ordinals written another usual way, each way it can be."""
    return [f"{answer[:m.start()]}{other}{answer[m.end():]}" for p in (_DAY_FIRST, _MONTH_FIRST, _ORDINAL) for m in p.finditer(answer)
            for other in _other_ways(m)]


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    text: str

    @property
    def content(self) -> str:
        """What retrieval and embeddings see: the title, then the text."""
        return f"{self.title}\n{self.text}" if self.title else self.text


_ARTICLES = frozenset({"the", "a", "an"})


_POSSESSIVE_END = re.compile(r"['’]s(?=\W*$)")


def _bare(word: str) -> str:
    """A word compared: in lower case, without a possessive 's or punctuation."""
    return "".join(ch for ch in _POSSESSIVE_END.sub("", word.lower()) if ch not in _PUNCTUATION)


def _common_run(asked: list[str], hop: list[str], names: list[bool]) -> tuple[int, int] | None:
    """The longest run of words ``asked`` shares with ``hop`` (compared by :func:`_bare`) that holds
    a name (a capitalised word after the first): its (start, end) in ``asked``."""
    a, h = [_bare(w) for w in asked], [_bare(w) for w in hop]
    best = None
    for i in range(len(a)):
        for j in range(len(h)):
            n = 0
            while i + n < len(a) and j + n < len(h) and a[i + n] and a[i + n] == h[j + n]:
                n += 1
            if n and any(names[i : i + n]) and (best is None or n > best[1] - best[0]):
                best = (i, i + n)
    return best


def substituted(question: str, hop_question: str, answer: str) -> str | None:
    """The question with the part a hop answered replaced by its answer: "Who is the father of the
    composer of song I Am The World?", hop "Who composed I Am The World?" -> Robin Gibb, gives "Who is
    the father of Robin Gibb?". The part is the longest run of words both questions share that holds
    a name, begun at the article that opens its phrase: the run's own first lower-case article
    before its first name ("was the ruler ..." -> "the ruler ..."), else the nearest one up to four
    words back, not across a comma (a title's "The" is part of the name); a bracketed qualifier
    after it ("(Film)") goes with it. None when no such run is found or no content word of the
    question would be left."""
    words = question.split()
    names = [i > 0 and w[:1].isupper() for i, w in enumerate(words)]
    run = _common_run(words, hop_question.split(), names)
    if run is None or not answer.strip():
        return None
    start, end = run
    first_name = next(i for i in range(start, end) if names[i])
    inner = [i for i in range(start, first_name) if words[i] in _ARTICLES]  # lower case: not a title's "The"
    if inner:
        start = inner[0]
    else:
        for back in range(start - 1, max(-1, start - 5), -1):
            if words[back].endswith(","):
                break
            if words[back] in _ARTICLES:
                start = back
                break
    if end < len(words) and words[end].startswith("("):
        close = next((j for j in range(end, len(words)) if ")" in words[j]), None)
        end = end if close is None else close + 1
    last = words[end - 1]
    tail = ("'s" if _POSSESSIVE_END.search(last) else "") + last[len(last.rstrip("?.!,;:")) :]  # what the replaced part ended with
    out = " ".join([*words[:start], answer.strip() + tail, *words[end:]])
    return out if content_words(out) - content_words(answer) else None
