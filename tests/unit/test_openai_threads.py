"""Conversation threads on the OpenAI-compatible endpoint, in this process on a SQLite checkpointer
with the scripted models of tests/fakes.py: how a request names its thread, the client's
conversation as the thread's messages, and a run stopped half-way (its client left, or the disk
filled) resumed by the same question from its last finished step, with no step computed twice.
tests/integration/test_postgres_threads.py does it across two server processes on PostgreSQL."""

import json

import httpx
import pytest
from langchain_core.messages import HumanMessage
from starlette.testclient import TestClient
from test_openai_endpoint import (
    ASK,
    MER,
    SLOW,
    SMALL,
    Q,
    answering_llm,
    disk_fills_at_mer,
    run_threads,
    scripted_graphs,
    serving,
    wait_until,
)

from fakes import prompt_kind
from sunar.server.checkpoints import open_checkpointer
from sunar.server.openai_api import create_app
from sunar.server.openai_request import BadRequest, thread_of
from sunar.server.served import ClientConfiguration, served

Q2 = "Where was David Lynch born?"


def threaded_app(llm, saver):
    """The endpoint on ``llm`` and the scripted index, keeping threads on ``saver``."""
    app = create_app(saver)
    app.state.graphs = scripted_graphs(llm)
    resources = app.state.graphs["sunar"].config["configurable"]["resources"]
    app.state.durable = {"sunar": served("sunar").copy({"checkpointer": saver}).with_config(configurable={"resources": resources})}
    return app


@pytest.fixture
def saver(tmp_path):
    with open_checkpointer(tmp_path / "threads.sqlite") as saver:
        yield saver


def thread_state(app, thread: str):
    return app.state.durable["sunar"].get_state({"configurable": {"thread_id": thread}})


def reasoning_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line]


def test_a_thread_is_named_by_header_then_body_then_metadata_and_open_webuis_chat_id_only_where_threads_are_kept():
    body = {"thread_id": "from-body", "metadata": {"thread_id": "from-metadata"}}
    assert thread_of(body, {"X-Sunar-Thread": "from-header"}, True) == "from-header"
    assert thread_of(body, {}, True) == "from-body"
    assert thread_of({"metadata": {"thread_id": "from-metadata"}}, {"X-OpenWebUI-Chat-Id": "chat"}, True) == "from-metadata"
    assert thread_of({}, {"X-OpenWebUI-Chat-Id": "9f1c-77ab"}, True) == "9f1c-77ab"
    assert thread_of({}, {"X-OpenWebUI-Chat-Id": "9f1c-77ab"}, False) is None  # it comes with every chat: no threads, no error
    assert thread_of({"metadata": "not an object"}, {}, True) is None


@pytest.mark.parametrize("named", ["", "a b", "../x", "x" * 129, 42])
def test_a_bad_thread_id_is_one_line(named):
    if named == "":
        assert thread_of({"thread_id": named}, {}, True) is None
        return
    with pytest.raises(BadRequest, match=r"^a thread id is 1 to 128 letters, digits"):
        thread_of({"thread_id": named}, {}, True)


def test_a_server_without_checkpoints_refuses_a_named_thread_in_one_line():
    app = create_app()
    app.state.graphs = scripted_graphs(answering_llm())
    with TestClient(app, base_url="http://127.0.0.1") as client:
        refused = client.post("/v1/chat/completions", json=ASK, headers={"X-Sunar-Thread": "t1"})
        assert refused.status_code == 400
        assert refused.json()["error"]["message"] == ("this server keeps no threads; its operator turns them on with: "
                                                      "sunar serve-openai --checkpoints FILE_OR_POSTGRESQL_URL")
        answered = client.post("/v1/chat/completions", json=ASK, headers={"X-OpenWebUI-Chat-Id": "9f1c-77ab"})
        assert answered.status_code == 200 and "x-sunar-thread" not in answered.headers


def test_the_clients_conversation_becomes_the_threads_messages_each_turn(saver):
    app = threaded_app(answering_llm(), saver)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        first = client.post("/v1/chat/completions", json=ASK, headers={"X-Sunar-Thread": "chat-1"})
        assert first.status_code == 200 and first.headers["x-sunar-thread"] == "chat-1"
        reply = first.json()["choices"][0]["message"]["content"]
        state = thread_state(app, "chat-1")
        assert [(m.type, m.content) for m in state.values["messages"]] == [("human", Q), ("ai", reply)] and not state.next

        turns = [{"role": "user", "content": Q}, {"role": "assistant", "content": reply}, {"role": "user", "content": Q2}]
        second = client.post("/v1/chat/completions", json={**ASK, "messages": turns, "thread_id": "chat-1"})
        assert second.status_code == 200
    messages = thread_state(app, "chat-1").values["messages"]
    assert [(m.type, m.content) for m in messages[:3]] == [("human", Q), ("ai", reply), ("human", Q2)] and len(messages) == 4
    assert thread_state(app, "chat-1").values["question"] == Q2


