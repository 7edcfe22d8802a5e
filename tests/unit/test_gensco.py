"""GenSco's graphs with scripted models: every stop condition, the greedy likelihood selection, the
fall-backs, the output contract, the structured replies (each asked under its schema, read with a
counted free-text fall-back), and the log-likelihood plumbing (RecordedLLM, Resources)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from fakes import MemoryIndex, TableNLI, TableScorer, counted, docs, resources
from scripted import ScriptedLLM
from sunar.baselines.gensco import prompts
from sunar.baselines.gensco.graph import build_gensco
from sunar.baselines.gensco.prompts import parse_next
from sunar.errors import ModelUnavailable, SunarError
from sunar.graph import build_graph
from sunar.models.llm_cache import CallCache
from sunar.models.ollama import OllamaLLM
from sunar.models.recorded import RecordedLLM
from sunar.prompts import answer as answer_prompt
from sunar.prompts.structured import as_reply, gbnf, read_object
from sunar.resources import Resources
from sunar.usage import node

QUESTION = "Where was the director of film Ronnie Rocket born?"
CORPUS = docs(
    ("d1", "Ronnie Rocket", "Ronnie Rocket is an unfinished film by David Lynch."),
    ("d2", "David Lynch", "David Lynch was born in Missoula, Montana."),
    ("d3", "Eraserhead", "Eraserhead is a 1977 film."),
    ("d4", "Missoula", "Missoula is a city in Montana."),
)
STEPS = ["Sub-question: Who directed Ronnie Rocket?", "Sub-question: Where was David Lynch born?", "[ENOUGH]"]
#: the passage that best explains each sub-question (by title), for the scripted scorer
BEST = {"Who directed Ronnie Rocket?": "Ronnie Rocket", "Where was David Lynch born?": "David Lynch"}


# --- scripted models ----------------------------------------------------------------------------


def step_number(prompt: str) -> int:
    """Sub-questions already in this question's transcript (the last 'Question:' is this one)."""
    return len(re.findall(r"^Sub-question \d+:", prompt.rsplit("Question:", 1)[1], re.MULTILINE))


def last_title(prompt: str) -> str:
    """Title of the last passage of a scorer prompt (the candidate)."""
    return re.findall(r"^\[\d+\] (.*?):", prompt, re.MULTILINE)[-1]


def generator(
    steps: list[str] | Callable[[int], str], final: str | Callable[[str], str] = "Missoula, Montana", samples: str = "Missoula, Montana",
) -> Callable[[str, int], str]:
    """Generator replies by step number; the final answer; the confidence samples."""

    def script(prompt: str, i: int) -> str:
        if prompt.startswith(prompts.SYSTEM):
            n = step_number(prompt)
            return steps(n) if callable(steps) else steps[min(n, len(steps) - 1)]
        if prompt.startswith(prompts.ANSWER_SYSTEM):
            return final(prompt) if callable(final) else final
        if prompt.startswith(answer_prompt.SYSTEM):
            return samples
        raise AssertionError(f"unexpected prompt: {prompt[:80]}")

    return script


def loglik_table(best: dict[str, str] | None = None, question: Callable[[int], float] = lambda n: -20.0 + n):
    """Scorer LLM: a sub-question is likeliest (-1) after its best passage, -5 after a passage of
    the same film world, -9 otherwise; the question's log-likelihood by the number of steps."""
    best = BEST if best is None else best

    def loglik(prompt: str, continuation: str) -> float:
        if prompt.startswith(prompts.QUESTION_SYSTEM):
            return question(len(re.findall(r"^\d+\. ", prompt, re.MULTILINE)))
        assert prompt.startswith(prompts.SCORE_SYSTEM)
        title = last_title(prompt)
        if best.get(continuation) == title:
            return -1.0
        return -5.0 if title in {"Ronnie Rocket", "David Lynch"} else -9.0

    return loglik


