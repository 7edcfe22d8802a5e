"""The embedded model's chat context: llama.cpp on the CPU, no server (a GGUF shipped as PyPI
packages, see :mod:`sunar.models.gguf`); the product's LLM over it is
:class:`sunar.models.embedded.EmbeddedLLM`.

A reply with a format (a JSON schema or Self-Ask's lines) is decoded under its grammar
(:func:`~sunar.prompts.structured.gbnf`).
Besides generation, it reads the model's distribution directly: label log-probabilities for the
yes/no judges and the log-likelihood of a given text for GenSco's scorer, and keeps KV states of
recent prompts (:mod:`sunar.models.kv_cache`). It uses llama-cpp-python's public ``Llama`` API;
what it reads through the library's C API is :mod:`sunar.models.llama_api`.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import PrivateAttr

from sunar.cancel import raise_if_stopped
from sunar.errors import ModelUnavailable, SunarError
from sunar.models.kv_cache import PrefixStates
from sunar.models.llama_api import (
    continuation_logprobs,
    last_logits,
    read_prompt,
    stop_between_tokens,
    token_text,
    without_extra_buffer_types,
)
from sunar.prompts.structured import gbnf


def _role(message: BaseMessage) -> str:
    return {"human": "user", "ai": "assistant", "system": "system"}.get(message.type, "user")


class EmbeddedChatModel(BaseChatModel):
    """A llama.cpp chat model. Samples reuse the evaluated prompt: llama.cpp keeps the KV cache of
    the longest common prefix, so sample 2..m read only the new tokens."""

    model_path: str
    n_ctx: int = 4096
    n_threads: int | None = None
    seed: int = 1234
    #: Keep KV states of recent long prompts (see :mod:`sunar.models.kv_cache`); off only to
    #: measure what they save.
    keep_prefixes: bool = os.environ.get("SUNAR_PREFIX_STATES", "1") != "0"
    _llama: Any = PrivateAttr(default=None)
    _states: PrefixStates = PrivateAttr(default_factory=PrefixStates)
    _formatter: Any = PrivateAttr(default=None)
    _label_ids: dict[str, frozenset[int]] = PrivateAttr(default_factory=dict)
    _grammars: dict[str, Any] = PrivateAttr(default_factory=dict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "sunar-llama-cpp"

    @property
    def llama(self) -> Any:
        if self._llama is None:
            try:
                import llama_cpp
            except ImportError as exc:
                raise ModelUnavailable(
                    "llama-cpp-python is not installed; run ./run setup (or pip install llama-cpp-python==0.3.36)"
                ) from exc
            with without_extra_buffer_types():
                self._llama = llama_cpp.Llama(
                    model_path=self.model_path,
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads or os.cpu_count() or 2,
                    seed=self.seed,
                    logits_all=False,
                    verbose=False,
                )
            stop_between_tokens(self._llama)
        return self._llama

    @staticmethod
    def _dicts(messages: Sequence[BaseMessage]) -> list[dict[str, str]]:
        return [{"role": _role(m), "content": str(m.content)} for m in messages]

    @contextmanager
    def _reusing_prefix(self, messages: Sequence[BaseMessage], keep: bool = True) -> Iterator[list[int]]:
        """Hold the model; before the work, load the saved KV state sharing the longest beginning
        with this prompt (when it beats the live cache); after it, keep this prompt's state.
        Yields the prompt's tokens. A stopped run (:mod:`sunar.cancel`) starts no more work."""
        raise_if_stopped()
        with self._lock:
            prompt = self._prompt_tokens(messages)
            if len(prompt) >= self.llama.n_ctx():  # prompts are never cut: say so instead of llama.cpp's ValueError
                raise SunarError(
                    f"the prompt needs {len(prompt)} tokens, more than the model's context of {self.llama.n_ctx()}; "
                    "ask a shorter question, or use fewer or shorter documents (--set batch_size=N --set evidence=N)"
                )
            if self.keep_prefixes:
                self._states.restore(self.llama, prompt)
            yield prompt
            if self.keep_prefixes and keep:
                self._states.save(self.llama, prompt)

    def _grammar(self, schema: dict | None) -> Any:
        """The llama.cpp grammar of a reply's format (:func:`~sunar.prompts.structured.gbnf`), made
        once per format; None without one."""
        if not schema:
            return None
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            from llama_cpp.llama_grammar import LlamaGrammar

            self._grammars[key] = LlamaGrammar.from_string(gbnf(schema), verbose=False)
        return self._grammars[key]

    def _one(self, messages, stop, temperature, max_tokens, seed, schema=None) -> AIMessage:
        out = self.llama.create_chat_completion(
            messages=self._dicts(messages),
            temperature=temperature,
            max_tokens=max_tokens,
            stop=list(stop or []),
            seed=seed,
            grammar=self._grammar(schema),
        )
        text = out["choices"][0]["message"]["content"] or ""
        u = out.get("usage") or {}
        return AIMessage(
            content=text,
            usage_metadata={
                "input_tokens": u.get("prompt_tokens", 0),
                "output_tokens": u.get("completion_tokens", 0),
                "total_tokens": u.get("total_tokens", 0),
            },
        )

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        n = int(kwargs.get("n", 1))
        temperature = float(kwargs.get("temperature", 0.0))
        max_tokens = int(kwargs.get("max_tokens", 256))
        schema = kwargs.get("schema")
        with self._reusing_prefix(messages):
            replies = [
                self._one(messages, stop, temperature, max_tokens, self.seed + i, schema) for i in range(n)
            ]
        return ChatResult(generations=[ChatGeneration(message=r) for r in replies])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        temperature = float(kwargs.get("temperature", 0.0))
        max_tokens = int(kwargs.get("max_tokens", 256))
        with self._reusing_prefix(messages):
            produced = 0
            for part in self.llama.create_chat_completion(
                messages=self._dicts(messages),
                temperature=temperature,
                max_tokens=max_tokens,
                stop=list(stop or []),
                seed=self.seed,
                grammar=self._grammar(kwargs.get("schema")),
                stream=True,
            ):
                delta = part["choices"][0].get("delta", {}).get("content") or ""
                if not delta:
                    continue
                produced += 1
                chunk = ChatGenerationChunk(message=AIMessageChunk(content=delta))
                if run_manager:
                    run_manager.on_llm_new_token(delta, chunk=chunk)
                yield chunk
            prompt_tokens = max(0, int(self.llama.n_tokens) - produced)
        yield ChatGenerationChunk(
            message=AIMessageChunk(
                content="",
                usage_metadata={
                    "input_tokens": prompt_tokens,
                    "output_tokens": produced,
                    "total_tokens": prompt_tokens + produced,
                },
            )
        )

    def _prompt_tokens(self, messages: Sequence[BaseMessage]) -> list[int]:
        """The chat-templated prompt (ending where the assistant's reply starts) as tokens; the
        model's template is compiled once."""
        llama = self.llama
        if self._formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            self._formatter = Jinja2ChatFormatter(
                template=llama.metadata["tokenizer.chat_template"],
                eos_token=token_text(llama, llama.token_eos()),
                bos_token=token_text(llama, llama.token_bos()) if llama.token_bos() >= 0 else "",
            )
        prompt = self._formatter(messages=self._dicts(messages)).prompt
        return llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)

    def _label_tokens(self, label: str) -> frozenset[int]:
        """First token ids of a label as the reply may start it ("yes", " yes", "Yes"), cached."""
        if label not in self._label_ids:
            self._label_ids[label] = frozenset(
                self.llama.tokenize(v.encode("utf-8"), add_bos=False, special=False)[0]
                for v in (label, " " + label, label.capitalize())
            )
        return self._label_ids[label]

    def label_logprobs(self, messages: Sequence[BaseMessage], labels: Sequence[str]) -> dict[str, float]:
        """Log-probability of each label's first token as the first token of the reply. One forward
        pass over the part of the prompt not already in the KV cache (the few-shot prefix is shared)."""
        llama = self.llama
        with self._reusing_prefix(messages) as tokens:
            read_prompt(llama, tokens, len(tokens))
            logits = last_logits(llama).astype(np.float64)
        logz = float(np.log(np.exp(logits - logits.max()).sum()) + logits.max())
        scores = {}
        for label in labels:
            scores[label] = max(float(logits[t]) - logz for t in self._label_tokens(label))
        return scores

    def loglik(self, messages: Sequence[BaseMessage], continuation: str) -> float:
        """Sum of the log-probabilities of ``continuation``'s tokens as the start of the reply
        (:meth:`token_logprobs`; GenSco's candidates differ only in their last passage)."""
        return sum(logprob for _, logprob in self.token_logprobs(messages, continuation))

    def token_logprobs(self, messages: Sequence[BaseMessage], continuation: str) -> list[tuple[str, float]]:
        """Each token of ``continuation`` (its text) with its log-probability as the reply goes on
        (:func:`~sunar.models.llama_api.continuation_logprobs`), reusing the KV cache of the prefix
        shared with the previous call: right after a reply to the same prompt only the reply is read."""
        llama = self.llama
        with self._reusing_prefix(messages, keep=False) as prompt:  # its state holds rows of logits
            tail = llama.tokenize(continuation.encode("utf-8"), add_bos=False, special=False)
            if not tail:
                return []
            if len(prompt) + len(tail) > llama.n_ctx():
                raise SunarError(
                    f"the likelihood prompt needs {len(prompt) + len(tail)} tokens, more than the model's context "
                    f"of {llama.n_ctx()}; use shorter passages or a lower max_hops"
                )
            texts = [llama.detokenize([t]).decode("utf-8", errors="replace") for t in tail]
            return list(zip(texts, continuation_logprobs(llama, prompt, tail), strict=True))
