"""What the embedded model asks of the llama.cpp library beyond ``Llama``'s own methods: a load
that leaves out the CPU buffer types that crash here, a stop flag read between two tokens, and the
few reads of llama.cpp's state (the tokens the KV cache holds, a token's text, logits) through the
library's public C API (``llama_get_logits``, ``llama_decode``), nothing private; and with them the
log-likelihood of a continuation, read from those logits.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from sunar.cancel import raise_if_stopped
from sunar.errors import SunarError
from sunar.models.kv_cache import common_prefix

_LOADING = threading.Lock()


@contextmanager
def without_extra_buffer_types() -> Iterator[None]:
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


#: Most positions whose logits one decode returns in :func:`continuation_logprobs` (a row is n_vocab floats: 0.6 MB
#: for Qwen2.5, so a chunk stays under 40 MB whatever the continuation's length).
LOGLIK_CHUNK = 64


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


def read_prompt(llama: Any, prompt: list[int], end: int) -> None:
    """Evaluate ``prompt[:end]``, reading only what the KV cache does not hold already; the
    prompt's last token is always read again, so its logits are fresh."""
    held = common_prefix(held_tokens(llama), np.asarray(prompt, dtype=np.intc))
    llama.n_tokens = min(held, len(prompt) - 1)  # eval() drops the KV cache past this
    llama.eval(prompt[llama.n_tokens : end])


def continuation_logprobs(llama: Any, prompt: list[int], tail: list[int]) -> list[float]:
    """The log-probability of each token of ``tail`` right after ``prompt``, in order.

    The prompt is read up to its last token (:func:`read_prompt`, reusing the KV cache of the
    prefix it shares with the previous call). Then one decode per chunk of the prompt's last token
    and every continuation token but the last, asking llama.cpp for the logits of every position:
    row j holds the distribution of continuation token j. ``input_ids``/``n_tokens`` are kept
    equal to what the KV cache holds, so later calls (and generation) still reuse the prefix."""
    read_prompt(llama, prompt, len(prompt) - 1)
    fed = [prompt[-1], *tail[:-1]]
    out: list[float] = []
    for start in range(0, len(fed), min(LOGLIK_CHUNK, llama.n_batch)):
        chunk = fed[start : start + min(LOGLIK_CHUNK, llama.n_batch)]
        past = llama.n_tokens
        rows = decode_all_logits(llama, chunk, past)
        llama.input_ids[past : past + len(chunk)] = chunk
        llama.n_tokens += len(chunk)
        for j, target in enumerate(tail[start : start + len(chunk)]):
            row = rows[j].astype(np.float64)
            top = row.max()
            out.append(float(row[target] - top - np.log(np.exp(row - top).sum())))
    return out
