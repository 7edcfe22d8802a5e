"""A graph run cancelled the way the LangGraph server cancels it (Studio's Stop: the task running
``astream`` is cancelled) stops its model at the next token, in the node thread LangGraph started,
instead of finishing the step for nobody (:func:`sunar.cancel.stop_when_cancelled`). The graph is
the served ``sunar`` on the scripted models of tests/fakes.py, MER's reply written slowly."""

import asyncio
import contextlib
import threading
import time

from fakes import MemoryIndex, TableScorer, docs, prompt_kind, resources, scripted_llm, self_ask_script
from sunar.cancel import STOP, stop_when_cancelled
from sunar.server.served import served

CORPUS = docs(
    ("d1", "Ronnie Rocket", "Ronnie Rocket is an unfinished film by David Lynch."),
    ("d2", "David Lynch", "David Lynch was born in Missoula, Montana."),
)
Q = "Where was the director of film Ronnie Rocket born?"
STEPS = ["Follow up: Who directed Ronnie Rocket?", "Follow up: Where was David Lynch born?", "So the final answer is: Missoula, Montana"]
ANSWERS = {"Who directed Ronnie Rocket?": "David Lynch", "Where was David Lynch born?": "Missoula, Montana"}
LONG_MER = "[Answer]: " + "the documents say so, " * 20 + "\n[Final Answer]: {answer}"
SMALL = {"batch_size": 2, "budget": 2, "samples": 2, "recursion_limit": 1000}
TOKEN_DELAY = 0.05


def scripted_graph():
    """The served sunar graph, stoppable when cancelled, on a scripted model whose MER reply comes
    a word every :data:`TOKEN_DELAY` s; returns it, the model and what the MER call saw."""
    llm = scripted_llm(self_ask_script(STEPS), lambda q, i: ANSWERS.get(q, "Missoula, Montana"), mer=LONG_MER)
    script, seen = llm.chat.script, {}

    def slow_mer(prompt: str, i: int) -> str:
        if prompt_kind(prompt) == "mer":
            llm.chat.delay = TOKEN_DELAY
            seen.update(stop=STOP.get(), written=len(llm.chat.streamed), thread=threading.current_thread())
        return script(prompt, i)

    llm.chat.script = slow_mer
    index = MemoryIndex(CORPUS, default_ranking=[("d1", 2.0), ("d2", 1.5)], graph={"d1": ["d2"], "d2": ["d1"]})
    res = resources(llm, TableScorer({"d1": 0.9, "d2": 0.8}), index)
    graph = stop_when_cancelled(served("sunar")).with_config(configurable={"resources": res})
    return graph, llm, seen


async def consume(graph) -> dict:
    out: dict = {}
    async for mode, item in graph.astream({"question": Q}, {"configurable": SMALL}, stream_mode=["values", "messages"]):
        if mode == "values":
            out = item
    return out


def test_a_cancelled_async_run_stops_its_model_in_the_middle_of_a_generation():
    graph, llm, seen = scripted_graph()

    async def run_and_cancel() -> float:
        task = asyncio.create_task(consume(graph))
        while "stop" not in seen:  # MER has begun
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)
        task.cancel()  # what the LangGraph server does on POST /threads/{t}/runs/{r}/cancel
        cancelled_at = time.monotonic()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return cancelled_at

    cancelled_at = asyncio.run(run_and_cancel())  # returns once the loop's worker threads have ended
    assert seen["stop"] is not None and seen["stop"].is_set()
    assert not seen["thread"].is_alive() and time.monotonic() - cancelled_at < 1.0  # the node's thread ended at its next token
    written = len(llm.chat.streamed) - seen["written"]
    assert 0 < written < len(LONG_MER.split())  # it began, and ended long before its last token
    time.sleep(5 * TOKEN_DELAY)
    assert len(llm.chat.streamed) - seen["written"] == written  # and writes no more


def test_an_async_run_left_alone_answers_and_a_sync_run_has_no_stop_flag():
    graph, llm, seen = scripted_graph()
    assert asyncio.run(consume(graph))["answer"] == "Missoula, Montana"
    assert seen["stop"].is_set()  # set once the run ended: nothing of it can go on
    del seen["stop"]
    llm.chat.delay = 0.0
    assert graph.invoke({"question": Q}, {"configurable": SMALL})["answer"] == "Missoula, Montana"
    assert "stop" in seen and seen["stop"] is None
    assert stop_when_cancelled(graph) is graph and type(graph).__name__ == "CompiledStateGraph"
