"""GenSco's prompts and the readers of its generator's replies.

The generator proposes the next sub-question (or says it has enough) and answers from the selected
passage sequence; the scorer LLM's prompts are built so that a given text (a sub-question, the
question) follows them directly, for its log-likelihood.

A step is the JSON object :data:`SCHEMA`: ``{"step": "sub-question" | "enough", "text": ...}``;
the final answer is :data:`sunar.prompts.answer.SCHEMA`. The transcript the generator reads keeps
GenSco's own lines ("Sub-question i", "Passage i"), and a reply that is not the object is read as
those lines (a counted parse fall-back).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from sunar.prompts import answer
from sunar.prompts.answer import clean_answer
from sunar.prompts.steps import read_step
from sunar.prompts.structured import as_reply, object_schema, read_object

#: A step's two kinds, as the reply names them: a sub-question, or the end when the generator has
#: enough (the paper's <FIN></FIN>), whose text is always this one.
ASK, END = "sub-question", "enough"
END_TEXT = "the passages answer the question"
#: Most tokens of a step: the sub-question and the JSON around it stay within them.
STEP_TOKENS = 64
SCHEMA = object_schema(step=(ASK, END), text=150)
#: The final answer's format, as every short answer's.
ANSWER_SCHEMA = answer.SCHEMA

#: Passages longer than this are cut (with "...") in GenSco's prompts: every candidate costs the
#: scorer LLM one pass over its text, and a prompt must fit the model's context.
PASSAGE_CHARS = 1000

SYSTEM = (
    "You find the passages that answer a complex question, one step at a time. At each step write "
    "one simple sub-question asking for the next fact you need; a passage answering it is then found "
    "for you. Later sub-questions use the names found in the passages so far. When the passages "
    "found so far are enough to answer the question, say that they are enough instead."
)

#: Invented worked examples: (question, [(sub-question, passage title, passage text), ...]). Each
#: step becomes one user/assistant turn, then a last turn ends with the keyword; the turns are
#: the same for every question, so llama.cpp keeps them in its KV cache.
EXAMPLES: list[tuple[str, list[tuple[str, str, str]]]] = [
    (
        "Which river flows through the birthplace of the composer of The Planets?",
        [
            ("Who composed The Planets?", "The Planets", "The Planets is an orchestral suite in seven movements by the English composer Gustav Holst."),
            ("Where was Gustav Holst born?", "Gustav Holst", "Gustav Holst (1874-1934) was an English composer born in Cheltenham, Gloucestershire."),
            ("Which river flows through Cheltenham?", "Cheltenham", "Cheltenham is a spa town in Gloucestershire, England, built along the River Chelt."),
        ],
    ),
    (
        "Which film came out first, Vertigo or Psycho?",
        [
            ("When was the film Vertigo released?", "Vertigo (film)", "Vertigo is a 1958 American thriller film directed by Alfred Hitchcock."),
            ("When was the film Psycho released?", "Psycho (1960 film)", "Psycho is a 1960 American horror film produced and directed by Alfred Hitchcock."),
        ],
    ),
    (
        "In what year did the author of The Old Man and the Sea receive the Nobel Prize?",
        [
            ("Who wrote The Old Man and the Sea?", "The Old Man and the Sea", "The Old Man and the Sea is a short novel by Ernest Hemingway, published in 1952."),
            ("When did Ernest Hemingway receive the Nobel Prize?", "Ernest Hemingway", "Ernest Hemingway was an American writer who received the Nobel Prize in Literature in 1954."),
        ],
    ),
]

_NEXT_LINE = (
    f"Reply with the next step only, as JSON: {as_reply(step=ASK, text='<one simple question>')}, "
    f"or {as_reply(step=END, text=END_TEXT)} if the passages answer the question."
)

#: Sent once when the final answer came back empty.
ANSWER_AGAIN = f"Reply with {as_reply(answer='...')} holding the short answer only: a name, place, date or number."


def passage(title: str, text: str) -> str:
    text = " ".join(str(text).split())
    if len(text) > PASSAGE_CHARS:
        text = text[:PASSAGE_CHARS].rsplit(" ", 1)[0] + " ..."
    return f"{title}: {text}"


def transcript(question: str, steps: Sequence[tuple[str, str, str]]) -> str:
    """The question, then each sub-question with the passage chosen for it."""
    lines = [f"Question: {question}"]
    for i, (sub_question, title, text) in enumerate(steps, start=1):
        lines += [f"Sub-question {i}: {sub_question}", f"Passage {i}: {passage(title, text)}"]
    return "\n".join(lines)


def next_messages(question: str, steps: Sequence[tuple[str, str, str]]) -> list[BaseMessage]:
    """The generator's prompt for the next step: the rule, every step of the worked examples as a
    turn, then this question with its (sub-question, passage title, passage text) steps so far."""
    messages: list[BaseMessage] = [SystemMessage(SYSTEM)]
    for example, example_steps in EXAMPLES:
        for i in range(len(example_steps) + 1):
            messages.append(HumanMessage(f"{transcript(example, example_steps[:i])}\n\n{_NEXT_LINE}"))
            done = i == len(example_steps)
            messages.append(AIMessage(as_reply(step=END, text=END_TEXT) if done else as_reply(step=ASK, text=example_steps[i][0])))
    messages.append(HumanMessage(f"{transcript(question, steps)}\n\n{_NEXT_LINE}"))
    return messages


ANSWER_SYSTEM = (
    "Answer the complex question from the passages, which were found for it step by step, in this "
    f"order. Reply with a JSON object {as_reply(answer='...')} holding the short answer only (a name, "
    "place, date or a few words), no sentence. If the passages do not say, give your best guess."
)


#: The reader's worked examples (the paper gives it 2-3 Question/Context/Answer shots): the worked
#: examples' questions with their passages in selection order, and the short answer.
ANSWER_EXAMPLES: list[tuple[str, list[tuple[str, str, str]], str]] = [
    (EXAMPLES[0][0], EXAMPLES[0][1], "River Chelt"),
    (EXAMPLES[1][0], EXAMPLES[1][1], "Vertigo"),
    (EXAMPLES[2][0], EXAMPLES[2][1], "1954"),
]


def _read(question: str, passages: Sequence[dict]) -> HumanMessage:
    block = "\n".join(f"[{i}] {passage(p['title'], p['text'])}" for i, p in enumerate(passages, start=1))
    return HumanMessage(f"Passages:\n{block or '(no passages found)'}\n\nQuestion: {question}")


def answer_messages(question: str, passages: Sequence[dict]) -> list[BaseMessage]:
    """The final generator call: the rule, the worked examples as turns, then the question and
    the selected passage sequence."""
    messages: list[BaseMessage] = [SystemMessage(ANSWER_SYSTEM)]
    for example, steps, short in ANSWER_EXAMPLES:
        messages += [_read(example, [{"title": t, "text": x} for _, t, x in steps]), AIMessage(as_reply(answer=short))]
    return [*messages, _read(question, passages)]


# The scorer LLM's prompts. The instruction sits in the system message and the user turn holds
# only the passages, with the candidate last: the candidates of a step share every token before
# it (kept in llama.cpp's KV cache), and the continuation follows the candidate directly.

SCORE_SYSTEM = (
    "You read passages and write one simple question that the last passage answers. The question "
    "may use names that the earlier passages give."
)

QUESTION_SYSTEM = (
    "You read simple questions, each with the passage that answers it, and write the one complex "
    "question that they answer together."
)


def score_messages(passages: Sequence[dict]) -> list[BaseMessage]:
    """Scorer prompt for log P(sub-question | chosen passages + candidate): the candidate is last."""
    block = "\n".join(f"[{i}] {passage(p['title'], p['text'])}" for i, p in enumerate(passages, start=1))
    return [SystemMessage(SCORE_SYSTEM), HumanMessage(f"Passages:\n{block}")]


def question_messages(steps: Sequence[tuple[str, str, str]]) -> list[BaseMessage]:
    """Scorer prompt for log P(question | decomposition so far): each (sub-question, title, text)."""
    block = "\n".join(
        f"{i}. {sub_question}\n   Passage: {passage(title, text)}" for i, (sub_question, title, text) in enumerate(steps, start=1)
    )
    return [SystemMessage(QUESTION_SYSTEM), HumanMessage(f"Simple questions and their passages:\n{block}")]


Step = tuple[Literal["sub_question", "enough", "invalid"], str]
_SUB = re.compile(r"^\W*(?:sub[\s-]*question|follow[\s-]*up(?:\s+question)?)\s*\d*\W*?:\W*?\s*(.*)$", re.IGNORECASE)
_ENOUGH = re.compile(r"\[\s*enough\s*\]|^\W*enough\b|^\W*(?:so\s+)?the\s+final\s+answer\b|^\W*final\s+answer\b", re.IGNORECASE)


def parse_next(text: str) -> Step:
    """Read the generator's step: ("sub_question", question), ("enough", "") or ("invalid", text).

    A :data:`SCHEMA` object says which it is (a sub-question without a letter or digit is invalid;
    one that is only the end keyword says enough). Any other reply is read by its first non-empty
    line, the way GenSco writes it: the end keyword, bracketed or not ("[ENOUGH]"), or a final
    answer ("So the final answer is ...") says the generator has enough; "Sub-question: ..." or a
    bare line ending in "?" is a sub-question."""
    if (step := read_object(text, SCHEMA)) is not None:
        said = step["text"].strip()
        if step["step"] == END or _ENOUGH.match(said):
            return "enough", ""
        if (m := _SUB.match(said)) is not None:  # the label written again inside the text
            said = m.group(1).strip()
        return ("sub_question", said) if any(ch.isalnum() for ch in said) else ("invalid", said)
    kind, text = read_step(text, end=lambda line: "" if _ENOUGH.search(line) else None, ask=_SUB)
    return {"end": "enough", "ask": "sub_question", "invalid": "invalid"}[kind], text  # type: ignore[return-value]


def read_final(text: str) -> str:
    """The final answer of an :data:`~sunar.prompts.answer.SCHEMA` reply (any other reply is read
    as free text), or "" when it is blank, which is asked once more."""
    reply = answer.said(text)
    return clean_answer(reply) if reply.strip() else ""
