"""A hop's pages cut to the sentences most relevant to its sub-question: what a doubted hop's second
reading reads (``hop_support=cut_uncertain``, :func:`sunar.hop_support.read_cut`), a fraction of the
whole prompt."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from sunar.text import Document, Page

#: A sentence ends at ., ! or ? followed by space and a capital, digit, quote or bracket, but not after
#: an initial ("Samuel L. Jackson") or a title ("Dr. No").
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\b(?:Mr|Dr|St|Jr|Sr)\.)(?<!\bMrs\.)\s+(?=[A-Z0-9\"'(])")


def sentences(text: str) -> list[str]:
    """The sentences of a page's text, in order."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def cut_to_sentences(question: str, pages: Sequence[Page], score: Callable[[str, Sequence[Document]], list[float]], k: int) -> list[dict[str, Any]]:
    """``pages`` cut to the ``k`` sentences of all of them that ``score`` ranks highest for ``question``, each
    sentence scored with its page's title (a :class:`Document` ``<page id>#<n>``); each page keeps its chosen
    sentences in their order (and its other fields), a page with none is left out, and the pages keep theirs."""
    pieces = [(i, n, s) for i, page in enumerate(pages) for n, s in enumerate(sentences(page["text"]))]
    values = score(question, [Document(id=f"{pages[i].get('id', i)}#{n}", title=pages[i]["title"], text=s) for i, n, s in pieces])
    chosen = set(sorted(range(len(pieces)), key=lambda m: (-values[m], m))[:k])
    out = []
    for i, page in enumerate(pages):
        kept = [s for m, (j, _, s) in enumerate(pieces) if j == i and m in chosen]
        if kept:
            out.append({**page, "text": " ".join(kept)})
    return out
