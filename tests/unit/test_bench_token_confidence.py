"""The token-confidence benchmark (benchmarks/bench_token_confidence.py): each dev question's gold steps read
greedily, the answer's own token log-probabilities and the samples' agreement as signals of a misread step."""

import json
from types import SimpleNamespace

import pytest
from langchain_core.messages import AIMessage

from benchmarks.bench_reading_demos import pages_for
from benchmarks.bench_token_confidence import SIGNALS, answer_tokens, largest_share, read_scored, summary
from sunar.configuration import Configuration
from sunar.prompts.answer import answer_messages
from sunar.prompts.structured import as_reply
from tests.unit.test_bench_reading_demos import CORPUS, steps


def tokens_of(reply, logprob):
    """The reply cut into tokens of up to four characters, each given ``logprob(text)``."""
    return [(reply[i : i + 4], logprob(reply[i : i + 4])) for i in range(0, len(reply), 4)]


def test_only_the_tokens_over_the_answers_characters_count():
    reply = as_reply(answer="Missoula, Montana")  # {"answer": "Missoula, Montana"}
    tokens = tokens_of(reply, lambda t: -float(len(reply.split(t)[0])))  # each token's log-probability: minus where it starts
    # '{"an' 'swer' '": "' 'Miss' 'oula' ', Mo' 'ntan' 'a"}': the answer's characters are in the last five, none in the JSON before
    assert answer_tokens(tokens, reply, "Missoula, Montana") == [-12.0, -16.0, -20.0, -24.0, -28.0]
    # an answer the reply does not spell (read_answer changed it) is scored over the whole reply
    assert answer_tokens(tokens, reply, "Helena") == [p for _, p in tokens]
    quoted = as_reply(answer='The "Sun"')
    assert answer_tokens(tokens_of(quoted, lambda t: -2.0 if '"' in t or "Sun" in t else -0.5), quoted, 'The "Sun"')  # JSON escapes


def test_the_largest_share_groups_answers_that_hold_one_another():
    assert largest_share(["Missoula", "Missoula, Montana", "missoula", "Helena"]) == 0.75
    assert largest_share(["Rome", "Paris", "Oslo", "Bern"]) == 0.25
    assert largest_share(["unknown", "unknown"]) == 1.0


class Reader:
    """A scripted embedded model: a greedy reply, the reply's tokens, and samples; what it was asked."""

    def __init__(self, greedy, samples, logprob):
        self.greedy, self.samples, self.logprob, self.asked = greedy, samples, logprob, []
        self.chat = SimpleNamespace(token_logprobs=self.token_logprobs)

    def generate(self, messages, *, temperature, **call):
        self.asked.append(("generate", messages, temperature, call.get("schema") is not None))
        return AIMessage(as_reply(answer=self.greedy))

    def token_logprobs(self, messages, continuation):
        self.asked.append(("tokens", messages, continuation))
        return tokens_of(continuation, self.logprob)

    def sample(self, messages, m, *, temperature, **call):
        self.asked.append(("sample", messages, temperature, m))
        return [AIMessage(as_reply(answer=a)) for a in self.samples[:m]]


def test_a_step_is_read_greedily_its_reply_scored_and_sampled_on_the_same_prompt():
    step = steps()[1]  # "Where was David Lynch born?", golds Missoula / Missoula, Montana
    llm = Reader("Missoula, Montana", ["Missoula", "Helena", "Missoula, Montana"], lambda t: -0.5)
    cfg = Configuration(profile="cpu")
    row = read_scored(step, CORPUS, llm, cfg)
    prompt = answer_messages(step["question"], pages_for(step, CORPUS))  # the gold page among distractors
    assert [a[0] for a in llm.asked] == ["generate", "tokens", "sample"] and all(a[1] == prompt for a in llm.asked)
    assert llm.asked[0][2] == 0.0 and llm.asked[0][3] is True  # greedy, under the answer's schema
    assert llm.asked[1][2] == as_reply(answer="Missoula, Montana")  # the reply itself is scored
    assert llm.asked[2][2] == cfg.temperature and llm.asked[2][3] == cfg.hop_samples == 3
    assert row["answer"] == "Missoula, Montana" and row["cover_em"] is True and row["em"] is True
    assert row["signals"] == {"first": -0.5, "least": -0.5, "mean": -0.5, "agreement": 0.75}
    wrong = read_scored(step, CORPUS, Reader("Eraserhead", ["Eraserhead"] * 3, lambda t: -3.0 if "Eras" in t else -0.1), cfg)
    assert wrong["cover_em"] is False and wrong["signals"]["least"] == -3.0 and wrong["signals"]["agreement"] == 1.0


def row(last, right, least, agreement):
    return {"last": last, "cover_em": right, "em": right,
            "signals": {"first": least, "least": least, "mean": least / 2, "agreement": agreement}}


def test_the_summary_ranks_right_above_wrong_for_each_signal_and_where_the_answers_agreed():
    rows = [row(True, True, -0.1, 1.0), row(True, True, -0.2, 0.75), row(True, False, -2.0, 1.0), row(True, False, -0.3, 0.5),
            row(False, True, -0.1, 1.0)]
    got = summary(rows)
    last = got["last steps"]["cover_em"]
    assert (last["read"], last["right"]) == (4, 2)
    assert last["auroc"]["least"] == 1.0 and last["auroc"]["agreement"] == pytest.approx(0.625)
    assert (last["answers agreed"], last["right there"]) == (2, 1) and last["auroc there"]["least"] == 1.0
    assert last["auroc there"]["agreement"] == 0.5  # all alike there: the sets cannot rank them
    first = got["first steps"]["em"]
    assert first["read"] == 1 and first["auroc"] == dict.fromkeys(SIGNALS) and first["mean interval"] is None  # all right: no AUROC
    low, high = last["mean interval"]  # resampled readings: an interval around the AUROC
    assert 0.0 <= low <= last["auroc"]["mean"] <= high <= 1.0
    json.dumps(got)  # stored as JSON


def test_the_stored_summary_is_a_table_of_each_kind_and_metric(tmp_path):
    from benchmarks.results_stored import token_confidence_table

    rows = [row(True, True, -0.1, 1.0), row(True, False, -2.0, 1.0), row(True, False, -0.3, 0.5), row(False, True, -0.1, 1.0)]
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"summary": summary(rows)}))
    lines = token_confidence_table(path).splitlines()
    assert lines[2] == "| first steps | cover-EM | 1 (1) | - | - | - | - | 1 (1) | - | - | - |"
    assert lines[4] == "| last steps | cover-EM | 3 (1) | 1.00 | 1.00 | 1.00 [1.00, 1.00] | 0.75 | 2 (1) | 1.00 | 1.00 | 1.00 [1.00, 1.00] |"
