"""The saved-prefix store of the embedded model: longest-prefix choice, the gain threshold, LRU
eviction within the byte budget. (Loading states into llama.cpp is checked with the real model in
tests/integration/test_prefix_states.py.)"""

import numpy as np

from sunar.models.kv_cache import PrefixStates, Saved, common_prefix


def toks(*xs):
    return np.asarray(xs, dtype=np.intc)


def saved(tokens, size=10):
    return Saved(toks(*tokens), b"x" * size)


def test_common_prefix():
    assert common_prefix(toks(1, 2, 3), toks(1, 2, 4)) == 2
    assert common_prefix(toks(1, 2), toks(1, 2, 3)) == 2
    assert common_prefix(toks(), toks(1)) == 0 and common_prefix(toks(5), toks(6)) == 0


def test_best_takes_the_longest_beginning_when_it_beats_the_live_cache():
    store = PrefixStates(min_gain=2)
    store.put(toks(1, 2, 3), saved([1, 2, 3, 9]))
    store.put(toks(1, 2, 3, 4, 5), saved([1, 2, 3, 4, 5, 9]))
    store.put(toks(7, 8), saved([7, 8]))
    found, n = store.best(toks(1, 2, 3, 4, 5, 6), live=0)
    assert n == 5 and list(found.tokens) == [1, 2, 3, 4, 5, 9]
    assert store.best(toks(1, 2, 3, 4, 5, 6), live=4) is None  # a gain of 1 < 2: keep the live cache
    assert store.best(toks(4, 4), live=0) is None


def test_put_replaces_the_same_prompt_and_evicts_least_recently_used():
    store = PrefixStates(capacity_bytes=25)
    store.put(toks(1), saved([1]))
    store.put(toks(2), saved([2]))
    store.best(toks(1, 0), live=-100)  # touch 1: 2 is now the oldest
    store.put(toks(3), saved([3]))
    assert [bytes(k) for k in store.states] == [toks(1).tobytes(), toks(3).tobytes()]
    store.put(toks(3), saved([3, 4], size=5))
    assert len(store.states) == 2 and store.size == 15 and store.saves == 4
