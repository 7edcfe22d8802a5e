"""A hop read again carefully (``hop_support=careful``): the same LLM first copies the sentence of its
documents that answers the sub-question, then gives the short answer. The reply is the JSON object
:data:`SCHEMA`; :func:`quoted_answer` takes the answer only when the sentence is on the documents word
for word, is about what the question names, and holds the answer: a check that does not rest on the
model's own belief (which, on the 1.5B, passes most of its misreadings: benchmarks/RESULTS.md)."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage

from sunar.prompts.answer import EXAMPLES, UNKNOWN, ask_message, clean_answer, echoes_example
from sunar.prompts.structured import as_reply, object_schema, read_object
from sunar.text import content_words, names_of, normalize_answer, title_words

#: The sentence copied (pages' sentences are rarely longer), then the short answer.
SCHEMA = object_schema(sentence=240, answer=80)
#: Most tokens the reply may take (320 characters and the object's keys).
TOKENS = 128

SYSTEM = (
    "Answer the question from the documents, carefully. First copy, word for word, the one sentence of the "
    "documents that answers the question; then give the short answer it states (a name, place, date or a few "
    "words), exactly as the sentence writes it. Reply with a JSON object {\"sentence\": \"...\", \"answer\": \"...\"}."
)


def _sentence(docs: list[dict], answer: str) -> str:
    """The worked example's sentence: the first of its page's sentences that holds the answer."""
    text = " ".join(d["text"] for d in docs)
    return next(s.strip() for s in text.split(". ") if answer in s)


def careful_messages(question: str, evidence: Sequence[dict]) -> list[BaseMessage]:
    """The rule, the worked examples of :mod:`sunar.prompts.answer` with their sentences, then the hop."""
    messages: list[BaseMessage] = [SystemMessage(SYSTEM)]
    for docs, example, short in EXAMPLES:
        messages += [ask_message(example, docs), AIMessage(as_reply(sentence=_sentence(docs, short), answer=short))]
    return [*messages, ask_message(question, evidence)]


def about(sentence: str, question: str, evidence: Sequence[dict]) -> bool:
    """Whether a sentence of the documents is about what the question names: it, or the title of a page
    that holds it, shares a name of the question (any sentence, when the question names nothing). A
    sentence about someone else's father ("His father, L. A. Bouasba, ...") does not answer who
    Humehume's father is."""
    names = names_of(question)
    if not names or names & content_words(sentence):
        return True
    said = f" {normalize_answer(sentence)} "
    return any(names & title_words(e["title"]) for e in evidence if said in f" {normalize_answer(e['text'])} ")


def quoted_answer(text: str, question: str, evidence: Sequence[dict]) -> tuple[str, str] | None:
    """(answer, sentence) of a :func:`careful_messages` reply when its sentence is on the documents
    (its words in a row, after SQuAD normalisation), is :func:`about` what the question names, and
    holds the answer; else None."""
    found = read_object(text, SCHEMA)
    if not found or not found.get("sentence") or not found.get("answer"):
        return None
    answer = clean_answer(found["answer"])
    if answer == UNKNOWN or echoes_example(answer, question, evidence):
        return None
    sentence, said = normalize_answer(found["sentence"]), normalize_answer(answer)
    pages = " ".join(normalize_answer(f"{e['title']} {e['text']}") for e in evidence)
    on_pages = bool(sentence) and f" {sentence} " in f" {pages} "
    holds = bool(said) and f" {said} " in f" {sentence} "
    return (answer, found["sentence"]) if on_pages and holds and about(found["sentence"], question, evidence) else None
