"""The line reader shared by the step-by-step formats (Self-Ask's follow-ups, GenSco's
sub-questions): the first meaningful line of a reply is an end marker, a question, or broken."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

Read = tuple[Literal["end", "ask", "invalid"], str]


def read_step(text: str, *, end: Callable[[str], str | None], ask: re.Pattern[str], skip: str = "") -> Read:
    """Read the first non-empty line of ``text`` (lines starting with ``skip``, lower case, are
    passed over).

    Returns ("end", what ``end`` gave for the line) when ``end`` recognises it; ("ask", question)
    when ``ask`` matches with a question in its first group, or for a bare line ending in "?"
    without a colon; else ("invalid", the line). An empty reply is ("invalid", "")."""
    for raw in str(text).splitlines():
        line = raw.strip()
        if not line or (skip and line.lower().startswith(skip)):
            continue
        ended = end(line)
        if ended is not None:
            return "end", ended
        if (m := ask.match(line)) is not None and any(ch.isalnum() for ch in m.group(1)):
            return "ask", m.group(1).strip().strip("*").strip()
        if line.endswith("?") and ":" not in line:
            return "ask", line
        return "invalid", line
    return "invalid", ""