def run(steps=STEPS, variant="gensco", *, final="Missoula, Montana", samples="Missoula, Montana", loglik=None, index=None, scorer=None, **config):
    llm = ScriptedLLM(generator(steps, final, samples), loglik=loglik_table() if loglik is None else loglik)
    index = index or MemoryIndex(CORPUS, default_ranking=[("d3", 4.0), ("d1", 3.0), ("d2", 2.0), ("d4", 1.0)])
    res = resources(llm, scorer or TableScorer({"d3": 0.9, "d1": 0.8, "d2": 0.7, "d4": 0.1}), index)
    cfg = {"configurable": {"resources": res, "samples": 2, **config}}
    updates = list(build_graph(variant).stream({"question": QUESTION}, cfg, stream_mode=["updates", "values"]))
    out = [item for mode, item in updates if mode == "values"][-1]
    seq = [next(iter(item)) for mode, item in updates if mode == "updates"]
    return out, seq, llm


# --- parsing ------------------------------------------------------------------------------------


def fallbacks(fn: Callable[[], object]) -> tuple[object, int]:
    """(``fn()``, the parse fall-backs it counted)."""
    result, usage = counted(fn)
    return result, usage["parse_fallbacks"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sub-question: Who directed Ronnie Rocket?", ("sub_question", "Who directed Ronnie Rocket?")),
        ("Sub-question 3: Who is X?\nPassage 3: ...", ("sub_question", "Who is X?")),
        ("**Sub question:** Who is X?", ("sub_question", "Who is X?")),
        ("Follow up: Who is X?", ("sub_question", "Who is X?")),
        ("\n  Who is X?", ("sub_question", "Who is X?")),
        ("[ENOUGH]", ("enough", "")),
        ("[enough] the passages answer it", ("enough", "")),
        ("Enough.", ("enough", "")),
        ("So the final answer is: Missoula", ("enough", "")),
        ("Sub-question:", ("invalid", "Sub-question:")),
        ("Passage 2: David Lynch: born in Missoula", ("invalid", "Passage 2: David Lynch: born in Missoula")),
        ("I am not sure", ("invalid", "I am not sure")),
        ("", ("invalid", "")),
    ],
)
def test_parse_next(text, expected):
    assert parse_next(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"step": "sub-question", "text": "Who directed Ronnie Rocket?"}', ("sub_question", "Who directed Ronnie Rocket?")),
        ('{"step": "sub-question", "text": "Sub-question 3: Who is X?"}', ("sub_question", "Who is X?")),
        ('{"step": "sub-question", "text": "Where was David Lynch born"}', ("sub_question", "Where was David Lynch born")),
        ('{"step": "sub-question", "text": " ?"}', ("invalid", "?")),
        ('{"step": "sub-question", "text": "[ENOUGH]"}', ("enough", "")),
        ('{"step": "enough", "text": "the passages answer the question"}', ("enough", "")),
        ('Sure. {"step": "enough", "text": "Missoula"}', ("enough", "")),
    ],
)
def test_parse_next_reads_the_object_first_without_fall_back(text, expected):
    assert fallbacks(lambda: parse_next(text)) == (expected, 0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sub-question: Who directed Ronnie Rocket?", ("sub_question", "Who directed Ronnie Rocket?")),
        ("[ENOUGH]", ("enough", "")),
        ('{"step": "maybe", "text": "Who is X?"}', ("invalid", '{"step": "maybe", "text": "Who is X?"}')),  # not the schema's
        ('{"step": "sub-question", "text": "Who is', ("sub_question", "Who is")),  # cut by the token limit: salvaged
    ],
)
def test_parse_next_reads_any_other_reply_as_free_text_and_counts_it(text, expected):
    assert fallbacks(lambda: parse_next(text)) == (expected, 1)


