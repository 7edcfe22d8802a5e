"""Self-Ask decomposition, one step at a time: the prompt (rule, worked examples as turns, this
question's transcript), the two corrections sent when a step goes wrong, and the reader of a step.
A step is the JSON object :data:`SCHEMA`: ``{"step": "follow up" | "final answer", "text": ...}``;
the transcript the model reads keeps Self-Ask's own lines."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from sunar.prompts.answer import clean_answer
from sunar.prompts.steps import read_step
from sunar.prompts.structured import as_reply, object_schema, read_object

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
#: A step's two kinds, as the reply names them.
ASK, END = "follow up", "final answer"
SCHEMA = object_schema(step=(ASK, END), text=200)
_NEXT_LINE = (
    f"Reply with the next step only, as JSON: {as_reply(step=ASK, text='<one simple question>')} "
    f"or {as_reply(step=END, text='<short answer>')}."
)
#: Generation stops before the model writes the intermediate answer itself.
STOP = ["\nIntermediate answer"]

#: Sent once when the first follow-up repeats the whole question (small models often do).
NUDGE = (
    "That repeats the question. Ask first for the hidden name only: the person, place or thing the "
    f"question describes without naming it. Reply only {as_reply(step=ASK, text='<one simple question>')}."
)

#: Sent once when a follow-up repeats one already answered.
REPEAT_NUDGE = (
    "That question was already answered above. Reply with the next step: a new follow-up that uses the "
    f"answers so far ({as_reply(step=ASK, text='...')}), or {as_reply(step=END, text='<short answer>')} if they are enough."
)


def transcript(question: str, path: Sequence[tuple[str, str]]) -> str:
    lines = [f"Question: {question}"]
    for sub_question, answer in path:
        lines += [f"{FOLLOW_UP} {sub_question}", f"Intermediate answer: {answer}"]
    return "\n".join(lines)


def self_ask_messages(question: str, path: Sequence[tuple[str, str]]) -> list[BaseMessage]:
    """The rule, every step of the worked examples as a turn, then this question's transcript."""
    messages: list[BaseMessage] = [SystemMessage(SYSTEM)]
    for example, steps, final in EXAMPLES:
        for i in range(len(steps) + 1):
            messages.append(HumanMessage(f"{transcript(example, steps[:i])}\n\n{_NEXT_LINE}"))
            messages.append(AIMessage(as_reply(step=ASK, text=steps[i][0]) if i < len(steps) else as_reply(step=END, text=final)))
    messages.append(HumanMessage(f"{transcript(question, path)}\n\n{_NEXT_LINE}"))
    return messages


Step = tuple[Literal["follow_up", "final", "invalid"], str]
_FOLLOW = re.compile(r"^\W*follow[\s-]*up(?:\s+question)?\s*\d*\W*?:\W*?\s*(.*)$", re.IGNORECASE)
_FINAL = re.compile(r"^\W*(?:so\s+)?the\s+final\s+answer\s+is\W*?:?\**\s*(.*)$|^\W*final answer\W*:\s*(.*)$", re.IGNORECASE)


def _final(line: str) -> str | None:
    m = _FINAL.match(line)
    return None if m is None else clean_answer(m.group(1) or m.group(2) or "")


def parse_self_ask(text: str) -> Step:
    """Read a Self-Ask step: ("follow_up", question), ("final", answer) or ("invalid", the text).

    A :data:`SCHEMA` object says which it is (a follow-up without a letter or digit is invalid).
    Any other reply is read by its first meaningful line, the way Self-Ask writes it ("Follow up:
    ...", "So the final answer is: ..."); a bare question (a line ending in "?") is read as a
    follow-up; "Are follow up questions needed here: ..." echoes are skipped.
    """
    if (step := read_object(text, SCHEMA)) is not None:
        said = step["text"].strip()
        if step["step"] == END:
            return "final", clean_answer(said)
        if (m := _FOLLOW.match(said)) is not None:  # the label written again inside the text
            said = m.group(1).strip()
        return ("follow_up", said) if any(ch.isalnum() for ch in said) else ("invalid", said)
    kind, text = read_step(text, end=_final, ask=_FOLLOW, skip="are follow up questions needed")
    return {"end": "final", "ask": "follow_up", "invalid": "invalid"}[kind], text  # type: ignore[return-value]
