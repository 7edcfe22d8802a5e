"""The embedded model: llama.cpp on the CPU, no server (a GGUF shipped as PyPI packages, see
:mod:`sunar.models.gguf`).

A reply with a format (a JSON schema or Self-Ask's lines) is decoded under its grammar
(:func:`~sunar.prompts.structured.gbnf`).
Besides generation, it reads the model's distribution directly: label log-probabilities for the
yes/no judges and the log-likelihood of a given text for GenSco's scorer, and keeps KV states of
recent prompts (:mod:`sunar.models.kv_cache`). It uses llama-cpp-python's public ``Llama`` API and
the library's low-level C API (``llama_get_logits``, ``llama_decode``), nothing private.
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
from sunar.models import gguf
from sunar.models.kv_cache import PrefixStates, common_prefix
from sunar.models.llm import LLM
from sunar.prompts.structured import gbnf

_LOADING = threading.Lock()


@contextmanager
def _without_extra_buffer_types() -> Iterator[None]:
    """While a model loads: llama.cpp's extra CPU buffer types (AMX repacking) crash in
    ``llama_decode`` on these CPUs, and ``Llama`` has no argument for them, so its default model
    parameters are wrapped for the load alone. Harmless where AMX is absent."""
    import llama_cpp.llama_cpp as ll

    with _LOADING:
        original = ll.llama_model_default_params

        def default_params() -> Any:
            params = original()
            if hasattr(params, "use_extra_bufts"):
                params.use_extra_bufts = False
            return params

        ll.llama_model_default_params = default_params
        try:
            yield
        finally:
            ll.llama_model_default_params = original


def stop_between_tokens(llama: Any) -> None:
    """Make every generation of this ``Llama`` check its run's stop flag between two tokens
    (:func:`sunar.cancel.raise_if_stopped`), so a stopped run ends in the middle of a long reply.
    ``create_chat_completion`` takes no ``stopping_criteria``, and a logits processor runs inside a
    C callback whose exceptions are dropped; both completion paths draw their tokens from the
    public ``generate``, so that is wrapped, on this instance only. Tokens and usage are unchanged."""
    generate = llama.generate

    def checked(*args: Any, **kwargs: Any) -> Iterator[int]:
        for token in generate(*args, **kwargs):
            raise_if_stopped()
            yield token

    llama.generate = checked


def _role(message: BaseMessage) -> str:
    return {"human": "user", "ai": "assistant", "system": "system"}.get(message.type, "user")


#: Most positions whose logits one decode returns in ``loglik`` (a row is n_vocab floats: 0.6 MB
#: for Qwen2.5, so a chunk stays under 40 MB whatever the continuation's length).
LOGLIK_CHUNK = 64


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
            with _without_extra_buffer_types():
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

    def _read_prompt(self, prompt: list[int], end: int) -> None:
        """Evaluate ``prompt[:end]``, reading only what the KV cache does not hold already; the
        prompt's last token is always read again, so its logits are fresh."""
        llama = self.llama
        held = common_prefix(held_tokens(llama), np.asarray(prompt, dtype=np.intc))
        llama.n_tokens = min(held, len(prompt) - 1)  # eval() drops the KV cache past this
        llama.eval(prompt[llama.n_tokens : end])

    def label_logprobs(self, messages: Sequence[BaseMessage], labels: Sequence[str]) -> dict[str, float]:
        """Log-probability of each label's first token as the first token of the reply. One forward
        pass over the part of the prompt not already in the KV cache (the few-shot prefix is shared)."""
        llama = self.llama
        with self._reusing_prefix(messages) as tokens:
            self._read_prompt(tokens, len(tokens))
            logits = last_logits(llama).astype(np.float64)
        logz = float(np.log(np.exp(logits - logits.max()).sum()) + logits.max())
        scores = {}
        for label in labels:
            scores[label] = max(float(logits[t]) - logz for t in self._label_tokens(label))
        return scores

    def loglik(self, messages: Sequence[BaseMessage], continuation: str) -> float:
        """Sum of the log-probabilities of ``continuation``'s tokens as the start of the reply.

        The prompt is evaluated as in :meth:`label_logprobs`, reusing the KV cache of the prefix
        shared with the previous call (GenSco's candidates differ only in their last passage), up
        to its last token. Then one decode per chunk of the prompt's last token and every
        continuation token but the last, asking llama.cpp for the logits of every position: row
        j holds the distribution of continuation token j. ``_input_ids``/``n_tokens`` are kept
        equal to what the KV cache holds, so later calls (and generation) still reuse the prefix.
        """
        llama = self.llama
        with self._reusing_prefix(messages, keep=False) as prompt:  # its state holds rows of logits
            tail = llama.tokenize(continuation.encode("utf-8"), add_bos=False, special=False)
            if not tail:
                return 0.0
            if len(prompt) + len(tail) > llama.n_ctx():
                raise SunarError(
                    f"the likelihood prompt needs {len(prompt) + len(tail)} tokens, more than the model's context "
                    f"of {llama.n_ctx()}; use shorter passages or a lower max_hops"
                )
            self._read_prompt(prompt, len(prompt) - 1)
            fed = [prompt[-1], *tail[:-1]]
            total = 0.0
            for start in range(0, len(fed), min(LOGLIK_CHUNK, llama.n_batch)):
                chunk = fed[start : start + min(LOGLIK_CHUNK, llama.n_batch)]
                past = llama.n_tokens
                rows = decode_all_logits(llama, chunk, past)
                llama.input_ids[past : past + len(chunk)] = chunk
                llama.n_tokens += len(chunk)
                for j, target in enumerate(tail[start : start + len(chunk)]):
                    row = rows[j].astype(np.float64)
                    top = row.max()
                    total += float(row[target] - top - np.log(np.exp(row - top).sum()))
        return total


