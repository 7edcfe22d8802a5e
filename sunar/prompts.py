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
    "You split a complex question into simple follow-up questions and ask them one at a time. "
    "A complex question describes something instead of naming it (\"the director of film X\", "
    "\"the author of book Y\", \"the country where Z was born\"). The first follow-up asks for that "
    "hidden name; each later follow-up uses the names found so far. Never repeat the whole question. "
    "When the answers so far are enough, give the final answer."
)

#: Invented worked examples: (question, [(follow-up, intermediate answer), ...], final answer).
#: Each becomes one user/assistant turn per step, so even a small model sees exactly one line per
#: reply, and the turns are the same for every question (llama.cpp keeps them in its KV cache).
SELF_ASK_EXAMPLES: list[tuple[str, list[tuple[str, str]], str]] = [
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
_NEXT_LINE = f"Write only the next line: '{FOLLOW_UP} <one simple question>' or '{FINAL} <short answer>'."

#: Sent once when the first follow-up repeats the whole question (small models often do).
SELF_ASK_NUDGE = (
    "That repeats the question. Ask first for the hidden name only: the person, place or thing the "
    f"question describes without naming it. Write only '{FOLLOW_UP} <one simple question>'."
)


def self_ask_transcript(question: str, path: Sequence[tuple[str, str]]) -> str:
    lines = [f"Question: {question}"]
    for sub_question, answer in path:
        lines += [f"{FOLLOW_UP} {sub_question}", f"Intermediate answer: {answer}"]
    return "\n".join(lines)


def self_ask_messages(question: str, path: Sequence[tuple[str, str]]) -> list[BaseMessage]:
    """The rule, every step of the worked examples as a turn, then this question's transcript."""
    messages: list[BaseMessage] = [SystemMessage(SELF_ASK_SYSTEM)]
    for example, steps, final in SELF_ASK_EXAMPLES:
        for i in range(len(steps) + 1):
            messages.append(HumanMessage(f"{self_ask_transcript(example, steps[:i])}\n\n{_NEXT_LINE}"))
            messages.append(AIMessage(f"{FOLLOW_UP} {steps[i][0]}" if i < len(steps) else f"{FINAL} {final}"))
    messages.append(HumanMessage(f"{self_ask_transcript(question, path)}\n\n{_NEXT_LINE}"))
    return messages


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


# ----------------------------------------------------------------------------------------------
# GenSco: generator (next sub-question, final answer) and scorer (log-likelihood) prompts
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------------
# RA-ISF: self-knowledge, passage relevance, decomposition and answer prompts
# ----------------------------------------------------------------------------------------------