@pytest.mark.parametrize(
    ("text", "expected", "counted_fallbacks"),
    [
        ('{"answer": "Missoula, Montana."}', "Missoula, Montana", 0),
        ('{"answer": "I don\'t know"}', "unknown", 0),
        ('{"answer": " "}', "", 0),  # blank: asked again
        ("Answer: Missoula\nbecause ...", "Missoula", 1),
        ("  ", "", 1),
    ],
)
def test_read_final(text, expected, counted_fallbacks):
    assert fallbacks(lambda: prompts.read_final(text)) == (expected, counted_fallbacks)


def test_the_worked_examples_are_what_the_grammar_allows():
    gbnf(prompts.SCHEMA)  # a bounded grammar exists
    replies = [m.content for m in prompts.next_messages(QUESTION, []) if m.type == "ai"]
    assert len(replies) == sum(len(steps) + 1 for _, steps in prompts.EXAMPLES)
    for reply in replies:
        found = json.loads(reply)
        assert read_object(reply, prompts.SCHEMA) == found and reply == as_reply(**found)
        assert all(len(v) <= prompts.SCHEMA["properties"][k].get("maxLength", 99) for k, v in found.items())
    assert json.loads(replies[-1]) == {"step": prompts.END, "text": prompts.END_TEXT}
    shots = [m.content for m in prompts.answer_messages(QUESTION, []) if m.type == "ai"]
    assert len(shots) == len(prompts.ANSWER_EXAMPLES) and all(prompts.read_final(r) and read_object(r, prompts.ANSWER_SCHEMA) for r in shots)
    for text in (prompts.next_messages(QUESTION, [])[-1].content, prompts.ANSWER_SYSTEM, prompts.ANSWER_AGAIN):
        assert '"step": "sub-question"' in text or '{"answer": "..."}' in text


def test_long_passages_are_cut_in_prompts():
    text = "word " * 1000
    shown = prompts.passage("T", text)
    assert shown.startswith("T: word") and shown.endswith(" ...") and len(shown) <= prompts.PASSAGE_CHARS + 10


# --- the whole graph ------------------------------------------------------------------------------


def test_two_steps_then_the_end_keyword():
    out, seq, llm = run()
    assert seq == [
        "ask", "pool", "propose", "candidates", "select", "propose", "candidates", "select", "propose", "answer", "confidence", "respond",
    ]
    # the likeliest candidate wins although the scorer pre-ranks Eraserhead first
    assert [e["id"] for e in out["evidence"]] == ["d1", "d2"]
    assert out["reasoning_path"] == [
        {"question": "Who directed Ronnie Rocket?", "answer": "passage: Ronnie Rocket"},
        {"question": "Where was David Lynch born?", "answer": "passage: David Lynch"},
    ]
    assert out["answer"] == "Missoula, Montana" and out["confidence"] == 1.0 and out["notes"] == []
    hop = out["hops"][0]
    assert hop["evidence"][0]["score"] == -1.0
    assert hop["batches"][0]["ids"] == ["d3", "d1", "d2", "d4"] and hop["batches"][0]["scores"] == [-9.0, -1.0, -5.0, -9.0]
    # the final answer saw the selected passages in order
    final = next(p for p in llm.calls if p.startswith(prompts.ANSWER_SYSTEM))
    assert final.index("[1] Ronnie Rocket:") < final.index("[2] David Lynch:") and "Eraserhead" not in final
    reply = out["messages"][-1]
    assert reply.content.startswith("Missoula, Montana") and "Ronnie Rocket (d1)" in reply.content
    usage = out["usage"]
    assert usage["loglik_calls"] == 4 + 3 and usage["calls"]["select"] == 2 and usage["llm_calls"] > 0


def test_a_chosen_passage_is_never_a_candidate_again():
    # Ronnie Rocket is the likeliest passage for every sub-question: step 2 must take another one
    best = {"Who directed Ronnie Rocket?": "Ronnie Rocket", "Where was David Lynch born?": "Ronnie Rocket"}
    out, _, llm = run(loglik=loglik_table(best))
    assert [e["id"] for e in out["evidence"]] == ["d1", "d2"]  # d2: -5 beats d3/d4's -9
    second = [last_title(p) for p, c in llm.loglik_calls if c == "Where was David Lynch born?"]
    assert sorted(second) == ["David Lynch", "Eraserhead", "Missoula"]
    assert out["hops"][1]["batches"][0]["ids"] == ["d3", "d2", "d4"]


