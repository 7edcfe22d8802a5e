"""Generative LLM providers behind one narrow interface.

Nodes only see :class:`LLM`: ``generate`` (one answer), ``sample`` (m answers to one prompt) and
``judge`` (log-probabilities of a few label words, for the LLM-as-NLI-judge). Each provider wraps a
LangChain chat model, so LangGraph's ``stream_mode="messages"`` streams tokens from inside nodes.

Providers, selected by a string:
  ``ollama:<model>``     a local Ollama server (the product default, ``ollama:llama3.1``)
  ``embedded:<name>``    llama.cpp with a GGUF shipped as PyPI packages (see :mod:`sunar.models.gguf`)
  ``auto``               Ollama when its server answers and has llama3.1, else the embedded model
Scripted models for tests live in :mod:`sunar.models.fake`.
"""

from __future__ import annotations

import logging
import math
import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import numpy as np
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import RunnableConfig
from pydantic import PrivateAttr

from sunar.errors import ModelUnavailable, SunarError
from sunar.models import gguf
from sunar.models.kv_cache import PrefixStates, common_prefix

log = logging.getLogger("sunar")

DEFAULT_OLLAMA_MODEL = "llama3.1"
OLLAMA_URL = os.environ.get("OLLAMA_HOST", "http://127.0.0.1:11434")
if not OLLAMA_URL.startswith("http"):
    OLLAMA_URL = "http://" + OLLAMA_URL


class LLM:
    """What the graph needs from a generative model."""

    name: str
    chat: BaseChatModel

    def generate(
        self,
        messages: Sequence[BaseMessage],
        *,
        temperature: float = 0.0,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        config: RunnableConfig | None = None,
    ) -> AIMessage:
        """One completion. Token usage is in ``usage_metadata`` of the returned message."""
        raise NotImplementedError

    def sample(
        self,
        messages: Sequence[BaseMessage],
        m: int,
        *,
        temperature: float,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
    ) -> list[AIMessage]:
        """m independent completions of the same prompt (the paper's answer sampling)."""
        raise NotImplementedError

    def judge(self, messages: Sequence[BaseMessage], labels: Sequence[str]) -> dict[str, float]:
        """Log-probability of each label as the reply (greedy pick gets 0, others -inf if the
        backend has no log-probabilities)."""
        reply = self.generate(messages, temperature=0.0, max_tokens=4).content
        return pick_label(str(reply), labels)

    def loglik(self, messages: Sequence[BaseMessage], continuation: str) -> float:
        """Sum of the log-probabilities of ``continuation``'s tokens as the beginning of the
        assistant's reply to ``messages`` (GenSco's scorer). Only backends that can read the
        model's distribution over a given text implement it."""
        raise ModelUnavailable(
            f"{self.name} cannot return token log-probabilities of a given text; "
            "set likelihood_llm to an embedded:<name> model (e.g. --set likelihood_llm=embedded:qwen2.5-1.5b)"
        )


def pick_label(reply: str, labels: Sequence[str]) -> dict[str, float]:
    """Map a free-text reply onto labels: the first label the reply starts with wins."""
    text = reply.strip().lower().lstrip("*\"' ")
    for label in labels:
        if text.startswith(label.lower()):
            return {lab: (0.0 if lab == label else -math.inf) for lab in labels}
    return {lab: -math.inf for lab in labels}


def usage(message: AIMessage) -> tuple[int, int]:
    """(prompt tokens, generated tokens) of a reply, 0 where the backend reported none."""
    meta = message.usage_metadata or {}
    return int(meta.get("input_tokens", 0)), int(meta.get("output_tokens", 0))


# --------------------------------------------------------------------------------------------
# Ollama
# --------------------------------------------------------------------------------------------


def _ollama_error(exc: BaseException, model: str) -> ModelUnavailable:
    text = str(exc)
    if "not found" in text.lower() and "model" in text.lower():
        return ModelUnavailable(f"Ollama has no model '{model}'; run: ollama pull {model}")
    return ModelUnavailable(
        f"Ollama server not reachable at {OLLAMA_URL}; start it with 'ollama serve' "
        "or use --llm embedded:qwen2.5-1.5b"
    )


def ollama_models(url: str | None = None, timeout: float = 2.0) -> list[str] | None:
    """Names of the models the Ollama server has, or None when no server answers."""
    import ollama

    url = url or OLLAMA_URL
    try:
        listing = ollama.Client(host=url, timeout=timeout).list()
    except Exception:  # connection refused, timeout, bad answer: no usable server
        return None
    return [m.model for m in listing.models if m.model]


