"""Saved KV prefix states on a real embedded model: after other prompts came in between, a
prompt with a known beginning loads its state, reads fewer tokens, and gives the same reply. The
0.5B model, for speed: the states are saved and loaded by the same code for either model."""

import pytest

from sunar.models.providers import make_llm
from sunar.prompts.answer import answer_messages
from sunar.prompts.nli import nli_messages
from sunar.prompts.self_ask import self_ask_messages

DOCS = [
    {"title": "Ronnie Rocket", "text": "Ronnie Rocket is an unfinished film project written by David Lynch."},
    {"title": "David Lynch", "text": "David Lynch was an American filmmaker, born in Missoula, Montana, in 1946."},
]
QUESTION = "Where was the director of film Ronnie Rocket born?"


def interleaved(llm) -> list:
    """Self-Ask, an answer prompt, an NLI judgement, then Self-Ask and the judge again."""
    out = [llm.generate(self_ask_messages(QUESTION, []), max_tokens=16).content]
    out.append(llm.generate(answer_messages("Who directed Ronnie Rocket?", DOCS), max_tokens=8).content)
    out.append(round(llm.judge(nli_messages(QUESTION, "Missoula", "Missoula, Montana"), ("yes", "no"))["yes"], 1))
    out.append(llm.generate(self_ask_messages(QUESTION, [("Who directed Ronnie Rocket?", "David Lynch")]), max_tokens=16).content)
    out.append(round(llm.judge(nli_messages(QUESTION, "Helena", "Missoula"), ("yes", "no"))["yes"], 1))
    return out


@pytest.mark.slow
def test_saved_prefixes_are_reused_and_change_nothing():
    llm = make_llm("embedded:qwen2.5-0.5b")
    chat = llm.chat
    chat.keep_prefixes = False
    plain = interleaved(llm)
    assert chat._states.saves == 0
    chat.keep_prefixes = True
    chat.llama.n_tokens = 0  # start from an empty live cache, as the first run did
    kept = interleaved(llm)
    states = chat._states
    # Self-Ask's worked examples and the judge's examples came back after other prompts.
    assert states.loads >= 2 and states.tokens_saved > 500
    assert kept == plain
