"""Every prompt the product sends, in one place, with its few-shot exemplars visible.

Wording and exemplars are the project's own; their structure follows the paper (Self-Ask's
"Follow up / Intermediate answer" format, an answer prompt per NAR batch, the MER prompt with the
reasoning path and the evidence, "[Answer]:" for the rationale and "[Final Answer]:").
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

# ----------------------------------------------------------------------------------------------
# NLI: the LLM as a judge of whether two answers to one question mean the same
# ----------------------------------------------------------------------------------------------

NLI_SYSTEM = (
    "You compare two answers to the same question. Reply with one word: 'same' if both answers "
    "say the same thing (one entails the other and the other entails the first), 'different' otherwise."
)

NLI_EXAMPLES: list[tuple[str, str, str, str]] = [
    ("Where was the poet Rumi born?", "Balkh", "in the city of Balkh", "same"),
    ("Who founded the company Sony?", "Masaru Ibuka", "Akio Morita", "different"),
    ("When was the Eiffel Tower finished?", "1889", "in March 1889", "same"),
    ("Which country is Lake Titicaca in?", "Peru", "Peru and Bolivia", "different"),
    ("Who painted The Night Watch?", "Rembrandt van Rijn", "Rembrandt", "same"),
    ("What is the capital of Australia?", "Sydney", "Canberra", "different"),
]


def nli_messages(question: str, a: str, b: str) -> list[BaseMessage]:
    shots = "\n\n".join(
        f"Question: {q}\nAnswer 1: {x}\nAnswer 2: {y}\nVerdict: {v}" for q, x, y, v in NLI_EXAMPLES
    )
    return [
        SystemMessage(NLI_SYSTEM),
        HumanMessage(f"{shots}\n\nQuestion: {question}\nAnswer 1: {a}\nAnswer 2: {b}\nVerdict:"),
    ]


NLI_LABELS: Sequence[str] = ("same", "different")
