"""Reading the multi-hop dev questions (../shared/data/multihop/dev.jsonl format)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from sunar.errors import SunarError


@dataclass
class Question:
    id: str
    dataset: str
    question: str
    answers: list[str]
    supporting_ids: list[str]
    sub_questions: list[tuple[str, str, str]] = field(default_factory=list)  # (question, answer, support id)


def _substitute(text: str, answers: list[str]) -> str:
    """MuSiQue sub-questions refer to earlier answers as #1, #2: put the answers in."""
    return re.sub(r"#(\d+)", lambda m: answers[int(m.group(1)) - 1] if int(m.group(1)) <= len(answers) else m.group(0), text)


def read_questions(path: str | Path, limit: int | None = None) -> list[Question]:
    path = Path(path)
    if not path.is_file():
        raise SunarError(f"questions file not found: {path}")
    out: list[Question] = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                answers_so_far: list[str] = []
                subs = []
                for step in rec.get("decomposition") or []:
                    subs.append((_substitute(step["question"], answers_so_far), step["answer"], step.get("support_id", "")))
                    answers_so_far.append(step["answer"])
                out.append(
                    Question(rec["id"], rec.get("dataset") or path.stem, rec["question"], list(rec["answers"]), list(rec.get("supporting_ids") or []), subs)
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise SunarError(f"{path} line {number} is not a question record ({exc})") from exc
            if limit and len(out) >= limit:
                break
    return out
