"""Reading a corpus: JSON Lines of ``{"id", "title", "text"}``.

Rules (documented in README.md): a line that is not valid UTF-8, or not a JSON object with string
``id`` and ``text``, is reported with its line number and skipped; a paragraph with empty text is skipped; a repeated id
keeps its first occurrence. A missing ``title`` is the empty string. Nothing is silently changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sunar.errors import SunarError
from sunar.text import Document  # noqa: F401  (a corpus is read into them; defined in sunar.text so models need no store)


@dataclass
class CorpusReport:
    """What reading the corpus skipped, and why."""

    malformed: list[tuple[int, str]] = field(default_factory=list)  # (line number, reason)
    empty: list[int] = field(default_factory=list)
    duplicates: list[tuple[int, str]] = field(default_factory=list)  # (line number, id)

    def summary(self) -> str:
        parts = []
        if self.malformed:
            lines = ", ".join(str(n) for n, _ in self.malformed[:10])
            more = "" if len(self.malformed) <= 10 else f" and {len(self.malformed) - 10} more"
            parts.append(f"{len(self.malformed)} malformed line(s) skipped (lines {lines}{more}: {self.malformed[0][1]})")
        if self.empty:
            parts.append(f"{len(self.empty)} paragraph(s) with empty text skipped")
        if self.duplicates:
            parts.append(f"{len(self.duplicates)} repeated id(s) skipped, first kept (e.g. '{self.duplicates[0][1]}')")
        return "; ".join(parts)


def fingerprint(path: Path) -> str:
    """sha256 of the corpus file: an index remembers which corpus built it."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def text_lines(path: Path) -> Iterator[tuple[int, str, str]]:
    """(line number, text, problem) of each non-blank line of a UTF-8 file (a byte-order mark is
    allowed). A line that is not valid UTF-8 has empty text and the problem in words; nothing is
    replaced or guessed."""
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                yield number, "", f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
                continue
            if line.strip():
                yield number, line, ""


def _parse(line: str) -> tuple[Document | None, str]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg})"
    if not isinstance(obj, dict):
        return None, "not a JSON object"
    doc_id, text, title = obj.get("id"), obj.get("text"), obj.get("title", "")
    if not isinstance(doc_id, str) or not doc_id.strip():
        return None, "missing string 'id'"
    if not isinstance(text, str):
        return None, "missing string 'text'"
    if title is None:
        title = ""
    if not isinstance(title, str):
        return None, "'title' is not a string"
    return Document(doc_id.strip(), title.strip(), text.strip()), ""


def read_corpus(path: str | Path, report: CorpusReport | None = None) -> list[Document]:
    """All valid documents of a JSONL corpus, in file order. Raises SunarError if there are none."""
    path = Path(path)
    if not path.is_file():
        raise SunarError(f"corpus file not found: {path}")
    report = report if report is not None else CorpusReport()
    docs: list[Document] = []
    seen: set[str] = set()
    for number, line, problem in text_lines(path):
        doc, reason = _parse(line) if not problem else (None, problem)
        if doc is None:
            report.malformed.append((number, reason))
        elif not doc.text:
            report.empty.append(number)
        elif doc.id in seen:
            report.duplicates.append((number, doc.id))
        else:
            seen.add(doc.id)
            docs.append(doc)
    if not docs:
        detail = report.summary() or "the file is empty"
        raise SunarError(f"corpus {path} has no usable paragraphs ({detail}); expected JSON Lines of {{id, title, text}}")
    return docs

