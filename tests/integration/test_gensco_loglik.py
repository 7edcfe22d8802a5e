"""GenSco's scorer on the real embedded model: log-likelihoods of a given continuation from
llama.cpp, checked against a token-by-token computation and for sense."""

import math

import numpy as np
import pytest

from sunar.baselines.gensco.prompts import score_messages
from sunar.models.providers import make_llm

PASSAGES = [
    {"title": "Ronnie Rocket", "text": "Ronnie Rocket is an unfinished film project written by David Lynch, who also meant to direct it."},
    {"title": "David Lynch", "text": "David Lynch was an American filmmaker, born in Missoula, Montana, in 1946."},
]
SENSIBLE = "Where was David Lynch born?"
NONSENSE = "Purple kettles argue quietly beneath seventeen moons?"


def token_by_token(chat, messages, continuation: str) -> float:
    """The same sum another way: the whole prompt evaluated afresh, then one decode per
    continuation token, reading the last position's logits each time."""
    llama = chat.llama
    prompt = chat._prompt_tokens(messages)
    tail = llama.tokenize(continuation.encode("utf-8"), add_bos=False, special=False)
    llama.n_tokens = 0
    llama.eval(prompt)
    total = 0.0
    for token in tail:
        row = np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),)).astype(np.float64)
        top = row.max()
        total += float(row[token] - top - math.log(np.exp(row - top).sum()))
        llama.eval([token])
    return total


@pytest.mark.slow
def test_embedded_loglik_is_the_sum_of_token_log_probabilities():
    llm = make_llm("embedded:qwen2.5-1.5b")
    messages = score_messages(PASSAGES)
    before = llm.generate(messages, max_tokens=16).content

    sensible = llm.loglik(messages, SENSIBLE)
    nonsense = llm.loglik(messages, NONSENSE)
    assert sensible < 0 and nonsense < sensible - 10  # the question the passage answers is far likelier
    # the prefix now in the KV cache is reused: the same value again, and after another prompt
    assert llm.loglik(messages, SENSIBLE) == pytest.approx(sensible, abs=1e-6)
    other = score_messages(PASSAGES[:1])
    assert llm.loglik(other, "Who wrote Ronnie Rocket?") > llm.loglik(other, NONSENSE)
    assert llm.loglik(messages, SENSIBLE) == pytest.approx(sensible, abs=1e-6)
    assert llm.loglik(messages, "") == 0.0
    # token by token: each token's text, in order, and log-probabilities that add up to the sum
    tokens = llm.scoring.token_logprobs(messages, SENSIBLE)
    assert "".join(text for text, _ in tokens) == SENSIBLE and all(p <= 0 for _, p in tokens)
    assert sum(p for _, p in tokens) == pytest.approx(sensible, abs=1e-6)
    assert llm.scoring.token_logprobs(messages, "") == []
    # the scorer has its own context: the generator's stays as it was
    assert llm.scoring is not llm.chat and llm.generate(messages, max_tokens=16).content == before
    # on one context, generation still reads a consistent KV cache after log-likelihood calls
    assert llm.chat.loglik(messages, SENSIBLE) == pytest.approx(sensible, abs=1e-6)
    assert llm.chat.loglik(other, NONSENSE) < 0
    assert llm.generate(messages, max_tokens=16).content == before

    # Token by token agrees up to float32 kernel differences between batch sizes (measured about
    # 0.03 nats per token); a misaligned row would be off by several nats per token.
    for text in (SENSIBLE, NONSENSE):
        n = len(llm.chat.llama.tokenize(text.encode(), add_bos=False, special=False))
        stepwise = token_by_token(llm.scoring, messages, text)
        assert llm.loglik(messages, text) == pytest.approx(stepwise, abs=0.1 * n)