# --- the few reads of llama.cpp state that ``Llama`` has no method for, through the C API -----


def held_tokens(llama: Any) -> np.ndarray:
    """The tokens the live KV cache holds."""
    return np.asarray(llama.input_ids[: llama.n_tokens])


def token_text(llama: Any, token: int) -> str:
    """A token's text, special tokens included (for the chat template's eos/bos)."""
    import llama_cpp.llama_cpp as ll

    return ll.llama_vocab_get_text(ll.llama_model_get_vocab(llama.model), token).decode("utf-8", errors="replace")


def last_logits(llama: Any) -> np.ndarray:
    """The logits after the last evaluated token (a view into llama.cpp's buffer)."""
    import llama_cpp.llama_cpp as ll

    return np.ctypeslib.as_array(ll.llama_get_logits(llama.ctx), shape=(llama.n_vocab(),))


def decode_all_logits(llama: Any, tokens: Sequence[int], n_past: int) -> np.ndarray:
    """Decode ``tokens`` at positions ``n_past``.. and return the logits of every one of them
    (``Llama.eval`` keeps only the last row unless the whole context keeps logits)."""
    import llama_cpp.llama_cpp as ll

    batch = ll.llama_batch_init(len(tokens), 0, 1)
    try:
        batch.n_tokens = len(tokens)
        for i, token in enumerate(tokens):
            batch.token[i], batch.pos[i], batch.n_seq_id[i], batch.logits[i] = token, n_past + i, 1, True
            batch.seq_id[i][0] = 0
        if ll.llama_decode(llama.ctx, batch) != 0:
            raise SunarError(f"llama.cpp could not decode {len(tokens)} tokens at position {n_past}")
        return np.ctypeslib.as_array(ll.llama_get_logits(llama.ctx), shape=(len(tokens), llama.n_vocab())).copy()
    finally:
        ll.llama_batch_free(batch)


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

                with _without_extra_buffer_types():
                    self._reading = llama_cpp.Llama(
                        model_path=self.chat.model_path, embedding=True, n_ctx=1024, n_threads=os.cpu_count() or 2, verbose=False
                    )
            vectors = self._reading.embed(text, truncate=True)
        last = vectors[-1] if vectors and isinstance(vectors[0], list) else vectors
        return [float(v) for v in last]