def test_a_run_its_client_left_resumes_from_its_last_step_when_the_same_question_comes_again(saver):
    llm = answering_llm()
    llm.chat.delay = SLOW
    app = threaded_app(llm, saver)
    with serving(app) as (url, _, _), httpx.Client(trust_env=False, timeout=30) as client:
        full = client.post(f"{url}/v1/chat/completions", json=ASK, headers={"X-Sunar-Thread": "whole"}).json()["choices"][0]["message"]
        whole_calls = len(llm.calls)

        seen = []
        with client.stream("POST", f"{url}/v1/chat/completions", json={**ASK, "stream": True}, headers={"X-Sunar-Thread": "left"}) as response:
            for line in response.iter_lines():
                if '"reasoning_content"' in line:
                    seen.append(json.loads(line.removeprefix("data: "))["choices"][0]["delta"]["reasoning_content"])
                if seen and seen[-1].startswith("[answer_hop]"):
                    break  # the client leaves after the first hop's answer: the run stops
        assert wait_until(lambda: not run_threads() and not app.state.running, 5)
        state = thread_state(app, "left")
        assert state.next and state.values["question"] == Q  # unfinished
        before = len(llm.calls) - whole_calls

        again = client.post(f"{url}/v1/chat/completions", json=ASK, headers={"X-Sunar-Thread": "left"}).json()["choices"][0]["message"]
        after = len(llm.calls) - whole_calls - before

    lines = reasoning_lines(again["reasoning_content"])
    assert lines[0] == "[thread] resuming the unfinished run on thread left from its last finished step"
    assert again["content"] == full["content"]
    # the steps the client saw, then the resumed run's: the whole run's steps, none twice
    assert reasoning_lines("".join(seen)) + lines[1:] == reasoning_lines(full["reasoning_content"])
    # no finished step asked the model again: only the calls of the step the stop cut short
    assert whole_calls <= before + after <= whole_calls + SMALL["samples"] and after < whole_calls
    assert not thread_state(app, "left").next


def test_a_run_the_full_disk_stopped_goes_on_from_its_last_step_when_the_question_is_sent_again(saver):
    """What the 507's line says to do: once there is room, the same question on the same thread
    resumes the failed run; only the step that failed (MER) asks the model again."""
    llm = answering_llm()
    disk = disk_fills_at_mer(llm, "threads.sqlite-wal")
    app = threaded_app(llm, saver)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        failed = client.post("/v1/chat/completions", json=ASK, headers={"X-Sunar-Thread": "t"})
        assert failed.status_code == 507 and "send the question again (on the same thread" in failed.json()["error"]["message"]
        before, disk["full"] = len(llm.calls), False
        again = client.post("/v1/chat/completions", json=ASK, headers={"X-Sunar-Thread": "t"}).json()["choices"][0]["message"]
    assert reasoning_lines(again["reasoning_content"])[0] == "[thread] resuming the unfinished run on thread t from its last finished step"
    assert again["content"].startswith("Missoula, Montana\n")
    assert [prompt_kind(p) for p in llm.calls[before:]][:1] == ["mer"]  # no earlier step asked again
    assert not thread_state(app, "t").next


@pytest.mark.parametrize("change", ["question", "graph"])
def test_an_unfinished_thread_asked_another_question_or_with_another_graph_starts_afresh(saver, change):
    llm = answering_llm()
    app = threaded_app(llm, saver)
    durable = app.state.durable["sunar"]
    config = {"configurable": {"thread_id": "t"}, "metadata": {"sunar_graph": "sunar_r" if change == "graph" else "sunar"}}
    durable.invoke({"messages": [HumanMessage(Q)]}, config, context=ClientConfiguration(**SMALL), interrupt_after=["answer_hop"])
    assert durable.get_state(config).next
    asked = {**ASK, "messages": [{"role": "user", "content": Q2 if change == "question" else Q}]}
    with TestClient(app, base_url="http://127.0.0.1") as client:
        out = client.post("/v1/chat/completions", json=asked, headers={"X-Sunar-Thread": "t"}).json()["choices"][0]["message"]
    assert not out["reasoning_content"].startswith("[thread]") and out["reasoning_content"].startswith("[decompose] follow-up: ")
    assert MER.format(answer="Missoula, Montana") in out["reasoning_content"]
    assert sum(prompt_kind(c) == "mer" for c in llm.calls) == 1
