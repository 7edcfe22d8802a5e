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


#: Sent once when a follow-up repeats one already answered.
SELF_ASK_REPEAT_NUDGE = (
    "That question was already answered above. Write the next line: a new follow-up that uses the "
    f"answers so far ('{FOLLOW_UP} ...'), or '{FINAL} <short answer>' if they are enough."
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
#: The question is repeated: without it, a 1.5B model often named the bridge entity it had just
#: reasoned about (on dev: "Gustaf Molander" for "the place of birth of the director of film Dollar").
#: The last sentence is for the same fault with the question in view: for "Where was the director of
#: film Ronnie Rocket born?" it answered "David Lynch" without it and "Missoula, Montana" with it (on
#: the 98 dev fall-backs of sunar and sunar_no_asu, 26 -> 28 right, none lost).
MER_FINAL_ONLY = (
    "Question: {question}\nNow write '" + FINAL_ANSWER + "' followed by the short answer to this question only: "
    "a name, place, date or number. Give what the question asks for, not a person or thing it names on the way."
)


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

#: The generator writes one of these: a sub-question, or the end keyword when it has enough.
SUB_QUESTION, ENOUGH = "Sub-question:", "[ENOUGH]"

#: Passages longer than this are cut (with "...") in GenSco's prompts: every candidate costs the
#: scorer LLM one pass over its text, and a prompt must fit the model's context.
GENSCO_PASSAGE_CHARS = 1000

GENSCO_SYSTEM = (
    "You find the passages that answer a complex question, one step at a time. At each step write "
    "one simple sub-question asking for the next fact you need; a passage answering it is then found "
    "for you. Later sub-questions use the names found in the passages so far. When the passages "
    f"found so far are enough to answer the question, write {ENOUGH} instead."
)

#: Invented worked examples: (question, [(sub-question, passage title, passage text), ...]). Each
#: step becomes one user/assistant turn, then a last turn ends with the keyword; the turns are
#: the same for every question, so llama.cpp keeps them in its KV cache.
GENSCO_EXAMPLES: list[tuple[str, list[tuple[str, str, str]]]] = [
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

_GENSCO_NEXT = f"Write only the next line: '{SUB_QUESTION} <one simple question>', or {ENOUGH} if the passages answer the question."

#: Sent once when the final answer came back empty.
GENSCO_ANSWER_AGAIN = "Write the short answer only: a name, place, date or number."


def gensco_passage(title: str, text: str) -> str:
    text = " ".join(str(text).split())
    if len(text) > GENSCO_PASSAGE_CHARS:
        text = text[:GENSCO_PASSAGE_CHARS].rsplit(" ", 1)[0] + " ..."
    return f"{title}: {text}"


def gensco_transcript(question: str, steps: Sequence[tuple[str, str, str]]) -> str:
    """The question, then each sub-question with the passage chosen for it."""
    lines = [f"Question: {question}"]
    for i, (sub_question, title, text) in enumerate(steps, start=1):
        lines += [f"Sub-question {i}: {sub_question}", f"Passage {i}: {gensco_passage(title, text)}"]
    return "\n".join(lines)


def gensco_next_messages(question: str, steps: Sequence[tuple[str, str, str]]) -> list[BaseMessage]:
    """The generator's prompt for the next step: the rule, every step of the worked examples as a
    turn, then this question with its (sub-question, passage title, passage text) steps so far."""
    messages: list[BaseMessage] = [SystemMessage(GENSCO_SYSTEM)]
    for example, example_steps in GENSCO_EXAMPLES:
        for i in range(len(example_steps) + 1):
            messages.append(HumanMessage(f"{gensco_transcript(example, example_steps[:i])}\n\n{_GENSCO_NEXT}"))
            messages.append(AIMessage(f"{SUB_QUESTION} {example_steps[i][0]}" if i < len(example_steps) else ENOUGH))
    messages.append(HumanMessage(f"{gensco_transcript(question, steps)}\n\n{_GENSCO_NEXT}"))
    return messages


GENSCO_ANSWER_SYSTEM = (
    "Answer the complex question from the passages, which were found for it step by step, in this "
    "order. Reply with the short answer only (a name, place, date or a few words), no sentence. If "
    "the passages do not say, give your best guess."
)


def gensco_answer_messages(question: str, passages: Sequence[dict]) -> list[BaseMessage]:
    """The final generator call: the question and the selected passage sequence."""
    block = "\n".join(f"[{i}] {gensco_passage(p['title'], p['text'])}" for i, p in enumerate(passages, start=1))
    return [
        SystemMessage(GENSCO_ANSWER_SYSTEM),
        HumanMessage(f"Passages:\n{block or '(no passages found)'}\n\nQuestion: {question}\nShort answer:"),
    ]


# The scorer LLM's prompts. The instruction sits in the system message and the user turn holds
# only the passages, with the candidate last: the candidates of a step share every token before
# it (kept in llama.cpp's KV cache), and the continuation follows the candidate directly.

GENSCO_SCORE_SYSTEM = (
    "You read passages and write one simple question that the last passage answers. The question "
    "may use names that the earlier passages give."
)

GENSCO_QUESTION_SYSTEM = (
    "You read simple questions, each with the passage that answers it, and write the one complex "
    "question that they answer together."
)


def gensco_score_messages(passages: Sequence[dict]) -> list[BaseMessage]:
    """Scorer prompt for log P(sub-question | chosen passages + candidate): the candidate is last."""
    block = "\n".join(f"[{i}] {gensco_passage(p['title'], p['text'])}" for i, p in enumerate(passages, start=1))
    return [SystemMessage(GENSCO_SCORE_SYSTEM), HumanMessage(f"Passages:\n{block}")]


def gensco_question_messages(steps: Sequence[tuple[str, str, str]]) -> list[BaseMessage]:
    """Scorer prompt for log P(question | decomposition so far): each (sub-question, title, text)."""
    block = "\n".join(
        f"{i}. {sub_question}\n   Passage: {gensco_passage(title, text)}" for i, (sub_question, title, text) in enumerate(steps, start=1)
    )
    return [SystemMessage(GENSCO_QUESTION_SYSTEM), HumanMessage(f"Simple questions and their passages:\n{block}")]


# ----------------------------------------------------------------------------------------------
# RA-ISF: self-knowledge, passage relevance, decomposition and answer prompts
# ----------------------------------------------------------------------------------------------

#: The judges reply with one of these words; their log-probabilities decide (yes must beat no).
RA_ISF_LABELS: Sequence[str] = ("yes", "no")

RA_ISF_KNOW_SYSTEM = (
    "You decide whether you can answer a question correctly from memory alone, without looking "
    "anything up. Reply 'yes' only for a simple question about a widely known fact (a famous person, "
    "place, event or work). Reply 'no' if the question chains two or more facts together, is about a "
    "little-known person, film, book, company or place, or asks for a detail you may not remember. "
    "Reply with one word: yes or no."
)

#: Invented exemplars: (question, verdict).
RA_ISF_KNOW_EXAMPLES: list[tuple[str, str]] = [
    ("What is the capital of Japan?", "yes"),
    ("Where was the director of the film The Quiet Lanterns born?", "no"),
    ("Who wrote the play Romeo and Juliet?", "yes"),
    ("Who was the first wife of the composer of the opera Marigold Night?", "no"),
    ("In which year did the cyclist Oskar Brandtvik win his first race?", "no"),
    ("What is the chemical symbol for gold?", "yes"),
    ("Which film came out first, Harbour Lights or The Tin Orchard?", "no"),
]
RA_ISF_KNOW_QUERY = "Question: {q}\nCan you answer it correctly from memory alone?"


def ra_isf_know_messages(question: str) -> list[BaseMessage]:
    """Self-knowledge judge: the rule, the exemplars as turns, the question (reply yes / no)."""
    messages: list[BaseMessage] = [SystemMessage(RA_ISF_KNOW_SYSTEM)]
    for q, verdict in RA_ISF_KNOW_EXAMPLES:
        messages += [HumanMessage(RA_ISF_KNOW_QUERY.format(q=q)), AIMessage(verdict)]
    messages.append(HumanMessage(RA_ISF_KNOW_QUERY.format(q=question)))
    return messages


RA_ISF_RELEVANCE_SYSTEM = (
    "You check whether a passage helps answer a question. Reply 'yes' if the passage states the "
    "answer, or a fact about the person, place or thing the question asks about that is needed to "
    "find the answer. Reply 'no' if it is about something else, even when it shares words with the "
    "question. Reply with one word: yes or no."
)

#: Invented exemplars: (question, passage title, passage text, verdict).
RA_ISF_RELEVANCE_EXAMPLES: list[tuple[str, str, str, str]] = [
    ("Who directed the film The Quiet Lanterns?", "The Quiet Lanterns",
     "The Quiet Lanterns is a 1962 drama film directed by Mira Solberg.", "yes"),
    ("Who directed the film The Quiet Lanterns?", "Lantern Festival",
     "The Lantern Festival is held on the fifteenth day of the first lunar month.", "no"),
    ("Where was the founder of Velland Motors born?", "Velland Motors",
     "Velland Motors is a truck maker founded in 1921 by the engineer Arne Velland.", "yes"),
    ("When was the painter of Harbour at Dusk born?", "Harbour (film)",
     "Harbour is a 1998 film set in a fishing town on the west coast.", "no"),
    ("What is the capital of the country where Arne Velland was born?", "Arne Velland",
     "Arne Velland (1889-1950) was a Norwegian engineer born in Bergen.", "yes"),
]
RA_ISF_RELEVANCE_QUERY = "Question: {q}\nPassage: {title}: {text}\nDoes the passage help answer the question?"
#: Passages are cut to this many characters in the relevance prompt (a judge needs the gist).
RA_ISF_PASSAGE_CHARS = 1000


def ra_isf_relevance_messages(question: str, passage: dict) -> list[BaseMessage]:
    """Relevance judge for one passage (reply yes / no)."""
    messages: list[BaseMessage] = [SystemMessage(RA_ISF_RELEVANCE_SYSTEM)]
    for q, title, text, verdict in RA_ISF_RELEVANCE_EXAMPLES:
        messages += [HumanMessage(RA_ISF_RELEVANCE_QUERY.format(q=q, title=title, text=text)), AIMessage(verdict)]
    text = " ".join(str(passage["text"]).split())[:RA_ISF_PASSAGE_CHARS]
    messages.append(HumanMessage(RA_ISF_RELEVANCE_QUERY.format(q=question, title=passage["title"], text=text)))
    return messages


RA_ISF_DECOMPOSE_SYSTEM = (
    "You break a complex question into simple sub-questions that can each be looked up. Write one "
    "sub-question per line, numbered 1., 2., and so on: two to four of them. When a sub-question needs "
    "the answer of an earlier one, write #1, #2, ... in its place. Never repeat the whole question. "
    "Write nothing else."
)

#: Invented worked examples: (question, sub-questions).
RA_ISF_DECOMPOSE_EXAMPLES: list[tuple[str, list[str]]] = [
    (
        "In which country was the author of the novel The Glass Orchard born?",
        ["Who wrote the novel The Glass Orchard?", "In which country was #1 born?"],
    ),
    (
        "Who is older, the painter of Harbour at Dusk or the architect of the Merlow Library?",
        ["Who painted Harbour at Dusk?", "Who designed the Merlow Library?", "When was #1 born?", "When was #2 born?"],
    ),
    (
        "What river flows through the capital of the country where Velland Motors is based?",
        ["In which country is Velland Motors based?", "What is the capital of #1?", "What river flows through #2?"],
    ),
]
RA_ISF_DECOMPOSE_QUERY = "Question: {q}\nSub-questions:"


def ra_isf_decompose_messages(question: str) -> list[BaseMessage]:
    """Decomposition: the rule, the worked examples as turns, the question (numbered lines)."""
    messages: list[BaseMessage] = [SystemMessage(RA_ISF_DECOMPOSE_SYSTEM)]
    for q, subs in RA_ISF_DECOMPOSE_EXAMPLES:
        messages += [
            HumanMessage(RA_ISF_DECOMPOSE_QUERY.format(q=q)),
            AIMessage("\n".join(f"{i}. {s}" for i, s in enumerate(subs, start=1))),
        ]
    messages.append(HumanMessage(RA_ISF_DECOMPOSE_QUERY.format(q=question)))
    return messages


_SHORT = "Reply with the short answer only (a name, place, date, number or a few words), no sentence."

RA_ISF_SELF_ANSWER_SYSTEM = f"Answer the question from your own knowledge. {_SHORT} If you do not know, reply: unknown."


def ra_isf_self_answer_messages(question: str) -> list[BaseMessage]:
    return [SystemMessage(RA_ISF_SELF_ANSWER_SYSTEM), HumanMessage(f"Question: {question}\nShort answer:")]


RA_ISF_PASSAGE_ANSWER_SYSTEM = (
    "Answer the question from the passages with the short answer only (a name, place, date, number "
    "or a few words), no sentence."
)
#: Measured on the demo question with the 1.5B model: "reply unknown if the passages do not say",
#: or a worked example answering "unknown", made it answer "unknown" even where the passage implies
#: the answer ("Who directed Ronnie Rocket?" from "Lynch developed the script"); this wording with
#: the one implied-answer example answers that and still says "unknown" to an unrelated question.
RA_ISF_STRICT = "If no passage is about it at all, reply: unknown."
RA_ISF_GUESS = "If the passages do not say, give your best guess."

#: Invented worked example for the passage answer: (passages, question, answer), the answer implied.
RA_ISF_PASSAGE_EXAMPLE: tuple[list[dict], str, str] = (
    [{"title": "The Tin Orchard", "text": "The Tin Orchard is an unfinished film. The painter-turned-filmmaker "
      "Hal Brenner wrote it in 1971 and kept planning the shoot for twenty years."}],
    "Who is the director of The Tin Orchard?",
    "Hal Brenner",
)


def _passage_query(question: str, passages: Sequence[dict]) -> str:
    return f"Passages:\n{_evidence_block(passages)}\n\nQuestion: {question}\nShort answer:"


def ra_isf_passage_answer_messages(question: str, passages: Sequence[dict], guess: bool) -> list[BaseMessage]:
    """Answer from passages: from the relevant ones ("unknown" allowed, which sends the question on
    to decomposition), or, as a leaf's last resort, from whatever was retrieved (a best guess)."""
    shown, example, reply = RA_ISF_PASSAGE_EXAMPLE
    return [
        SystemMessage(f"{RA_ISF_PASSAGE_ANSWER_SYSTEM} {RA_ISF_GUESS if guess else RA_ISF_STRICT}"),
        HumanMessage(_passage_query(example, shown)),
        AIMessage(reply),
        HumanMessage(_passage_query(question, passages)),
    ]


RA_ISF_COMPOSE_SYSTEM = (
    "Answer a complex question from the answers to its sub-questions. Reply with the short answer "
    "only (a name, place, date, number, yes or no), no sentence. If the answers are not enough, reply: unknown."
)
#: One invented worked example: (question, [(sub-question, answer), ...], answer).
RA_ISF_COMPOSE_EXAMPLE: tuple[str, list[tuple[str, str]], str] = (
    "Who is older, the painter of Harbour at Dusk or the architect of the Merlow Library?",
    [
        ("Who painted Harbour at Dusk?", "Ilse Varga"),
        ("Who designed the Merlow Library?", "Tomas Reid"),
        ("When was Ilse Varga born?", "1874"),
        ("When was Tomas Reid born?", "1869"),
    ],
    "Tomas Reid",
)


def _compose_query(question: str, solved: Sequence[tuple[str, str]]) -> str:
    lines = "\n".join(f"{i}. {q} -> {a}" for i, (q, a) in enumerate(solved, start=1))
    return f"Question: {question}\nSub-questions and answers:\n{lines}\nShort answer:"


def ra_isf_compose_messages(question: str, solved: Sequence[tuple[str, str]]) -> list[BaseMessage]:
    """Compose an answer from the (sub-question, answer) pairs."""
    example, steps, answer = RA_ISF_COMPOSE_EXAMPLE
    return [
        SystemMessage(RA_ISF_COMPOSE_SYSTEM),
        HumanMessage(_compose_query(example, steps)),
        AIMessage(answer),
        HumanMessage(_compose_query(question, solved)),
    ]
