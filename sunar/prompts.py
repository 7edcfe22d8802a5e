"""Every prompt the product sends, in one place, with its few-shot exemplars visible.

Wording and exemplars are the project's own; their structure follows the paper (Self-Ask's
"Follow up / Intermediate answer" format, an answer prompt per NAR batch, the MER prompt with the
reasoning path and the evidence, "[Answer]:" for the rationale and "[Final Answer]:").
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

# ----------------------------------------------------------------------------------------------
# NLI: the LLM as a judge of whether two answers to one question mean the same
# ----------------------------------------------------------------------------------------------

NLI_SYSTEM = (
    "You check whether two answers to the same question give the same answer. Reply 'yes' if they "
    "name the same person, place, thing, date or number, even when worded differently (extra words "
    "such as 'in' or 'it was', a title, a middle name, an abbreviation, a shorter or fuller form of "
    "the same name, another date format). Reply 'no' if they name different people, places, things, "
    "dates or numbers, even when they share a word. Reply with one word: yes or no."
)

# Invented exemplars (none from evaluation data): easy and hard cases of both verdicts.
NLI_EXAMPLES: list[tuple[str, str, str, str]] = [
    ("Where was the poet Rumi born?", "Balkh", "in the city of Balkh", "yes"),
    ("Who founded the company Sony?", "Masaru Ibuka", "Akio Morita", "no"),
    ("When did the Berlin Wall fall?", "9 November 1989", "November 9, 1989", "yes"),
    ("Who wrote Pride and Prejudice?", "Jane Austen", "Cassandra Austen", "no"),
    ("Which agency launched the Hubble Space Telescope?", "NASA", "National Aeronautics and Space Administration", "yes"),
    ("When was the Eiffel Tower finished?", "1889", "1887", "no"),
    ("Who painted The Night Watch?", "Rembrandt van Rijn", "It was Rembrandt.", "yes"),
    ("Where did Alan Turing study?", "King's College, Cambridge", "King's College London", "no"),
    ("Where was Frida Kahlo born?", "Coyoacan, Mexico City", "Coyoacan", "yes"),
    ("What is the capital of Australia?", "Sydney", "Canberra", "no"),
]
NLI_QUERY = "Question: {q}\nAnswer 1: {a}\nAnswer 2: {b}\nDo the two answers give the same answer?"


def nli_messages(question: str, a: str, b: str) -> list[BaseMessage]:
    """The judge prompt: the rule, each exemplar as a user/assistant turn, then the pair. All but
    the last turn is the same for every pair, so llama.cpp keeps it in its KV cache."""
    messages: list[BaseMessage] = [SystemMessage(NLI_SYSTEM)]
    for q, x, y, verdict in NLI_EXAMPLES:
        messages += [HumanMessage(NLI_QUERY.format(q=q, a=x, b=y)), AIMessage(verdict)]
    messages.append(HumanMessage(NLI_QUERY.format(q=question, a=a, b=b)))
    return messages


NLI_LABELS: Sequence[str] = ("yes", "no")  # (same, different)


def _evidence_block(evidence: Sequence[dict]) -> str:
    if not evidence:
        return "(no documents found)"
    return "\n".join(f"[{i}] {e['title']}: {e['text']}" for i, e in enumerate(evidence, start=1))


# ----------------------------------------------------------------------------------------------
# Self-Ask decomposition: one step at a time
# ----------------------------------------------------------------------------------------------

SELF_ASK_SYSTEM = (
    "You answer complex questions by asking simple follow-up questions, one at a time. Each "
    "follow-up asks for exactly one fact. When the answers so far are enough, give the final answer."
)

SELF_ASK_EXAMPLES = """Question: Who was born first, the composer of Bolero or the painter of Guernica?
Are follow up questions needed here: Yes.
Follow up: Who composed Bolero?
Intermediate answer: Maurice Ravel
Follow up: Who painted Guernica?
Intermediate answer: Pablo Picasso
Follow up: When was Maurice Ravel born?
Intermediate answer: 1875
Follow up: When was Pablo Picasso born?
Intermediate answer: 1881
So the final answer is: Maurice Ravel

