"""The embedded model as the product's LLM (:class:`~sunar.models.llm.LLM`): llama.cpp on the CPU, no
server, a GGUF shipped as PyPI packages (:mod:`sunar.models.gguf`). Generation, samples and the
yes/no judges go to one llama.cpp chat context (:class:`~sunar.models.llama_cpp.EmbeddedChatModel`),
log-likelihoods to a second, hidden states to a third.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from langchain_core.messages import AIMessage

from sunar.models import gguf
from sunar.models.llama_api import without_extra_buffer_types
from sunar.models.llama_cpp import EmbeddedChatModel
from sunar.models.llm import LLM


class EmbeddedLLM(LLM):
    """The embedded llama.cpp model (CPU, no server).

    ``loglik`` runs on a second llama.cpp context of the same GGUF (``scoring``, made on first
    use; the weights are memory-mapped, so their pages are shared): GenSco alternates generator
    and scorer calls, and one context for both would evict the generator's few-shot prefix from
    the KV cache at every step, and the scorer's chosen-passage prefix at every generation."""

    def __init__(self, name: str = gguf.DEFAULT_EMBEDDED, n_ctx: int = 4096):
        spec = gguf.model_spec(name)
        self.name = f"embedded:{name}"
        self.chat = EmbeddedChatModel(model_path=str(gguf.ensure_gguf(spec)), n_ctx=n_ctx)
        self._scoring: EmbeddedChatModel | None = None
        self._scoring_lock = threading.Lock()
        self._reading: Any = None

    @property
    def scoring(self) -> EmbeddedChatModel:
        """The llama.cpp context that computes log-likelihoods."""
        with self._scoring_lock:
            if self._scoring is None:
                self._scoring = EmbeddedChatModel(model_path=self.chat.model_path, n_ctx=self.chat.n_ctx)
            return self._scoring

    def generate(self, messages, *, temperature=0.0, max_tokens=256, stop=None, config=None, schema=None):
        msg = self.chat.invoke(
            list(messages), config, temperature=temperature, max_tokens=max_tokens, stop=list(stop or []) or None, schema=schema
        )
        return AIMessage(content=str(msg.content), usage_metadata=msg.usage_metadata)

    def sample(self, messages, m, *, temperature, max_tokens=256, stop=None, schema=None):
        result = self.chat.generate(
            [list(messages)], n=m, temperature=temperature, max_tokens=max_tokens, stop=list(stop or []) or None, schema=schema
        )
        return [g.message for g in result.generations[0]]  # type: ignore[attr-defined]

    def judge(self, messages, labels):
        return self.chat.label_logprobs(messages, labels)

    def loglik(self, messages, continuation):
        return self.scoring.loglik(messages, continuation)

    def hidden_state(self, text: str) -> list[float]:
        """The last token's hidden state, from a third llama.cpp context of the same GGUF made
        with embeddings on (made on first use; weights shared by memory mapping). Qwen's GGUF
        names no pooling, so llama.cpp returns one vector per token."""
        with self._scoring_lock:
            if self._reading is None:
                import llama_cpp

                with without_extra_buffer_types():
                    self._reading = llama_cpp.Llama(
                        model_path=self.chat.model_path, embedding=True, n_ctx=1024, n_threads=os.cpu_count() or 2, verbose=False
                    )
            vectors = self._reading.embed(text, truncate=True)
        last = vectors[-1] if vectors and isinstance(vectors[0], list) else vectors
        return [float(v) for v in last]
