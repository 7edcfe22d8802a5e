"""Saved llama.cpp KV states of recent prompts, so a prompt that begins like an earlier one reads
only its new tokens even when other prompts came in between.

llama.cpp keeps one live KV cache: a prompt reuses the tokens it shares with the *previous* prompt
only. SUNAR interleaves prompts with long fixed beginnings (the Self-Ask worked examples, the NLI
judge's examples) with answer prompts full of documents, so each Self-Ask step used to read its
few-shot turns again. Here the state after each long prompt is kept (least recently used out first,
within a byte budget), and before a prompt the state sharing the longest beginning with it is
loaded when that beats the live cache.

The states hold the KV cells only (``llama_state_get_data``); llama-cpp-python's own
``LlamaRAMCache`` also copies a logits array of up to n_batch x n_vocab floats per state (311 MB
for Qwen2.5), which this avoids.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Prompts shorter than this are not worth a saved state.
MIN_TOKENS = 128
#: A saved state is loaded only when it covers this many more tokens than the live cache.
MIN_GAIN = 32
#: Bytes of saved states kept (about 28 kB per token for Qwen2.5-1.5B: ~35 prompts of 1,000 tokens).
CAPACITY_BYTES = 1 << 30


def common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    """Length of the longest common beginning of two token arrays."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n


@dataclass
class Saved:
    tokens: np.ndarray  # the tokens the KV cells hold
    data: bytes  # llama_state_get_data


class PrefixStates:
    """Least-recently-used store of KV states keyed by their prompt's tokens."""

    def __init__(self, capacity_bytes: int = CAPACITY_BYTES, min_tokens: int = MIN_TOKENS, min_gain: int = MIN_GAIN):
        self.capacity_bytes, self.min_tokens, self.min_gain = capacity_bytes, min_tokens, min_gain
        self.states: OrderedDict[bytes, Saved] = OrderedDict()
        self.loads = self.saves = self.tokens_saved = 0

    @property
    def size(self) -> int:
        return sum(len(s.data) for s in self.states.values())

    def best(self, tokens: np.ndarray, live: int) -> tuple[Saved, int] | None:
        """The saved state sharing the longest beginning with ``tokens``, when it beats ``live``
        (the tokens the live cache already shares) by at least ``min_gain``; with that length."""
        found, length = None, live + self.min_gain - 1
        for key, saved in self.states.items():
            n = common_prefix(saved.tokens, tokens)
            if n > length:
                found, length = key, n
        if found is None:
            return None
        self.states.move_to_end(found)
        return self.states[found], length

    def put(self, prompt: np.ndarray, saved: Saved) -> None:
        """Keep ``saved`` under its prompt; evict the least recently used beyond the budget."""
        key = prompt.tobytes()
        self.states.pop(key, None)
        self.states[key] = saved
        self.saves += 1
        while self.size > self.capacity_bytes and len(self.states) > 1:
            self.states.popitem(last=False)

    # --- llama.cpp ---------------------------------------------------------------------------

    def restore(self, llama: Any, prompt: list[int]) -> int:
        """Before evaluating ``prompt``: load the best saved state if it beats the live cache.
        Returns how many of the prompt's tokens the KV cache now holds."""
        tokens = np.asarray(prompt, dtype=np.intc)
        live = common_prefix(np.asarray(llama.input_ids[: llama.n_tokens]), tokens)
        hit = self.best(tokens, live)
        if hit is None:
            return live
        saved, length = hit
        buffer = (ctypes.c_uint8 * len(saved.data)).from_buffer_copy(saved.data)
        import llama_cpp

        llama_cpp.llama_state_set_data(llama.ctx, buffer, len(saved.data))
        llama.input_ids[: len(saved.tokens)] = saved.tokens
        llama.n_tokens = len(saved.tokens)
        self.loads += 1
        self.tokens_saved += length - live
        return length

    def save(self, llama: Any, prompt: list[int]) -> None:
        """After a call on ``prompt``: keep the KV state (prompt and reply tokens) for later."""
        if len(prompt) < self.min_tokens or llama.n_tokens < len(prompt):
            return
        import llama_cpp

        ctx = llama.ctx
        size = llama_cpp.llama_state_get_size(ctx)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_get_data(ctx, buffer, size)
        data = ctypes.string_at(buffer, written)
        self.put(np.asarray(prompt, dtype=np.intc), Saved(np.array(llama.input_ids[: llama.n_tokens], dtype=np.intc), data))