def test_the_scorer_sees_the_chosen_passages_before_the_candidate():
    _, _, llm = run()
    second = [p for p, c in llm.loglik_calls if c == "Where was David Lynch born?"]
    assert second and all(p.split("\n")[2].startswith("[1] Ronnie Rocket:") and "[2] " in p for p in second)


def test_gensco_candidates_keeps_the_top_of_the_scorer_ranking():
    out, _, llm = run(gensco_candidates=2)
    first = [last_title(p) for p, c in llm.loglik_calls if c == "Who directed Ronnie Rocket?"]
    assert first == ["Eraserhead", "Ronnie Rocket"]  # the scorer's top 2 of the first stage
    assert out["hops"][1]["batches"][0]["ids"] == ["d3", "d2"]


def test_a_pool_no_larger_than_gensco_candidates_is_scored_whole_without_the_scorer():
    scorer = TableScorer({"d4": 0.99})
    out, _, llm = run(scorer=scorer, gensco_candidates=4)
    assert scorer.calls == [] and out["hops"][0]["batches"][0]["ids"] == ["d3", "d1", "d2", "d4"]  # the pool's order
    pre_ranked = TableScorer({"d4": 0.99})
    run(scorer=pre_ranked, gensco_candidates=3)
    assert [ids for _, ids in pre_ranked.calls] == [["d3", "d1", "d2", "d4"]]  # step 2 has 3 left: scored whole


def test_ties_go_to_the_better_pre_ranked_candidate():
    out, _, _ = run(loglik=lambda prompt, continuation: -3.0)
    assert [e["id"] for e in out["evidence"]] == ["d3", "d1"]


def test_hop_limit():
    out, seq, _ = run(lambda n: f"Sub-question: question number {n}?", max_hops=2)
    assert len(out["hops"]) == 2 and seq.count("select") == 2
    assert any("hop limit (2)" in n for n in out["notes"]) and len({e["id"] for e in out["evidence"]}) == 2


def test_repeated_sub_question_stops():
    out, seq, _ = run(["Sub-question: Who directed Ronnie Rocket?", "Sub-question: who directed ronnie rocket"])
    assert len(out["hops"]) == 1 and seq.count("propose") == 2
    assert any("repeated a sub-question" in n for n in out["notes"]) and out["answer"] == "Missoula, Montana"


def test_end_keyword_at_the_first_step_still_retrieves_for_the_question():
    out, seq, _ = run(["[ENOUGH]"])
    assert [h["question"] for h in out["hops"]] == [QUESTION] and out["evidence"]
    assert seq.count("select") == 1 and any("had enough before any passage" in n for n in out["notes"])


def test_broken_output_at_the_first_step_uses_the_question():
    out, _, _ = run(["Lorem ipsum dolor", "[ENOUGH]"])
    assert out["hops"][0]["question"] == QUESTION and any("broke the format" in n for n in out["notes"])


def test_broken_output_later_stops():
    out, _, _ = run(["Sub-question: Who directed Ronnie Rocket?", "Passage 2: made up"])
    assert len(out["hops"]) == 1 and any("broke the format ('Passage 2: made up')" in n for n in out["notes"])
    assert out["answer"] == "Missoula, Montana"


def test_empty_retrieval_answers_without_passages():
    out, seq, llm = run(index=MemoryIndex(CORPUS))
    assert out["hops"] == [] and out["evidence"] == [] and "select" not in seq
    assert any("the first stage holds no passage for the question" in n for n in out["notes"])
    assert any("the pool is empty" in n for n in out["notes"])
    assert "(no passages found)" in next(p for p in llm.calls if p.startswith(prompts.ANSWER_SYSTEM))
    assert llm.loglik_calls == []


