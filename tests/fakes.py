"""Hand-made stand-ins for the index, scorer and NLI, and a scripted LLM that understands the
project's prompts, so the graphs run deterministically without models."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from scripted import ScriptedLLM
from sunar.models.nli import _Cached
from sunar.prompts import mer, nli, plan, self_ask, support
from sunar.resources import Resources
from sunar.stores.corpus import Document
from sunar.usage import node


@dataclass
class MemoryIndex:
    """Documents, a first-stage ranking per query (or a default), and a neighbour table."""

    docs: dict[str, Document]
    rankings: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    graph: dict[str, list[str]] = field(default_factory=dict)
    default_ranking: list[tuple[str, float]] = field(default_factory=list)
    manifest: dict = field(default_factory=dict)  # what a built index records (its corpus fingerprint)

    @property
    def size(self) -> int:
        return len(self.docs)

    def first_stage(self, query: str, depth: int, kind: str = "bm25") -> list[tuple[str, float]]:
        return list(self.rankings.get(query, self.default_ranking))[:depth]

    def neighbours(self, doc_id: str) -> list[tuple[str, float]]:
        return [(n, 0.9 - 0.01 * i) for i, n in enumerate(self.graph.get(doc_id, []))]

    def documents(self, ids: Sequence[str]) -> list[Document]:
        return [self.docs[i] for i in ids if i in self.docs]


class TableScorer:
    """Scores from a table (id -> score); unknown documents score 0."""

    name = "table"

    def __init__(self, table: dict[str, float]):
        self.table = table
        self.calls: list[tuple[str, list[str]]] = []

    def score(self, query: str, docs: Sequence[Document]) -> list[float]:
        self.calls.append((query, [d.id for d in docs]))
        return [self.table.get(d.id, 0.0) for d in docs]


class TableNLI(_Cached):
    """Equivalence by a canonical form: answers with the same ``canon(answer)`` are equivalent;
    others contradict."""

    name = "table-nli"

    def __init__(self, canon: Callable[[str], str] = lambda a: a.lower()):
        super().__init__()
        self.canon = canon

    def _judge(self, question: str, a: str, b: str):
        return "equivalent" if self.canon(a) == self.canon(b) else "contradiction"


def docs(*specs: tuple[str, str, str]) -> dict[str, Document]:
    return {i: Document(i, t, x) for i, t, x in specs}


def prompt_kind(prompt: str) -> str:
    if prompt.startswith(self_ask.SYSTEM):
        return "self_ask"
    if prompt.startswith(plan.SYSTEM):
        return "plan"
    if prompt.startswith(mer.SYSTEM):
        return "mer"
    if prompt.startswith(nli.SYSTEM):
        return "nli"
    if prompt.startswith(support.SYSTEM):
        return "support"
    if prompt.startswith(support.FITS_SYSTEM):
        return "fits"
    return "answer"


def counted(fn: Callable[[], object]) -> tuple[object, dict]:
    """Run ``fn`` inside a node and return (its result, the node's usage)."""
    box = {}

    @node("probe")
    def probe(state, config):
        box["result"] = fn()
        return {}

    usage = probe({}, {})["usage"]
    return box["result"], usage


def question_of(prompt: str) -> str:
    return re.findall(r"Question: (.*)", prompt)[-1].strip()


def self_ask_script(steps: list[str]) -> Callable[[str], str]:
    """Self-Ask replies by step number (the number of intermediate answers so far)."""

    def reply(prompt: str) -> str:
        transcript = prompt.rsplit("Question:", 1)[1]
        n = transcript.count("Intermediate answer:")
        return steps[n] if n < len(steps) else steps[-1]

    return reply


def scripted_llm(
    self_ask: Callable[[str], str],
    answer: Callable[[str, int], str],
    mer: str = "[Answer]: from the documents.\n[Final Answer]: {answer}",
    plan: Callable[[str], str] = lambda prompt: "",
) -> ScriptedLLM:
    """A model answering each kind of prompt by its function (``plan``: the planned decomposition's
    reply, given the prompt)."""

    def script(prompt: str, i: int) -> str:
        kind = prompt_kind(prompt)
        if kind == "self_ask":
            return self_ask(prompt)
        if kind == "plan":
            return plan(prompt)
        if kind == "mer":
            return mer.format(answer=answer("MER:" + question_of(prompt), 0))
        if kind in ("support", "fits"):  # the answer function sees "SUPPORT:" (a hop's pages) or "FITS:" (the whole
            # question), the (sub-)question, " = " and the answer judged
            return answer(f"{kind.upper()}:{question_of(prompt)} = {re.findall(r'Proposed answer: (.*)', prompt)[-1].strip()}", 0)
        return answer(question_of(prompt), i)

    return ScriptedLLM(script)


def judging(hops: dict[str, str], mer_answers: Sequence[str], fitting: Sequence[str] | set[str]) -> Callable[[str, int], str]:
    """A scripted model's answers: each sub-question's from ``hops``; the judge says yes to the answers
    in ``fitting`` (and to every hop's support); MER gives ``mer_answers`` in turn, the last one from then on."""
    given = iter(mer_answers)
    last = [mer_answers[-1]]

    def answer(question: str, i: int) -> str:
        if question.startswith("FITS:"):
            return "yes" if question.split(" = ", 1)[1] in fitting else "no"
        if question.startswith("SUPPORT:"):
            return "yes"
        if question.startswith("MER:"):
            last[0] = next(given, last[0])
            return last[0]
        return hops.get(question, "unknown")

    return answer


def resources(llm, scorer, index, nli=None, escalation=None) -> Resources:
    return Resources(llm=llm, scorer=scorer, nli=nli or TableNLI(), index=index, escalation=escalation)


def whole_state(graph, inputs: dict, config: dict) -> dict:
    """The graph's whole last state: its output and its working fields, as Studio shows them."""
    *_, last = graph.stream(inputs, config, stream_mode="values")
    return last