Question: Who is the mother of the director of film Persona?
Are follow up questions needed here: Yes.
Follow up: Who directed the film Persona?
Intermediate answer: Ingmar Bergman
Follow up: Who is the mother of Ingmar Bergman?
Intermediate answer: Karin Akerblom
So the final answer is: Karin Akerblom

Question: In which country is the university where the inventor of the World Wide Web studied?
Are follow up questions needed here: Yes.
Follow up: Who invented the World Wide Web?
Intermediate answer: Tim Berners-Lee
Follow up: Where did Tim Berners-Lee study?
Intermediate answer: The Queen's College, Oxford
Follow up: In which country is Oxford?
Intermediate answer: England
So the final answer is: England"""

FOLLOW_UP, FINAL = "Follow up:", "So the final answer is:"


def self_ask_transcript(question: str, path: Sequence[tuple[str, str]]) -> str:
    lines = [f"Question: {question}", "Are follow up questions needed here: Yes."]
    for sub_question, answer in path:
        lines += [f"{FOLLOW_UP} {sub_question}", f"Intermediate answer: {answer}"]
    return "\n".join(lines)


def self_ask_messages(question: str, path: Sequence[tuple[str, str]]) -> list[BaseMessage]:
    return [
        SystemMessage(SELF_ASK_SYSTEM),
        HumanMessage(
            f"{SELF_ASK_EXAMPLES}\n\n{self_ask_transcript(question, path)}\n\n"
            f"Write only the next line: either '{FOLLOW_UP} <one simple question>' "
            f"or '{FINAL} <short answer>'."
        ),
    ]


# ----------------------------------------------------------------------------------------------
# Answering a (sub-)question from documents: NAR's answer sampling and the intermediate answer
# ----------------------------------------------------------------------------------------------

ANSWER_SYSTEM = (
    "Answer the question from the documents. Reply with the short answer only (a name, place, date "
    "or a few words), no sentence. If the documents do not say, give your best guess."
)


def answer_messages(question: str, evidence: Sequence[dict]) -> list[BaseMessage]:
    return [
        SystemMessage(ANSWER_SYSTEM),
        HumanMessage(f"Documents:\n{_evidence_block(evidence)}\n\nQuestion: {question}\nShort answer:"),
    ]


# ----------------------------------------------------------------------------------------------
# MER: the Meta Evidence Reasoner
# ----------------------------------------------------------------------------------------------

MER_SYSTEM = (
    "You check a chain of reasoning against evidence and give the final answer to a complex question. "
    "The intermediate answers may contain mistakes: trust the documents over them."
)

RATIONALE, FINAL_ANSWER = "[Answer]:", "[Final Answer]:"


#: Asked once more when MER's reply has no final answer (a small model often runs out of tokens
#: or forgets the format while reasoning).
MER_FINAL_ONLY = f"Now write '{FINAL_ANSWER}' followed by the short answer only: a name, place, date or number."


def mer_messages(question: str, path: Sequence[tuple[str, str]], evidence: Sequence[dict]) -> list[BaseMessage]:
    steps = "\n".join(f"{i}. {q} -> {a}" for i, (q, a) in enumerate(path, start=1)) or "(none)"
    return [
        SystemMessage(MER_SYSTEM),
        HumanMessage(
            f"Documents:\n{_evidence_block(evidence)}\n\nQuestion: {question}\n"
            f"Reasoning path (sub-question -> answer):\n{steps}\n\n"
            f"Write '{RATIONALE}' followed by one or two sentences of reasoning from the documents, then a new line "
            f"'{FINAL_ANSWER}' followed by the short answer only: a name, place, date or number, not a sentence."
        ),
    ]