def test_the_pool_is_the_first_stage_of_the_question_fixed_for_every_step():
    # only the question itself finds anything: every step chooses from the question's pool
    index = MemoryIndex(CORPUS, rankings={QUESTION: [("d3", 4.0), ("d1", 3.0), ("d2", 2.0), ("d4", 1.0)]})
    out, seq, llm = run(index=index, gensco_pool=3)
    assert [e["id"] for e in out["evidence"]] == ["d1", "d2"] and seq.count("pool") == 1
    assert {last_title(p) for p, _ in llm.loglik_calls if p.startswith(prompts.SCORE_SYSTEM)} == {"Eraserhead", "Ronnie Rocket", "David Lynch"}


def test_a_given_pool_is_used_instead_of_the_first_stage():
    llm = ScriptedLLM(generator(STEPS), loglik=loglik_table())
    index = MemoryIndex(CORPUS, default_ranking=[("d3", 4.0)])  # the first stage would offer only Eraserhead
    res = resources(llm, TableScorer({}), index)
    given = {"question": QUESTION, "pool_ids": ["d2", "d1", "gone", "d1"]}
    out = build_graph("gensco").invoke(given, {"configurable": {"resources": res, "samples": 2}})
    assert [e["id"] for e in out["evidence"]] == ["d1", "d2"]
    assert "1 of 3 passages of the given pool are missing from the index" in out["notes"]
    assert {last_title(p) for p, _ in llm.loglik_calls if p.startswith(prompts.SCORE_SYSTEM)} == {"Ronnie Rocket", "David Lynch"}


def test_a_given_pool_is_used_up_by_its_question_on_a_thread():
    llm = ScriptedLLM(generator(STEPS), loglik=loglik_table())
    res = resources(llm, TableScorer({}), MemoryIndex(CORPUS, default_ranking=[("d4", 1.0)]))
    graph = build_gensco("gensco", checkpointer=InMemorySaver())
    config = {"configurable": {"resources": res, "samples": 2, "thread_id": "t"}}
    first = graph.invoke({"question": QUESTION, "pool_ids": ["d1", "d2"]}, config)
    second = graph.invoke({"question": "Where was David Lynch born?"}, config)  # no pool: the first stage's
    assert [e["id"] for e in first["evidence"]] == ["d1", "d2"] and [e["id"] for e in second["evidence"]] == ["d4"]


def test_no_candidate_left():
    index = MemoryIndex(CORPUS, default_ranking=[("d1", 1.0), ("missing", 0.5)])
    out, _, _ = run(index=index)
    assert [e["id"] for e in out["evidence"]] == ["d1"]
    notes = " | ".join(out["notes"])
    assert "1 of 2 passages of the first stage are missing from the index" in notes
    assert "the pool holds no passage that is not selected already" in notes


def test_gensco_stop_stops_when_the_question_likelihood_stops_improving():
    climbs_then_falls = {1: -20.0, 2: -12.0, 3: -14.0}.get
    asked = ["Who directed Ronnie Rocket?", "Where was David Lynch born?", "Where is Missoula?", "Anything else?"]

    def steps(n):
        return f"Sub-question: {asked[n]}"

    stopped, seq, llm = run(steps, "gensco_stop", loglik=loglik_table(question=climbs_then_falls), max_hops=4)
    checks = [c for p, c in llm.loglik_calls if p.startswith(prompts.QUESTION_SYSTEM)]
    assert checks == [QUESTION] * 3
    assert seq.count("stop_check") == 3 and seq[-4:] == ["stop_check", "answer", "confidence", "respond"]
    assert [h["question"] for h in stopped["hops"]] == ["Who directed Ronnie Rocket?", "Where was David Lynch born?"]
    assert len(stopped["evidence"]) == 2 and any("stopped improving (-14.00 <= -12.00)" in n for n in stopped["notes"])
    # the same models without the criterion (GenSco-max) go on to the hop limit
    full, seq, _ = run(steps, "gensco", loglik=loglik_table(question=lambda n: climbs_then_falls(n, -30.0)), max_hops=4)
    assert len(full["hops"]) == 4 and "stop_check" not in seq and any("hop limit (4)" in n for n in full["notes"])


