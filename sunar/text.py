"""Text: the corpus's passages (:class:`Document`, what stores keep and models score), the SQuAD
normalisation every comparison of answers uses (metrics, NLI's short-cut, the repeat checks of the
decompositions), and the word-level tests built on it."""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    text: str

    @property
    def content(self) -> str:
        """What retrieval and embeddings see: the title, then the text."""
        return f"{self.title}\n{self.text}" if self.title else self.text
