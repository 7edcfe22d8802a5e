"""RA-ISF's prompts: the self-knowledge and relevance judges (read through the log-probabilities
of :data:`LABELS`), decomposition into sub-questions (and its reader), and the answer prompts.

The decomposition's reply is the JSON object :data:`SCHEMA`, its sub-questions numbered in one
string; every answer's is :data:`ANSWER_SCHEMA`, the short answer's
(:data:`sunar.prompts.answer.SCHEMA`). A reply that is not the object is read as free text,
the way these prompts were answered before (a counted parse fall-back)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from sunar.prompts import answer
from sunar.prompts.answer import documents_block
from sunar.prompts.structured import as_reply, object_schema, read_object
from sunar.text import normalize_answer, restates

#: The judges reply with one of these words; their log-probabilities decide (yes must beat no).
LABELS: Sequence[str] = ("yes", "no")

KNOW_SYSTEM = (
    "You decide whether you can answer a question correctly from memory alone, without looking "
    "anything up. Reply 'yes' only for a simple question about a widely known fact (a famous person, "
    "place, event or work). Reply 'no' if the question chains two or more facts together, is about a "
    "little-known person, film, book, company or place, or asks for a detail you may not remember. "
    "Reply with one word: yes or no."
)

#: Invented exemplars: (question, verdict).
KNOW_EXAMPLES: list[tuple[str, str]] = [
    ("What is the capital of Japan?", "yes"),
    ("Where was the director of the film The Quiet Lanterns born?", "no"),
    ("Who wrote the play Romeo and Juliet?", "yes"),
    ("Who was the first wife of the composer of the opera Marigold Night?", "no"),
    ("In which year did the cyclist Oskar Brandtvik win his first race?", "no"),
    ("What is the chemical symbol for gold?", "yes"),
    ("Which film came out first, Harbour Lights or The Tin Orchard?", "no"),
]
KNOW_QUERY = "Question: {q}\nCan you answer it correctly from memory alone?"


def know_messages(question: str) -> list[BaseMessage]:
    """Self-knowledge judge: the rule, the exemplars as turns, the question (reply yes / no)."""
    messages: list[BaseMessage] = [SystemMessage(KNOW_SYSTEM)]
    for q, verdict in KNOW_EXAMPLES:
        messages += [HumanMessage(KNOW_QUERY.format(q=q)), AIMessage(verdict)]
    messages.append(HumanMessage(KNOW_QUERY.format(q=question)))
    return messages


RELEVANCE_SYSTEM = (
    "You check whether a passage helps answer a question. Reply 'yes' if the passage states the "
    "answer, or a fact about the person, place or thing the question asks about that is needed to "
    "find the answer. Reply 'no' if it is about something else, even when it shares words with the "
    "question. Reply with one word: yes or no."
)

#: Invented exemplars: (question, passage title, passage text, verdict).
RELEVANCE_EXAMPLES: list[tuple[str, str, str, str]] = [
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
RELEVANCE_QUERY = "Question: {q}\nPassage: {title}: {text}\nDoes the passage help answer the question?"
#: Passages are cut to this many characters in the relevance prompt (a judge needs the gist).
PASSAGE_CHARS = 1000


def relevance_messages(question: str, passage: dict) -> list[BaseMessage]:
    """Relevance judge for one passage (reply yes / no)."""
    messages: list[BaseMessage] = [SystemMessage(RELEVANCE_SYSTEM)]
    for q, title, text, verdict in RELEVANCE_EXAMPLES:
        messages += [HumanMessage(RELEVANCE_QUERY.format(q=q, title=title, text=text)), AIMessage(verdict)]
    text = " ".join(str(passage["text"]).split())[:PASSAGE_CHARS]
    messages.append(HumanMessage(RELEVANCE_QUERY.format(q=question, title=passage["title"], text=text)))
    return messages


#: Four sub-questions of the examples' length, and the JSON around them, fit the cpu profile's 128 tokens.
SCHEMA = object_schema(sub_questions=300)

DECOMPOSE_SYSTEM = (
    "You break a complex question into simple sub-questions that can each be looked up. Reply with "
    f"a JSON object {as_reply(sub_questions='1. ... 2. ...')} listing two to four sub-questions, "
    "numbered 1., 2., and so on. When a sub-question needs the answer of an earlier one, write #1, "
    "#2, ... in its place. Never repeat the whole question. Write nothing else."
)

#: Invented worked examples: (question, sub-questions).
DECOMPOSE_EXAMPLES: list[tuple[str, list[str]]] = [
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
DECOMPOSE_QUERY = "Question: {q}"


def numbered(sub_questions: Sequence[str]) -> str:
    """Sub-questions as the reply lists them: "1. ... 2. ..."."""
    return " ".join(f"{i}. {s}" for i, s in enumerate(sub_questions, start=1))


def decompose_messages(question: str) -> list[BaseMessage]:
    """Decomposition: the rule, the worked examples as turns, the question (a :data:`SCHEMA` reply)."""
    messages: list[BaseMessage] = [SystemMessage(DECOMPOSE_SYSTEM)]
    for q, subs in DECOMPOSE_EXAMPLES:
        messages += [HumanMessage(DECOMPOSE_QUERY.format(q=q)), AIMessage(as_reply(sub_questions=numbered(subs)))]
    messages.append(HumanMessage(DECOMPOSE_QUERY.format(q=question)))
    return messages


#: Every answer (from memory, from passages, composed) is a short answer's JSON object, read as
#: every short answer the product asks for is.
ANSWER_SCHEMA, read_answer = answer.SCHEMA, answer.read_answer

_REPLY = f"Reply with a JSON object {as_reply(answer='...')} holding"
#: The reply when the model does not know.
_UNKNOWN = as_reply(answer="unknown")

SELF_ANSWER_SYSTEM = (
    f"Answer the question from your own knowledge. {_REPLY} the short answer only (a name, place, date, "
    f"number or a few words), no sentence. If you do not know, reply {_UNKNOWN}."
)


def self_answer_messages(question: str) -> list[BaseMessage]:
    return [SystemMessage(SELF_ANSWER_SYSTEM), HumanMessage(f"Question: {question}")]


PASSAGE_ANSWER_SYSTEM = (
    f"Answer the question from the passages. {_REPLY} the short answer only (a name, place, date, number "
    "or a few words), no sentence."
)
#: Measured on the demo question with the 1.5B model: "reply unknown if the passages do not say",
#: or a worked example answering "unknown", made it answer "unknown" even where the passage implies
#: the answer ("Who directed Ronnie Rocket?" from "Lynch developed the script"); this wording with
#: the one implied-answer example answers that and still says "unknown" to an unrelated question.
#: (Measured in free text, "reply: unknown"; as JSON the 0.5B model still answers "David Lynch".)
STRICT = f"If no passage is about it at all, reply {_UNKNOWN}."
GUESS = "If the passages do not say, give your best guess."

#: Invented worked example for the passage answer: (passages, question, answer), the answer implied.
PASSAGE_EXAMPLE: tuple[list[dict], str, str] = (
    [{"title": "The Tin Orchard", "text": "The Tin Orchard is an unfinished film. The painter-turned-filmmaker "
      "Hal Brenner wrote it in 1971 and kept planning the shoot for twenty years."}],
    "Who is the director of The Tin Orchard?",
    "Hal Brenner",
)


def _passage_query(question: str, passages: Sequence[dict]) -> str:
    return f"Passages:\n{documents_block(passages)}\n\nQuestion: {question}"


def passage_answer_messages(question: str, passages: Sequence[dict], guess: bool) -> list[BaseMessage]:
    """Answer from passages: from the relevant ones ("unknown" allowed, which sends the question on
    to decomposition), or, as a leaf's last resort, from whatever was retrieved (a best guess)."""
    shown, example, reply = PASSAGE_EXAMPLE
    return [
        SystemMessage(f"{PASSAGE_ANSWER_SYSTEM} {GUESS if guess else STRICT}"),
        HumanMessage(_passage_query(example, shown)),
        AIMessage(as_reply(answer=reply)),
        HumanMessage(_passage_query(question, passages)),
    ]