def test_gensco_stop_goes_on_while_the_likelihood_improves():
    out, seq, _ = run(lambda n: f"Sub-question: question number {n}?", "gensco_stop", max_hops=3)
    assert len(out["hops"]) == 3 and seq.count("stop_check") == 3 and any("hop limit (3)" in n for n in out["notes"])


def test_gensco_stop_with_an_equal_likelihood_stops():
    out, _, _ = run(lambda n: f"Sub-question: question number {n}?", "gensco_stop", loglik=loglik_table(question=lambda n: -7.0))
    assert len(out["hops"]) == 1 and any("stopped improving" in n for n in out["notes"])


def test_empty_final_answer_is_asked_again():
    out, _, llm = run(final=lambda p: "Helena" if p.endswith(prompts.ANSWER_AGAIN) else "  ")
    assert out["answer"] == "Helena" and any("asked again" in n for n in out["notes"])
    assert sum(p.endswith(prompts.ANSWER_AGAIN) for p in llm.calls) == 1


def test_empty_final_answer_twice_is_unknown():
    out, _, _ = run(final="")
    assert out["answer"] == "unknown" and any("empty twice" in n for n in out["notes"])


# --- structured replies ---------------------------------------------------------------------------

#: The generator's replies as one decoding under their schemas writes them.
JSON_STEPS = [
    as_reply(step=prompts.ASK, text="Who directed Ronnie Rocket?"),
    as_reply(step=prompts.ASK, text="Where was David Lynch born?"),
    as_reply(step=prompts.END, text=prompts.END_TEXT),
]
JSON_ANSWER = as_reply(answer="Missoula, Montana")


def schema_of(prompt: str) -> dict:
    """The schema a GenSco prompt's reply is asked under: a step's, or the short answer's."""
    return prompts.SCHEMA if prompt.startswith(prompts.SYSTEM) else answer_prompt.SCHEMA


@pytest.mark.parametrize("variant", ["gensco", "gensco_stop"])
def test_every_reply_is_asked_under_its_schema_and_read_without_fall_back(variant):
    out, _, llm = run(JSON_STEPS, variant, final=JSON_ANSWER, samples=JSON_ANSWER)
    assert out["answer"] == "Missoula, Montana" and out["usage"]["parse_fallbacks"] == 0
    assert [h["question"] for h in out["hops"]] == ["Who directed Ronnie Rocket?", "Where was David Lynch born?"]
    assert len(llm.schemas) == len(llm.calls) == 3 + 1 + 2  # three steps, the final answer, two samples
    assert llm.schemas == [schema_of(p) for p in llm.calls]
    assert prompts.SCHEMA in llm.schemas and prompts.ANSWER_SCHEMA is answer_prompt.SCHEMA


def test_structured_output_off_asks_without_schemas_and_reads_the_same():
    out, _, llm = run(JSON_STEPS, final=JSON_ANSWER, samples=JSON_ANSWER, structured_output=False)
    assert set(llm.schemas) == {None} and len(llm.schemas) == 6
    assert out["answer"] == "Missoula, Montana" and len(out["hops"]) == 2 and out["usage"]["parse_fallbacks"] == 0


def test_free_text_replies_are_read_and_counted_as_fall_backs():
    out, _, _ = run()  # STEPS and the answers in free text
    assert out["answer"] == "Missoula, Montana" and len(out["hops"]) == 2
    assert out["usage"]["parse_fallbacks"] == 3 + 1 + 2


