"""Entailment between two answers to the same question, for semantic sets (Kuhn et al. 2023).

Two answers are in one semantic set iff each entails the other. Providers:

  ``hf:<name or path>``  an MNLI classifier (e.g. microsoft/deberta-large-mnli, roberta-large-mnli)
                         run in both directions on "question answer" pairs
  ``llm``                the LLM as a few-shot judge ("same" / "different"), reading label
                         log-probabilities where the backend gives them
  ``auto``               an MNLI classifier when one is cached, else ``llm``

All providers short-cut answers that are equal after normalisation (no model call).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Literal, Protocol

from sunar.errors import ModelUnavailable
from sunar.models.embedder import hf_cached
from sunar.models.llm import LLM
from sunar.models.specs import AUTO, chosen
from sunar.prompts import nli as judge_prompt
from sunar.text import normalize_answer

Relation = Literal["equivalent", "neutral", "contradiction"]
CACHED_NLI_CANDIDATES = ("microsoft/deberta-large-mnli", "roberta-large-mnli", "FacebookAI/roberta-large-mnli")


def _numbers(text: str) -> set[int]:
    """Integers written with digits in an answer, thousands separators removed."""
    return {int(n) for n in re.findall(r"\d+", re.sub(r"(?<=\d),(?=\d{3})", "", text))}


def numeric_conflict(a: str, b: str) -> bool:
    """Both answers write numbers and neither's numbers contain the other's ("1998" vs "1999",
    "29 November 1999" vs "30 November 1999"). "1889" vs "March 1889" is no conflict. Small LLM
    judges miss one-digit differences; units written differently ("178 cm" vs "5 ft 10") would
    misfire, which is rare in factoid answers."""
    na, nb = _numbers(a), _numbers(b)
    return bool(na and nb) and not (na <= nb or nb <= na)


class NLI(Protocol):
    name: str

    def relation(self, question: str, a: str, b: str) -> Relation:
        """How answer ``a`` and answer ``b`` to ``question`` relate."""
        ...


class _Cached:
    """Exact-match short-cut and a per-instance cache of judged pairs (samples repeat often)."""

    name = "nli"

    def __init__(self) -> None:
        self._cache: dict[tuple[str, str, str], Relation] = {}
        self.model_calls = 0

    def relation(self, question: str, a: str, b: str) -> Relation:
        na, nb = normalize_answer(a), normalize_answer(b)
        if na == nb:
            return "equivalent"
        if numeric_conflict(a, b):
            return "contradiction"
        key = (question, *sorted((na, nb)))
        if key not in self._cache:
            self.model_calls += 1
            self._cache[key] = self._judge(question, a, b)
        return self._cache[key]

    def _judge(self, question: str, a: str, b: str) -> Relation:
        raise NotImplementedError


class HFNLI(_Cached):
    """A Hugging Face sequence classifier with entailment / neutral / contradiction labels."""

    def __init__(self, model: str, max_length: int = 256):
        super().__init__()
        if not hf_cached(model):
            raise ModelUnavailable(
                f"NLI model '{model}' is not in the Hugging Face cache; download it once with internet or use --nli llm"
            )
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.name = f"hf:{model}"
        try:  # never code shipped with a model folder (trust_remote_code), whatever it asks for
            self.tokenizer = AutoTokenizer.from_pretrained(model, trust_remote_code=False)
            self.model = AutoModelForSequenceClassification.from_pretrained(model, trust_remote_code=False).eval()
        except (OSError, ValueError) as exc:
            raise ModelUnavailable(f"cannot load NLI model '{model}': {str(exc).strip().splitlines()[0]}") from None
        labels = {int(i): str(lab).lower() for i, lab in self.model.config.id2label.items()}
        try:
            self.entail = next(i for i, lab in labels.items() if lab.startswith("entail"))
            self.contra = next(i for i, lab in labels.items() if lab.startswith("contra"))
        except StopIteration:
            raise ModelUnavailable(
                f"NLI model '{model}' has labels {sorted(labels.values())}; it needs entailment and contradiction labels"
            ) from None
        self.max_length = max_length

    def _judge(self, question: str, a: str, b: str) -> Relation:
        import torch

        first, second = f"{question} {a}", f"{question} {b}"
        batch = self.tokenizer(
            [first, second], [second, first], padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        )
        with torch.inference_mode():
            predicted = self.model(**batch).logits.argmax(dim=-1).tolist()
        if predicted == [self.entail, self.entail]:
            return "equivalent"
        return "contradiction" if self.contra in predicted else "neutral"


#: Decision thresholds on logp(same) - logp(different) for the judge prompt, per LLM, measured with
#: ``python -m benchmarks.bench_nli`` (held-out 2-fold by question on labelled dev answer pairs).
#: The models put most mass on "yes", so the argmax (0) calls too many pairs the same.
JUDGE_THRESHOLDS: Mapping[str, float] = MappingProxyType({
    "embedded:qwen2.5-1.5b": 1.0,  # accurate for any threshold in 0.5 .. 2.1
    "embedded:qwen2.5-0.5b": -0.3,  # best interval -0.4 .. -0.2
})


class LLMJudgeNLI(_Cached):
    """The generative LLM as a few-shot judge: "yes" (same answer) is both-way entailment, "no" is
    taken as a contradiction (two different answers to one factual question).

    With label log-probabilities a pair is the same iff ``logp(yes) - logp(no) > threshold`` (the
    calibrated value for the model in :data:`JUDGE_THRESHOLDS`, else 0). A backend without
    log-probabilities gives only the greedy label, which then decides alone."""

    def __init__(self, llm: LLM, threshold: float | None = None):
        super().__init__()
        self.llm = llm
        self.name = f"llm-judge:{llm.name}"
        self.threshold = JUDGE_THRESHOLDS.get(llm.name, 0.0) if threshold is None else threshold

    def _judge(self, question: str, a: str, b: str) -> Relation:
        same_label, different_label = judge_prompt.LABELS
        scores = self.llm.judge(judge_prompt.nli_messages(question, a, b), judge_prompt.LABELS)
        same, different = scores[same_label], scores[different_label]
        if same == different == -math.inf:
            return "neutral"  # the judge said neither word: no evidence either way
        if math.isinf(same) or math.isinf(different):
            return "equivalent" if same > different else "contradiction"  # greedy label only
        return "equivalent" if same - different > self.threshold else "contradiction"


def resolve_nli(spec: str) -> tuple[str, str]:
    if spec != AUTO:
        return spec, "configured"
    for name in CACHED_NLI_CANDIDATES:
        if hf_cached(name):
            return f"hf:{name}", "an MNLI classifier is cached"
    return "llm", "no MNLI classifier in the Hugging Face cache"


def make_nli(spec: str, llm: LLM | None) -> NLI:
    kind, name = chosen(spec, resolve_nli, "nli")
    if kind == "hf":
        return HFNLI(name)
    if kind == "llm":
        if llm is None:
            raise ModelUnavailable("the LLM-judge NLI needs an LLM")
        return LLMJudgeNLI(llm)
    raise ModelUnavailable(f"unknown nli '{spec}'; use auto, hf:<name or path> or llm")


def semantic_sets(question: str, answers: Sequence[str], nli: NLI) -> list[list[int]]:
    """Cluster answers into semantic sets: each answer joins the first set whose representative
    (its first member) it is equivalent to, else starts a new set (Kuhn et al. 2023)."""
    sets: list[list[int]] = []
    for i, answer in enumerate(answers):
        for members in sets:
            if nli.relation(question, answers[members[0]], answer) == "equivalent":
                members.append(i)
                break
        else:
            sets.append([i])
    return sets