def ollama_has(model: str, names: Sequence[str]) -> bool:
    wanted = model if ":" in model else f"{model}:latest"
    return wanted in names or model in names


class OllamaLLM(LLM):
    """A model served by a local Ollama server (through langchain-ollama). It has no ``loglik``:
    Ollama returns log-probabilities of the tokens it generates, never of a given text."""

    def __init__(self, model: str = DEFAULT_OLLAMA_MODEL, url: str | None = None):
        from langchain_ollama import ChatOllama

        url = url or OLLAMA_URL
        self.name = f"ollama:{model}"
        self.model = model
        self.chat = ChatOllama(model=model, base_url=url, temperature=0.0)

    def _bound(self, temperature: float, max_tokens: int, stop: Sequence[str] | None) -> Any:
        return self.chat.model_copy(
            update={"temperature": temperature, "num_predict": max_tokens, "stop": list(stop or []) or None}
        )

    def generate(self, messages, *, temperature=0.0, max_tokens=256, stop=None, config=None):
        try:
            return self._bound(temperature, max_tokens, stop).invoke(list(messages), config)
        except (ConnectionError, OSError) as exc:
            raise _ollama_error(exc, self.model) from exc
        except Exception as exc:
            if type(exc).__name__ in {"ConnectError", "ResponseError", "ConnectTimeout"}:
                raise _ollama_error(exc, self.model) from exc
            raise

    def sample(self, messages, m, *, temperature, max_tokens=256, stop=None):
        # Ollama has no `n`: the m requests go out concurrently and the server batches them.
        with ThreadPoolExecutor(max_workers=max(1, m)) as pool:
            return list(
                pool.map(
                    lambda _: self.generate(
                        messages, temperature=temperature, max_tokens=max_tokens, stop=stop
                    ),
                    range(m),
                )
            )


# --------------------------------------------------------------------------------------------
# Embedded llama.cpp
# --------------------------------------------------------------------------------------------

_AMX_PATCHED = False