def test_a_blank_json_answer_is_asked_again_under_the_schema():
    again = as_reply(answer="Helena")
    out, _, llm = run(JSON_STEPS, final=lambda p: again if p.endswith(prompts.ANSWER_AGAIN) else as_reply(answer=" "), samples=JSON_ANSWER)
    assert out["answer"] == "Helena" and any("asked again" in n for n in out["notes"])
    retry = llm.calls.index(next(p for p in llm.calls if p.endswith(prompts.ANSWER_AGAIN)))
    assert llm.schemas[retry] == llm.schemas[retry - 1] == answer_prompt.SCHEMA and out["usage"]["parse_fallbacks"] == 0


def test_a_backend_without_log_likelihoods_is_one_clear_error():
    llm = ScriptedLLM(generator(STEPS))  # no loglik script
    res = resources(llm, TableScorer({}), MemoryIndex(CORPUS, default_ranking=[("d1", 1.0)]))
    with pytest.raises(ModelUnavailable) as info:
        build_graph("gensco").invoke({"question": QUESTION}, {"configurable": {"resources": res}})
    message = str(info.value)
    assert isinstance(info.value, SunarError) and "\n" not in message
    assert "cannot return token log-probabilities" in message and "likelihood_llm" in message and "embedded:" in message


def test_ollama_has_no_log_likelihoods():
    with pytest.raises(ModelUnavailable, match="ollama:llama3.1 cannot return token log-probabilities"):
        OllamaLLM("llama3.1", url="http://127.0.0.1:9").loglik([HumanMessage("hi")], "hello")


def test_a_separate_likelihood_model_scores():
    scorer_llm = ScriptedLLM(lambda p, i: "", name="scorer", loglik=loglik_table())
    llm = ScriptedLLM(generator(STEPS))  # the generator itself has no log-likelihoods
    index = MemoryIndex(CORPUS, default_ranking=[("d3", 4.0), ("d1", 3.0), ("d2", 2.0)])
    res = Resources(llm, TableScorer({}), TableNLI(), index, likelihood=scorer_llm)
    out = build_graph("gensco_stop").invoke({"question": QUESTION}, {"configurable": {"resources": res, "samples": 1}})
    assert [e["id"] for e in out["evidence"]] == ["d1", "d2"]
    assert len(scorer_llm.loglik_calls) == 3 + 2 + 2  # candidates of steps 1 and 2, two stop checks


def test_node_updates_stream():
    graph = build_graph("gensco_stop")
    res = resources(ScriptedLLM(generator(STEPS), loglik=loglik_table()), TableScorer({"d1": 1.0}), MemoryIndex(CORPUS, default_ranking=[("d1", 1.0), ("d2", 0.5)]))
    by_node: dict[str, list] = {}
    for update in graph.stream({"question": QUESTION}, {"configurable": {"resources": res, "samples": 1}}, stream_mode="updates"):
        for name, value in update.items():
            by_node.setdefault(name, []).append(value)
    assert by_node["propose"][0]["sub_question"] == "Who directed Ronnie Rocket?"
    assert [c["id"] for c in by_node["candidates"][0]["candidates"]] == ["d1", "d2"]
    assert [c["id"] for c in by_node["candidates"][1]["candidates"]] == ["d2"]
    assert by_node["select"][0]["hops"][-1]["evidence"][0]["id"] == "d1"
    assert by_node["stop_check"][0]["question_loglik"] == [-19.0] and by_node["stop_check"][1]["question_loglik"] == [-19.0, -18.0]
    assert by_node["propose"][-1]["halt"] == "enough" and by_node["answer"][0]["answer"] == "Missoula, Montana"
    assert set(by_node["respond"][0]) >= {"reasoning_path", "messages"}


def test_a_second_question_on_a_thread_starts_clean():
    graph = build_gensco("gensco_stop", checkpointer=InMemorySaver())
    res = resources(ScriptedLLM(generator(STEPS), loglik=loglik_table()), TableScorer({}), MemoryIndex(CORPUS, default_ranking=[("d1", 1.0), ("d2", 0.5)]))
    cfg = {"configurable": {"resources": res, "samples": 1, "thread_id": "t"}}
    first = graph.invoke({"messages": [HumanMessage(QUESTION)]}, cfg)
    second = graph.invoke({"messages": [HumanMessage("Who wrote Ronnie Rocket and where was he born?")]}, cfg)
    assert len(first["hops"]) == len(second["hops"]) == 2 and [e["id"] for e in second["evidence"]] == ["d1", "d2"]
    assert graph.get_state(cfg).values["question_loglik"] == [-19.0, -18.0]
    assert [m.type for m in second["messages"]] == ["human", "ai", "human", "ai"]


