"""Reading the multi-hop dev questions (../shared/data/multihop/dev.jsonl format).

A questions file is JSON Lines, one ``{id, dataset, question, answers, supporting_ids,
decomposition}`` per line (blank lines allowed). It is checked whole before anything runs, and the
first bad line stops the run with its number and what is wrong:

- the file is UTF-8; ``id`` is a non-empty string (a number is read as its text) used once;
- ``question`` passes :func:`sunar.nodes.ask.check_question`;
- ``answers`` is a non-empty list of strings; a single string is read as the one gold answer
  (``"answers": "Paris"`` means ``["Paris"]``, never five letters);
- ``supporting_ids`` (optional) is a list of strings;
- a ``decomposition`` step refers to earlier steps' answers as ``#1``, ``#2`` (MuSiQue): step k
  may name ``#1`` to ``#k-1`` only, so ``#0`` or a reference to itself or a later step is an error.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sunar.errors import SunarError
from sunar.question import check_question
from sunar.stores.corpus import text_lines

#: A reference to an earlier decomposition step's answer.
REFERENCE = re.compile(r"#(\d+)")


@dataclass
class Question:
    id: str
    dataset: str
    question: str
    answers: list[str]
    supporting_ids: list[str]
    sub_questions: list[tuple[str, str, str]] = field(default_factory=list)  # (question, answer, support id)
    pool_ids: list[str] = field(default_factory=list)  # the question's own candidate passages (GenSco's pool)
    type: str = ""  # the question's shape as the data names it: compositional, comparison, inference, bridge_comparison, 3hop, ...


def _strings(value: Any, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SunarError(f"'{name}' must be a list of strings")
    return value


def _sub_questions(steps: Any) -> list[tuple[str, str, str]]:
    """The decomposition with each ``#k`` replaced by step k's answer."""
    if not isinstance(steps, list):
        raise SunarError("'decomposition' must be a list of {question, answer} objects")
    answers: list[str] = []
    out = []
    for k, step in enumerate(steps, start=1):
        if not isinstance(step, dict) or not isinstance(step.get("question"), str) or not isinstance(step.get("answer"), str):
            raise SunarError(f"decomposition step {k} must be an object with string 'question' and 'answer'")
        for ref in REFERENCE.findall(step["question"]):
            if not 1 <= int(ref) < k:
                before = f"only #1 to #{k - 1} come before it" if k > 1 else "no answer comes before it"
                raise SunarError(f"decomposition step {k} refers to #{ref}, but {before}")
        text = REFERENCE.sub(lambda m: answers[int(m.group(1)) - 1], step["question"])
        out.append((text, step["answer"], str(step.get("support_id") or "")))
        answers.append(step["answer"])
    return out


def _question(rec: Any, dataset: str) -> Question:
    if not isinstance(rec, dict):
        raise SunarError("not a JSON object; expected {id, question, answers}")
    missing = [k for k in ("id", "question", "answers") if k not in rec]
    if missing:
        raise SunarError(f"no '{missing[0]}' field; expected {{id, question, answers}}")
    qid = rec["id"]
    if isinstance(qid, bool) or not isinstance(qid, str | int) or not str(qid).strip():
        raise SunarError("'id' must be a non-empty string")
    answers = [rec["answers"]] if isinstance(rec["answers"], str) else rec["answers"]
    if not _strings(answers, "answers") or not all(a.strip() for a in answers):
        raise SunarError("'answers' must be a non-empty list of non-empty strings (or one string)")
    if not isinstance(rec.get("dataset") or "", str):
        raise SunarError("'dataset' must be a string")
    return Question(
        str(qid).strip(),
        rec.get("dataset") or dataset,
        check_question(rec["question"]),
        list(answers),
        list(_strings(rec.get("supporting_ids") or [], "supporting_ids")),
        _sub_questions(rec.get("decomposition") or []),
        list(_strings(rec.get("pool_ids") or [], "pool_ids")),
        str(rec.get("type") or ""),
    )


def read_questions(path: str | Path, limit: int | None = None) -> list[Question]:
    """The questions of a JSON Lines file (the rules are in the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise SunarError(f"questions file not found: {path}")
    out: list[Question] = []
    first: dict[str, int] = {}  # id -> line it was first used on
    for number, line, problem in text_lines(path):
        where = f"{path} line {number}"
        if problem:
            raise SunarError(f"{where}: {problem}; save the file as UTF-8")
        try:
            rec = json.loads(line)
        except ValueError as exc:
            raise SunarError(f"{where}: not JSON ({getattr(exc, 'msg', exc)}); expected one {{id, question, answers}} per line") from None
        try:
            question = _question(rec, path.stem)
        except SunarError as exc:
            raise SunarError(f"{where}: {exc}") from None
        if question.id in first:
            raise SunarError(f"{where}: question id '{question.id}' is already used on line {first[question.id]}; ids must be unique")
        first[question.id] = number
        out.append(question)
        if limit and len(out) >= limit:
            break
    return out