COMPOSE_SYSTEM = (
    f"Answer a complex question from the answers to its sub-questions. {_REPLY} the short answer "
    f"only (a name, place, date, number, yes or no), no sentence. If the answers are not enough, reply {_UNKNOWN}."
)
#: One invented worked example: (question, [(sub-question, answer), ...], answer).
COMPOSE_EXAMPLE: tuple[str, list[tuple[str, str]], str] = (
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
    return f"Question: {question}\nSub-questions and answers:\n{lines}"


def compose_messages(question: str, solved: Sequence[tuple[str, str]]) -> list[BaseMessage]:
    """Compose an answer from the (sub-question, answer) pairs."""
    example, steps, answer = COMPOSE_EXAMPLE
    return [
        SystemMessage(COMPOSE_SYSTEM),
        HumanMessage(_compose_query(example, steps)),
        AIMessage(as_reply(answer=answer)),
        HumanMessage(_compose_query(question, solved)),
    ]


#: A reference to an earlier sub-question's answer in a decomposition ("#1", "#2").
REFERENCE = re.compile(r"#(\d+)")
_MARKER = re.compile(r"^\s*(?:[-*\u2022]+|\(?\d{1,2}\s*[.):]|(?:sub[- ]?questions?|q)\s*\d{0,2}\s*[.):])\s*", re.IGNORECASE)
_LABEL = re.compile(r"^\s*(?:question|sub[- ]?question)\s*:\s*", re.IGNORECASE)
#: Where the object's one string starts another sub-question: before its number, after a "?".
_NEXT_ITEM = re.compile(r"\s+(?=\(?\d{1,2}\s*[.):]\s)|(?<=\?)\s+")


def parse_sub_questions(text: str, asked: list[str]) -> tuple[list[str], list[str]]:
    """Sub-questions from a decomposition reply, and notes on what was dropped.

    A :data:`SCHEMA` object's string is cut into lines before each number ("1. ... 2. ...") and
    after each "?"; any other reply is read by its own lines. A line counts when it starts with a
    list marker ("1.", "2)", "-", "Sub-question 1:") or ends with "?"; anything after its first "?"
    is cut (an answer the model added). Repeats of an earlier line and restatements of a question in
    ``asked`` (the question and its ancestors) are dropped; #k references are renumbered to the
    lines kept, and a reference to a dropped or later line becomes #0, which never resolves.
    """
    found = read_object(text, SCHEMA)
    lines = _NEXT_ITEM.sub("\n", found["sub_questions"]) if found is not None else str(text)
    items: list[str] = []
    for raw in lines.splitlines():
        line = raw.strip().strip("*").strip()
        marked = _MARKER.match(line)
        body = _LABEL.sub("", line[marked.end():] if marked else line).strip().strip("*").strip()
        if "?" in body:
            body = body[: body.index("?") + 1]
        if (marked or body.endswith("?")) and any(ch.isalnum() for ch in REFERENCE.sub("", body)):
            items.append(body)
    kept: list[str] = []
    where: dict[int, int] = {}  # written position (1-based) -> kept position (1-based)
    notes: list[str] = []
    for n, item in enumerate(items, start=1):
        if any(restates(item, q) for q in asked):
            notes.append(f"a sub-question repeated the question ({item[:80]!r}); dropped")
            continue
        own = len(kept) + 1

        def renumber(match: re.Match[str], own: int = own) -> str:
            j = where.get(int(match.group(1)), 0)
            return f"#{j if j < own else 0}"

        item = REFERENCE.sub(renumber, item)
        earlier = next((j for j, k in enumerate(kept, start=1) if normalize_answer(k) == normalize_answer(item)), None)
        if earlier is None:
            kept.append(item)
        where[n] = earlier or own
    return kept, notes
