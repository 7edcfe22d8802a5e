"""Self-Ask decomposition, one step at a time: the prompt (rule, worked examples as turns, this
question's transcript), the corrections sent when a step goes wrong, and the reader of a step.
A step is one of Self-Ask's own lines (:data:`SCHEMA`, decoded under its grammar on llama.cpp): as
a JSON object, the 1.5B model repeated follow-ups and ended chains early."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from sunar.prompts.answer import clean_answer
from sunar.prompts.steps import read_step
from sunar.prompts.structured import lines_format
from sunar.usage import count_fallback

SYSTEM = (
    "You split a complex question into simple follow-up questions and ask them one at a time. "
    "A complex question describes something instead of naming it (\"the director of film X\", "
    "\"the author of book Y\", \"the country where Z was born\"). The first follow-up asks for that "
    "hidden name; each later follow-up uses the names found so far. Never repeat the whole question. "
    "When the answers so far are enough, give the final answer."
)

#: Invented worked examples: (question, [(follow-up, intermediate answer), ...], final answer).
#: Each becomes one user/assistant turn per step, so even a small model sees exactly one line per
#: reply, and the turns are the same for every question (llama.cpp keeps them in its KV cache).
EXAMPLES: list[tuple[str, list[tuple[str, str]], str]] = [
    (
        "Who is the mother of the director of film Persona?",
        [("Who directed the film Persona?", "Ingmar Bergman"), ("Who is the mother of Ingmar Bergman?", "Karin Akerblom")],
        "Karin Akerblom",
    ),
    (
        "Who was born first, the composer of Bolero or the painter of Guernica?",
        [
            ("Who composed Bolero?", "Maurice Ravel"),
            ("Who painted Guernica?", "Pablo Picasso"),
            ("When was Maurice Ravel born?", "1875"),
            ("When was Pablo Picasso born?", "1881"),
        ],
        "Maurice Ravel",
    ),
    (
        "What currency is used in the country where the inventor of dynamite was born?",
        [
            ("Who invented dynamite?", "Alfred Nobel"),
            ("In which country was Alfred Nobel born?", "Sweden"),
            ("What currency is used in Sweden?", "Swedish krona"),
        ],
        "Swedish krona",
    ),
]

FOLLOW_UP, FINAL = "Follow up:", "So the final answer is:"
SCHEMA = lines_format((f"{FOLLOW_UP} ", 200), (f"{FINAL} ", 80))
_NEXT_LINE = f"Write only the next line: '{FOLLOW_UP} <one simple question>' or '{FINAL} <short answer>'."
#: Generation stops before the model writes the intermediate answer itself.
STOP = ["\nIntermediate answer"]

#: Sent once when the first follow-up repeats the whole question (small models often do).
NUDGE = (
    "That repeats the question. Ask first for the hidden name only: the person, place or thing the "
    f"question describes without naming it. Write only '{FOLLOW_UP} <one simple question>'."
)

#: Sent once when a follow-up repeats one already answered.
REPEAT_NUDGE = (
    "That question was already answered above. Write the next line: a new follow-up that uses the "
    f"answers so far ('{FOLLOW_UP} ...'), or '{FINAL} <short answer>' if they are enough."
)

#: Sent once when a comparison is answered before each of its two sides has the value it compares.
COMPARE_NUDGE = (
    "The answers so far do not yet give, for both things the question compares, the value it compares them by "
    f"(a date, a number, a country). Ask the next simple question about one of them. Write only '{FOLLOW_UP} <one simple question>'."
)

#: The only line accepted after :func:`bridge_nudge` or :data:`COMPARE_NUDGE`: a follow-up.
FOLLOW_UP_ONLY = lines_format((f"{FOLLOW_UP} ", 200))


def bridge_nudge(answer: str, sub_question: str) -> str:
    """Sent once when, after one hop, the final answer is that hop's answer while the question asks
    more (``unfit_answer=go_on``): a small model often stops at the hidden name it was asked for first."""
    return (
        f"'{answer}' answers only '{sub_question}': it is the hidden name, not yet what the question asks. "
        f"Ask the next simple question about {answer}. Write only '{FOLLOW_UP} <one simple question>'."
    )


def transcript(question: str, path: Sequence[tuple[str, str]]) -> str:
    lines = [f"Question: {question}"]
    for sub_question, answer in path:
        lines += [f"{FOLLOW_UP} {sub_question}", f"Intermediate answer: {answer}"]
    return "\n".join(lines)


def self_ask_messages(
    question: str, path: Sequence[tuple[str, str]], demonstrations: Sequence[tuple[str, list[tuple[str, str]], str]] = ()
) -> list[BaseMessage]:
    """The rule, every step of the worked examples as a turn (the invented ones, then the
    retrieved ``demonstrations``), then this question's transcript."""
    messages: list[BaseMessage] = [SystemMessage(SYSTEM)]
    for example, steps, final in [*EXAMPLES, *demonstrations]:
        for i in range(len(steps) + 1):
            messages.append(HumanMessage(f"{transcript(example, steps[:i])}\n\n{_NEXT_LINE}"))
            messages.append(AIMessage(f"{FOLLOW_UP} {steps[i][0]}" if i < len(steps) else f"{FINAL} {final}"))
    messages.append(HumanMessage(f"{transcript(question, path)}\n\n{_NEXT_LINE}"))
    return messages


Step = tuple[Literal["follow_up", "final", "invalid"], str]
_FOLLOW = re.compile(r"^\W*follow[\s-]*up(?:\s+question)?\s*\d*\W*?:\W*?\s*(.*)$", re.IGNORECASE)
_FINAL = re.compile(r"^\W*(?:so\s+)?the\s+final\s+answer\s+is\W*?:?\**\s*(.*)$|^\W*final answer\W*:\s*(.*)$", re.IGNORECASE)


def _final(line: str) -> str | None:
    m = _FINAL.match(line)
    return None if m is None else clean_answer(m.group(1) or m.group(2) or "")


def parse_self_ask(text: str) -> Step:
    """Read the first meaningful line of a Self-Ask step.

    Returns ("follow_up", question), ("final", answer) or ("invalid", the line). A bare question
    (a line ending in "?") is read as a follow-up; "Are follow up questions needed here: ..."
    echoes are skipped. A reply that is neither of :data:`SCHEMA`'s lines counts as a parse
    fall-back.
    """
    if not any(str(text).lstrip().startswith(start) for start, _ in SCHEMA["x-lines"]):
        count_fallback()
    kind, text = read_step(text, end=_final, ask=_FOLLOW, skip="are follow up questions needed")
    return {"end": "final", "ask": "follow_up", "invalid": "invalid"}[kind], text  # type: ignore[return-value]
