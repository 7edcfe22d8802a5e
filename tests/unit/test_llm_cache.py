"""The persistent LLM call cache behind RecordedLLM."""

import pytest
from langchain_core.messages import HumanMessage

from fakes import counted
from scripted import ScriptedLLM
from sunar.errors import SunarError
from sunar.models.llm_cache import CallCache
from sunar.models.recorded import RecordedLLM

MESSAGES = [HumanMessage("Question: Who directed Ronnie Rocket?")]


def scripted():
    return ScriptedLLM(lambda prompt, i: "yes" if "judge" in prompt else f"David Lynch #{i}")


def test_generate_is_computed_once_and_counted_with_its_cost(tmp_path):
    inner = scripted()
    cache = CallCache(tmp_path / "c.sqlite")
    llm = RecordedLLM(inner, cache)
    first, u1 = counted(lambda: llm.generate(MESSAGES, max_tokens=8))
    second, u2 = counted(lambda: llm.generate(MESSAGES, max_tokens=8))
    assert first.content == second.content == "David Lynch #0"
    assert len(inner.calls) == 1
    assert (u1["llm_calls"], u1["cached_calls"]) == (1, 0)
    assert (u2["llm_calls"], u2["cached_calls"]) == (1, 1)
    assert u2["prompt_tokens"] == u1["prompt_tokens"] > 0  # tokens are those of the original call
    assert u2["llm_seconds"] == u2["cached_seconds"] == pytest.approx(u1["llm_seconds"])
    # other parameters are another call
    llm.generate(MESSAGES, max_tokens=9)
    assert len(inner.calls) == 2


def test_samples_are_cached_by_index(tmp_path):
    inner = scripted()
    llm = RecordedLLM(inner, CallCache(tmp_path / "c.sqlite"))
    three = [r.content for r in llm.sample(MESSAGES, 3, temperature=0.3)]
    assert len(inner.calls) == 3
    five, usage = counted(lambda: [r.content for r in llm.sample(MESSAGES, 5, temperature=0.3)])
    assert five[:3] == three
    assert len(inner.calls) == 5  # only samples 4 and 5 were generated
    assert (usage["llm_calls"], usage["cached_calls"]) == (5, 3)


def test_judgements_persist_across_instances(tmp_path):
    path = tmp_path / "c.sqlite"
    first = RecordedLLM(scripted(), CallCache(path)).judge([HumanMessage("judge this")], ["yes", "no"])
    again = scripted()
    second, usage = counted(lambda: RecordedLLM(again, CallCache(path)).judge([HumanMessage("judge this")], ["yes", "no"]))
    assert first == second == {"yes": 0.0, "no": float("-inf")}
    assert again.calls == [] and usage["judge_calls"] == 1 and usage["cached_calls"] == 1


def test_without_a_cache_every_call_reaches_the_model():
    inner = scripted()
    llm = RecordedLLM(inner)
    llm.generate(MESSAGES)
    llm.generate(MESSAGES)
    assert len(inner.calls) == 2


def test_a_file_that_is_not_a_cache_is_one_clear_error(tmp_path):
    bad = tmp_path / "c.sqlite"
    bad.write_text("not a database at all, just text " * 100)
    with pytest.raises(SunarError, match="not an LLM call cache"):
        CallCache(bad)


def test_threads_asking_the_same_call_at_once_compute_it_once(tmp_path):
    """Parallel chains that ask one call together get the one result a replay would read."""
    import threading
    import time

    computed = []

    def slow(prompt, i):
        computed.append(prompt)
        time.sleep(0.2)
        return "yes" if "judge" in prompt else f"answer {len(computed)}"

    inner = ScriptedLLM(slow)
    llm = RecordedLLM(inner, CallCache(tmp_path / "c.sqlite"))
    calls = {
        "generate": lambda: llm.generate(MESSAGES, max_tokens=8).content,
        "sample": lambda: [r.content for r in llm.sample(MESSAGES, 2, temperature=0.3)],
        "judge": lambda: llm.judge([HumanMessage("judge this")], ["yes", "no"]),
    }
    for name, call in calls.items():
        computed.clear()
        results, start = [], threading.Barrier(3)

        def ask(call=call, start=start, results=results):
            start.wait()
            results.append(call())

        threads = [threading.Thread(target=ask) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(computed) == (2 if name == "sample" else 1), name
        assert results[0] == results[1] == results[2], name
    assert llm.cache._claims == {}  # nothing left held