def _patch_llama_cpp_for_amx() -> None:
    """llama.cpp's extra CPU buffer types (AMX) crash in ``llama_decode`` on these CPUs; the
    model loads with them turned off. Harmless where AMX is absent."""
    global _AMX_PATCHED
    if _AMX_PATCHED:
        return
    import llama_cpp.llama_cpp as ll

    original = ll.llama_model_default_params

    def default_params() -> Any:
        params = original()
        if hasattr(params, "use_extra_bufts"):
            params.use_extra_bufts = False
        return params

    ll.llama_model_default_params = default_params
    _AMX_PATCHED = True


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
            _patch_llama_cpp_for_amx()
            self._llama = llama_cpp.Llama(
                model_path=self.model_path,
                n_ctx=self.n_ctx,
                n_threads=self.n_threads or os.cpu_count() or 2,
                seed=self.seed,
                logits_all=False,
                verbose=False,
            )
        return self._llama

    @staticmethod
    def _dicts(messages: Sequence[BaseMessage]) -> list[dict[str, str]]:
        return [{"role": _role(m), "content": str(m.content)} for m in messages]

    @contextmanager
    def _reusing_prefix(self, messages: Sequence[BaseMessage], keep: bool = True) -> Iterator[list[int]]:
        """Hold the model; before the work, load the saved KV state sharing the longest beginning
        with this prompt (when it beats the live cache); after it, keep this prompt's state.
        Yields the prompt's tokens."""
        with self._lock:
            prompt = self._prompt_tokens(messages)
            if self.keep_prefixes:
                self._states.restore(self.llama, prompt)
            yield prompt
            if self.keep_prefixes and keep:
                self._states.save(self.llama, prompt)

    def _one(self, messages, stop, temperature, max_tokens, seed) -> AIMessage:
        out = self.llama.create_chat_completion(
            messages=self._dicts(messages),
            temperature=temperature,
            max_tokens=max_tokens,
            stop=list(stop or []),
            seed=seed,
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
        with self._reusing_prefix(messages):
            replies = [
                self._one(messages, stop, temperature, max_tokens, self.seed + i) for i in range(n)
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
                eos_token=llama._model.token_get_text(llama.token_eos()),
                bos_token=llama._model.token_get_text(llama.token_bos()) if llama.token_bos() >= 0 else "",
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
        held = common_prefix(np.asarray(llama._input_ids), np.asarray(prompt, dtype=np.intc))
        llama.n_tokens = min(held, len(prompt) - 1)  # eval() drops the KV cache past this
        llama.eval(prompt[llama.n_tokens : end])

    def label_logprobs(self, messages: Sequence[BaseMessage], labels: Sequence[str]) -> dict[str, float]:
        """Log-probability of each label's first token as the first token of the reply. One forward
        pass over the part of the prompt not already in the KV cache (the few-shot prefix is shared)."""
        llama = self.llama
        with self._reusing_prefix(messages) as tokens:
            self._read_prompt(tokens, len(tokens))
            logits = np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),)).astype(np.float64)
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
            total, n_vocab = 0.0, llama.n_vocab()
            for start in range(0, len(fed), min(LOGLIK_CHUNK, llama.n_batch)):
                chunk = fed[start : start + min(LOGLIK_CHUNK, llama.n_batch)]
                past = llama.n_tokens
                llama._batch.set_batch(batch=chunk, n_past=past, logits_all=True)
                llama._ctx.decode(llama._batch)
                llama.input_ids[past : past + len(chunk)] = chunk
                llama.n_tokens += len(chunk)
                rows = np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(len(chunk), n_vocab))
                for j, target in enumerate(tail[start : start + len(chunk)]):
                    row = rows[j].astype(np.float64)
                    top = row.max()
                    total += float(row[target] - top - np.log(np.exp(row - top).sum()))
        return total


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

    @property
    def scoring(self) -> EmbeddedChatModel:
        """The llama.cpp context that computes log-likelihoods."""
        with self._scoring_lock:
            if self._scoring is None:
                self._scoring = EmbeddedChatModel(model_path=self.chat.model_path, n_ctx=self.chat.n_ctx)
            return self._scoring

    def generate(self, messages, *, temperature=0.0, max_tokens=256, stop=None, config=None):
        msg = self.chat.invoke(
            list(messages), config, temperature=temperature, max_tokens=max_tokens, stop=list(stop or []) or None
        )
        return AIMessage(content=str(msg.content), usage_metadata=msg.usage_metadata)

    def sample(self, messages, m, *, temperature, max_tokens=256, stop=None):
        result = self.chat.generate(
            [list(messages)], n=m, temperature=temperature, max_tokens=max_tokens, stop=list(stop or []) or None
        )
        return [g.message for g in result.generations[0]]  # type: ignore[attr-defined]

    def judge(self, messages, labels):
        return self.chat.label_logprobs(messages, labels)

    def loglik(self, messages, continuation):
        return self.scoring.loglik(messages, continuation)


# --------------------------------------------------------------------------------------------
# Selection
# --------------------------------------------------------------------------------------------


def resolve_llm(spec: str) -> tuple[str, str]:
    """Turn 'auto' into a concrete spec. Returns (spec, reason)."""
    if spec != "auto":
        return spec, "configured"
    names = ollama_models()
    if names is None:
        return f"embedded:{gguf.DEFAULT_EMBEDDED}", f"no Ollama server at {OLLAMA_URL}"
    if not ollama_has(DEFAULT_OLLAMA_MODEL, names):
        return f"embedded:{gguf.DEFAULT_EMBEDDED}", f"Ollama has no {DEFAULT_OLLAMA_MODEL} model"
    return f"ollama:{DEFAULT_OLLAMA_MODEL}", "Ollama server answers and has the model"


def make_llm(spec: str) -> LLM:
    """Build the LLM named by ``spec`` (see the module docstring)."""
    resolved, reason = resolve_llm(spec)
    if spec == "auto":
        log.info("llm auto -> %s (%s)", resolved, reason)
    kind, _, name = resolved.partition(":")
    if kind == "ollama":
        model = name or DEFAULT_OLLAMA_MODEL
        names = ollama_models()
        if names is None:
            raise _ollama_error(ConnectionError(), model)
        if not ollama_has(model, names):
            raise ModelUnavailable(f"Ollama has no model '{model}'; run: ollama pull {model}")
        return OllamaLLM(model)
    if kind == "embedded":
        return EmbeddedLLM(name or gguf.DEFAULT_EMBEDDED)
    if kind == "scripted":
        from sunar.models.fake import ScriptedLLM

        return ScriptedLLM.named(name)
    raise ModelUnavailable(f"unknown llm '{spec}'; use auto, ollama:<model> or embedded:<name>")
