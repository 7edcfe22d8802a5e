"""Grounded final answers (``grounded_final``): the spans of the evidence MER's answer may be copied from
(:func:`final_spans`), and the short-answer format restricted to them (:func:`choice_schema`), so a small
model decoding under its grammar cannot name an entity its documents do not contain. "unknown" is
always allowed.

A span is a name (a run of capitalised words, joined by the lower-case particles names carry: "of",
"de", "von", ...; with the region after a comma: "Missoula, Montana"), a date ("2 May 1934",
"April 22, 1875", "1934"), a number ("25,000"), or a document's title without its bracketed
qualifier ("Dollar (1938 film)" gives "Dollar").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sunar.prompts.answer import SCHEMA, UNKNOWN
from sunar.prompts.structured import Schema, object_schema
from sunar.text import MONTHS

#: Most spans offered: the grammar stays small, and the best documents' spans come first.
MOST_SPANS = 300

_MONTH = rf"(?:{MONTHS})"
#: A date as spans take it: "2 May 1934", "April 22, 1875", "May 1934", "1934", "300 BC".
DATE = re.compile(
    rf"\b(?:\d{{1,2}} {_MONTH},? \d{{3,4}}|{_MONTH} \d{{1,2}},? \d{{3,4}}|{_MONTH} \d{{3,4}}|\d{{3,4}}(?:\s?(?:BC|BCE|AD|CE)\b)?)"
)
_NUMBER = re.compile(r"\b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b|\b\d+(?:\.\d+)?\b")
#: Every capital letter of the Latin, Greek and Cyrillic scripts (re has no \p{Lu}): "Žalica", "Łódź", "Ōsaka".
_CAPITALS = "".join(c for c in map(chr, range(0x41, 0x530)) if c.isupper())
#: A capitalised word; a full stop stays with an initial ("H.") or an abbreviation ("Jr.", "St.").
_WORD = rf"[{_CAPITALS}][\w'’\-]*(?:\.[\w'’\-]+)*(?:(?<=\b[A-Z])\.|(?<=Jr|Sr|St|Dr|Mr)\.)?"
_PARTICLE = r"(?:of|the|de|del|della|di|da|do|dos|du|des|la|le|von|van|der|den|y|al|el|bin|ibn|and|upon|on|in|am|zu)"
_NAME = re.compile(rf"{_WORD}(?:(?:\s+{_PARTICLE})*\s+{_WORD})*")
_SPACE = re.compile(r"\s+")
#: Particles that join two names as often as they join one ("Paris in May", "Smith and Jones").
_JOINS = re.compile(r"\s+(?:in|on|and|upon|am)\s+")
#: Capitalised words that begin sentences and are no answer on their own.
_STOP = frozenset(["The", "A", "An", "In", "On", "At", "It", "He", "She", "They", "His", "Her", "Its", "This", "That", "These", "Those", "There", "After", "Before", "During", "When", "While", "From", "As", "By", "For", "With", "Since",
                   "Who", "Whom", "Whose", "What", "Which", "Where", "When", "Why", "How", "Is", "Are", "Was", "Were", "Did", "Do", "Does"])


def _tidy(span: str) -> str:
    return _SPACE.sub(" ", span).strip(" .,;:'’\"-")


def _names(text: str) -> list[str]:
    out: list[str] = []
    matches = list(_NAME.finditer(text))
    for i, m in enumerate(matches):
        words = m.group(0).split()
        while words and words[0] in _STOP:
            words = words[1:]
        if words:
            out.append(" ".join(words))
            # "Academy of Performing Arts in Bratislava" also as "Academy of Performing Arts" and "Bratislava"
            parts = [p for p in _JOINS.split(" ".join(words)) if p and p[0].isupper()]
            out += parts if len(parts) > 1 else []
        after = text[m.end() : m.end() + 2]
        if after == ", " and i + 1 < len(matches) and matches[i + 1].start() == m.end() + 2 and words:
            out.append(f"{' '.join(words)}, {matches[i + 1].group(0)}")  # "Missoula, Montana"
    return out


def spans(evidence: Sequence[dict]) -> list[str]:
    """The candidate answers in the documents, in order of the documents and their text, once each
    (at most :data:`MOST_SPANS`)."""
    found: dict[str, None] = {}
    for doc in evidence:
        title = str(doc.get("title") or "")
        for text in (re.sub(r"\s*\([^)]*\)\s*$", "", title), *_names(title)):
            found.setdefault(_tidy(text), None)
        body = str(doc.get("text") or "")
        for span in [*_names(body), *(m.group(0) for m in DATE.finditer(body)), *(m.group(0) for m in _NUMBER.finditer(body))]:
            found.setdefault(_tidy(span), None)
    return [s for s in found if s and len(s) <= SCHEMA["properties"]["answer"]["maxLength"]][:MOST_SPANS]


def final_spans(question: str, answers: Sequence[str], evidence: Sequence[dict]) -> list[str]:
    """What a grounded final answer may be: the hops' answers, "yes" and "no", the names in the
    question (a comparison's answer is one of them), then the evidence's spans; once each, at most
    :data:`MOST_SPANS`."""
    limit = SCHEMA["properties"]["answer"]["maxLength"]
    found = dict.fromkeys(_tidy(a) for a in [*answers, "yes", "no", *_names(question)] if a and a != UNKNOWN and len(a) <= limit)
    found.update(dict.fromkeys(spans(evidence)))
    return [s for s in found if s][:MOST_SPANS]


def choice_schema(allowed: Sequence[str]) -> Schema:
    """The short-answer format (:data:`sunar.prompts.answer.SCHEMA`'s field) whose answer is one of
    ``allowed``, or "unknown"."""
    return object_schema(answer=(*allowed, UNKNOWN))
