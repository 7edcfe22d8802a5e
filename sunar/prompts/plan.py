"""A decomposition planned at once (the second decomposition of ``replan_below``): the simple questions that answer the
complex one, in order, written before any is answered; a later one names an earlier one's answer
as "#1", "#2", ... (MuSiQue's own notation). Each is then filled in with the answers found and
asked in turn (:func:`fill`).

Why: Self-Ask writes each follow-up after reading the answers so far, and on dev 1-100 the 1.5B
model, having found the right first answer in 22 of the 50 MuSiQue questions, answered right only
4 times: its second follow-up dropped the question's context ("Who played the husband of Geena
Davis?" for "...in A League of Their Own"), asked something else ("What is the capital of ..."
for "Where is ... located?") or never came (a one-hop chain). A plan written with the whole
question in view keeps every step and its context.

The worked examples are Self-Ask's invented ones and the retrieved demonstrations
(:mod:`sunar.prompts.demonstrations`), their answers turned back into "#k" (:func:`template`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from sunar.prompts.self_ask import EXAMPLES
from sunar.prompts.structured import numbered_format
from sunar.usage import count_fallback

SYSTEM = (
    "You split a complex question into the simple questions that answer it, in order, before any is "
    "answered. A complex question describes something instead of naming it (\"the director of film X\", "
    "\"the author of book Y\"): the first simple question asks for that hidden name. A later question "
    "writes an earlier question's answer as #1, #2, ... and keeps every detail of the complex question "
    "it needs (a film's title, a year, a show's name). Never repeat the whole question."
)
_ASK = "Question: {question}\n\nWrite the simple questions, one per line, numbered."
#: Sent once when the plan's first question repeats the complex one or still describes a person
#: (Self-Ask's :data:`sunar.prompts.self_ask.NUDGE`, for a plan).
NUDGE = (
    "The first question repeats the complex question. Ask first for the hidden name only: the person, place or "
    "thing the question describes without naming it. Write the simple questions again, one per line, numbered."
)
#: Most characters of one planned question.
MOST_CHARS = 150

_REF = re.compile(r"#(\d+)")
_LINE = re.compile(r"^\s*(?:step\s*)?(\d+)\s*[.):]\s*(.+?)\s*$", re.IGNORECASE)


def plan_format(most_steps: int) -> dict:
    """The reply's format: 1 to ``most_steps`` numbered lines."""
    return numbered_format(most_steps, MOST_CHARS)


def template(steps: Sequence[tuple[str, str]]) -> list[str]:
    """A worked decomposition's questions with each earlier answer named in a later question written
    as "#k" ("Who is the mother of Ingmar Bergman?" after "Ingmar Bergman" becomes "... of #1?")."""
    out: list[str] = []
    for i, (question, _) in enumerate(steps):
        for k in range(i - 1, -1, -1):  # the latest answer first: it is the one a step builds on
            said = steps[k][1].strip()
            if said and said in question:
                question = question.replace(said, f"#{k + 1}")
        out.append(question)
    return out


def _numbered(questions: Sequence[str]) -> str:
    return "\n".join(f"{i}. {q}" for i, q in enumerate(questions, start=1))


def plan_messages(question: str, demonstrations: Sequence[tuple[str, list[tuple[str, str]], str]] = ()) -> list[BaseMessage]:
    """The rule, each worked example as a turn (the invented ones, then the retrieved
    ``demonstrations``), then this question."""
    messages: list[BaseMessage] = [SystemMessage(SYSTEM)]
    for example, steps, _ in [*EXAMPLES, *demonstrations]:
        messages += [HumanMessage(_ASK.format(question=example)), AIMessage(_numbered(template(steps)))]
    messages.append(HumanMessage(_ASK.format(question=question)))
    return messages


def parse_plan(text: str, most_steps: int) -> list[str]:
    """The planned questions, in order (at most ``most_steps``): the numbered lines, or else the
    lines ending in "?" (a parse fall-back). A step naming a later or its own answer ("#3" in
    step 2) ends the plan before it. [] when there is none."""
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    found = [m.group(2) for ln in lines if (m := _LINE.match(ln))]
    if not found:
        count_fallback()
        found = [ln for ln in lines if ln.endswith("?")]
    plan: list[str] = []
    for step in found[:most_steps]:
        if any(int(k) > len(plan) or int(k) < 1 for k in _REF.findall(step)):
            break
        plan.append(step)
    return plan


def fill(step: str, answers: Sequence[str]) -> str:
    """A planned question with "#k" replaced by the k-th answer found."""
    return _REF.sub(lambda m: answers[int(m.group(1)) - 1] if int(m.group(1)) <= len(answers) else m.group(0), step)