def test_named_graphs_and_unknown_variant():
    gensco, gensco_stop = build_gensco("gensco"), build_gensco("gensco_stop")
    assert gensco.name == "gensco" and gensco_stop.name == "gensco_stop"
    assert "stop_check" in gensco_stop.get_graph().nodes and "stop_check" not in gensco.get_graph().nodes
    with pytest.raises(SunarError, match="unknown GenSco variant"):
        build_gensco("gensco_min")


# --- log-likelihood plumbing ----------------------------------------------------------------------


def test_counting_llm_counts_and_caches_logliks(tmp_path):
    inner = ScriptedLLM(lambda p, i: "", loglik=lambda prompt, continuation: -float(len(continuation)))
    llm = RecordedLLM(inner, CallCache(tmp_path / "c.sqlite"))
    messages = [HumanMessage("Passages: ...")]
    box = {}

    @node("probe")
    def probe(state, config):
        box["values"] = [llm.loglik(messages, "abc"), llm.loglik(messages, "abc"), llm.loglik(messages, "abcd")]
        return {}

    usage = probe({}, {})["usage"]
    assert box["values"] == [-3.0, -3.0, -4.0] and len(inner.loglik_calls) == 2
    assert (usage["loglik_calls"], usage["cached_calls"], usage["llm_calls"]) == (3, 1, 0)
    again = ScriptedLLM(lambda p, i: "", loglik=lambda prompt, continuation: 0.0)
    assert RecordedLLM(again, CallCache(tmp_path / "c.sqlite")).loglik(messages, "abcd") == -4.0 and again.loglik_calls == []


def test_resources_score_with_the_generative_llm_unless_told_otherwise():
    llm, other = ScriptedLLM(lambda p, i: ""), ScriptedLLM(lambda p, i: "", name="other")
    index = MemoryIndex(CORPUS)
    shared = resources(llm, TableScorer({}), index)
    assert shared.likelihood is shared.llm
    separate = Resources(llm, TableScorer({}), shared.nli, index, likelihood=other)
    assert isinstance(separate.likelihood, RecordedLLM) and separate.likelihood.inner is other


def test_stream_shows_every_gensco_step(capsys):
    """``sunar ask --stream`` for GenSco: the sub-questions, the candidates, the choice, the answer."""
    from sunar.graph import GRAPHS
    from sunar.streaming import stream_steps

    llm = ScriptedLLM(generator(STEPS, "Missoula, Montana"), loglik=loglik_table())
    index = MemoryIndex(CORPUS, default_ranking=[("d3", 4.0), ("d1", 3.0), ("d2", 2.0), ("d4", 1.0)])
    res = resources(llm, TableScorer({"d3": 0.9, "d1": 0.8, "d2": 0.7, "d4": 0.1}), index)
    out = stream_steps(build_graph("gensco_stop"), {"question": QUESTION}, {"configurable": {"resources": res, "samples": 2}}, GRAPHS["gensco_stop"].describe, "answer")
    shown = capsys.readouterr().err.splitlines()
    assert out["answer"] == "Missoula, Montana"
    assert "[pool] 4 passages in the pool" in shown and any(line.startswith("[propose] sub-question: ") for line in shown)
    assert any(line.startswith("[candidates] ") and "candidate passages" in line for line in shown)
    assert any(line.startswith("[select] chose ") for line in shown)
    assert any(line.startswith("[stop_check] log P(question | decomposition) = ") for line in shown)
    assert "[answer] final answer: Missoula, Montana" in shown and any(line.startswith("[confidence] ") for line in shown)
