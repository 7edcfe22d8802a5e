"""RA-ISF's graph with scripted models: every branch of the self-feedback loop, the depth limit,
the frame cap, the fall-backs for broken or unusable replies, the structured replies (each asked
under its schema, read with a counted free-text fall-back), and the output contract."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from fakes import MemoryIndex, TableScorer, counted, docs, resources
from scripted import ScriptedLLM
from sunar.baselines.ra_isf import prompts
from sunar.baselines.ra_isf.frames import MAX_FRAMES
from sunar.baselines.ra_isf.graph import RECURSION_LIMIT
from sunar.baselines.ra_isf.prompts import parse_sub_questions
from sunar.graph import build_graph
from sunar.prompts import answer as answer_prompt
from sunar.prompts.structured import as_reply, gbnf, read_object

Q = "Where was the director of film Ronnie Rocket born?"
DIRECTOR, BIRTHPLACE = "Who directed Ronnie Rocket?", "Where was David Lynch born?"
CORPUS = docs(
    ("d1", "Ronnie Rocket", "Ronnie Rocket is an unfinished film by David Lynch."),
    ("d2", "David Lynch", "David Lynch was born in Missoula, Montana."),
    ("d3", "Rocket", "A rocket is a vehicle propelled by a rocket engine."),
)


def _last(pattern: str, text: str) -> str:
    return re.findall(pattern, text)[-1].strip()


#: Each prompt kind the scripted model answers, by the system prompt it starts with.
KINDS = [
    ("know", prompts.KNOW_SYSTEM),
    ("relevance", prompts.RELEVANCE_SYSTEM),
    ("decompose", prompts.DECOMPOSE_SYSTEM),
    ("memory", prompts.SELF_ANSWER_SYSTEM),
    ("passages", prompts.PASSAGE_ANSWER_SYSTEM),
    ("compose", prompts.COMPOSE_SYSTEM),
    ("sample", answer_prompt.SYSTEM),  # the confidence node's samples
]


@dataclass
class Model:
    """What the scripted LLM replies to each RA-ISF prompt, by question. Unlisted questions: not
    known, no passage relevant, the decomposition ``"Lorem ipsum"`` (broken), answers "unknown"."""

    known: dict[str, str] = field(default_factory=dict)  # question -> answer from memory
    relevant: set[tuple[str, str]] = field(default_factory=set)  # (question, passage title)
    decompositions: dict[str, str] = field(default_factory=dict)  # question -> raw reply
    from_passages: dict[str, str] = field(default_factory=dict)  # question -> answer
    composed: dict[str, str] = field(default_factory=dict)  # question -> answer
    sample: str = "Missoula, Montana"  # confidence samples
    asked: list[tuple[str, str]] = field(default_factory=list)  # (prompt kind, question), in order

    def __call__(self, prompt: str, i: int) -> str:
        question = _last(r"Question: (.*)", prompt)
        kind = next((k for k, system in KINDS if prompt.startswith(system)), None)
        if kind is None:
            raise AssertionError(f"unexpected prompt: {prompt[:80]!r}")
        self.asked.append((kind, question))
        if kind == "know":
            return "yes" if question in self.known else "no"
        if kind == "relevance":
            title = _last(r"Passage: (.*?):", prompt)
            return "yes" if (question, title) in self.relevant else "no"
        if kind == "decompose":
            return self.decompositions.get(question, "Lorem ipsum")
        if kind == "memory":
            return self.known[question]
        if kind == "passages":
            return self.from_passages.get(question, "unknown")
        if kind == "compose":
            return self.composed.get(question, "unknown")
        return self.sample

    def questions(self, kind: str) -> list[str]:
        return [q for k, q in self.asked if k == kind]


class MarginLLM(ScriptedLLM):
    """Label log-probabilities 0.9 apart, as a backend that has them gives (not greedy 0 / -inf)."""

    def judge(self, messages, labels):
        return {k: (-0.1 if v == 0 else -1.0) for k, v in super().judge(messages, labels).items()}


def setup(model: Model, rankings: dict[str, list[str]] | None = None, default: list[str] | None = None, llm=ScriptedLLM):
    ranked = {q: [(d, 1.0 - 0.1 * i) for i, d in enumerate(ids)] for q, ids in (rankings or {}).items()}
    index = MemoryIndex(CORPUS, rankings=ranked, default_ranking=[(d, 1.0 - 0.1 * i) for i, d in enumerate(default or [])])
    return resources(llm(model), TableScorer({"d1": 0.9, "d2": 0.8, "d3": 0.1}), index)


def run(model: Model, question: str = Q, rankings=None, default=None, llm=ScriptedLLM, **configurable):
    """One run, streamed: (the output, the names of the nodes in the order they ran, the updates)."""
    res = setup(model, rankings, default, llm)
    config = {"configurable": {"resources": res, "samples": 2, **configurable}}
    updates, out = [], {}
    for mode, item in build_graph("ra_isf").stream({"question": question}, config, stream_mode=["updates", "values"]):
        if mode == "updates":
            updates.append(item)
        else:
            out = item
    return out, [next(iter(u)) for u in updates], updates


def _frames(updates) -> list[dict]:
    """The last ``frames`` any node wrote."""
    return [v["frames"] for u in updates for v in u.values() if v and "frames" in v][-1]


def lynch_model(**changes) -> Model:
    """The question is not known and its passages do not help; two sub-questions do."""
    model = Model(
        relevant={(DIRECTOR, "Ronnie Rocket"), (BIRTHPLACE, "David Lynch")},
        decompositions={Q: f"1. {DIRECTOR}\n2. Where was #1 born?"},
        from_passages={DIRECTOR: "David Lynch", BIRTHPLACE: "Missoula, Montana"},
        composed={Q: "Missoula, Montana"},
    )
    for key, value in changes.items():
        setattr(model, key, value)
    return model


LYNCH_RANKINGS = {Q: ["d3"], DIRECTOR: ["d1", "d3"], BIRTHPLACE: ["d2", "d3"]}


# --- the branches --------------------------------------------------------------------------------


def test_known_question_is_answered_from_memory_without_retrieval():
    model = Model(known={"What is the capital of Japan?": "Tokyo"})
    out, seq, _ = run(model, question="What is the capital of Japan?", default=["d1"])
    assert out["answer"] == "Tokyo"
    assert seq == ["ask", "start", "next_frame", "self_knowledge", "answer", "next_frame", "finish", "confidence", "respond"]
    assert not model.questions("relevance") and not model.questions("decompose")
    assert out["hops"] == [] and out["evidence"] == [] and out["reasoning_path"] == []


def test_relevant_passage_at_the_top_level_answers_from_it_alone():
    model = Model(relevant={(Q, "David Lynch")}, from_passages={Q: "Missoula, Montana"})
    out, seq, updates = run(model, default=["d3", "d2", "d1"])
    assert seq == [
        "ask", "start", "next_frame", "self_knowledge", "retrieve", "relevance", "answer", "next_frame", "finish", "confidence", "respond",
    ]
    assert out["answer"] == "Missoula, Montana" and out["hops"] == []
    assert [e["id"] for e in out["evidence"]] == ["d2"]  # only the relevant passage
    root = _frames(updates)[0]
    assert [p["id"] for p in root["passages"]] == ["d1", "d2", "d3"]  # re-ranked by the scorer
    assert root["relevant"] == ["d2"] and root["basis"] == "passages"
    assert len(model.questions("relevance")) == 3  # one judgement per passage


def test_relevance_threshold_decides():
    """A judged "yes" counts only when logp(yes) - logp(no) beats ``relevance_threshold``: with an
    threshold above the judge's margin the passage it likes is not used and the question decomposes."""
    model = lynch_model()
    model.relevant.add((Q, "Rocket"))  # the judge says yes to the question's only passage
    model.from_passages[Q] = "Paris"
    from sunar.baselines.ra_isf import nodes as ra_isf

    out, seq, _ = run(model, rankings=LYNCH_RANKINGS, llm=MarginLLM, relevance_threshold=1.0)
    assert model.questions("decompose")[0] == Q and out["answer"] == "Missoula, Montana"
    assert Q not in model.questions("passages")
    assert ra_isf._yes({"yes": -0.1, "no": -2.0}, threshold=1.0) and not ra_isf._yes({"yes": -0.1, "no": -1.0}, threshold=1.0)


def test_the_scorer_can_judge_relevance_without_an_llm_call():
    """With ra_isf_relevance=scorer a passage is relevant when its scorer score beats the threshold:
    Lynch's passage (0.8) is, the rocket (0.1) is not; the LLM is never asked."""
    model = Model(from_passages={Q: "Missoula, Montana"})  # the LLM judge would call nothing relevant
    out, seq, _ = run(model, rankings={Q: ["d3", "d2"]}, ra_isf_relevance="scorer", relevance_threshold=0.5)
    assert out["answer"] == "Missoula, Montana" and [e["id"] for e in out["evidence"]] == ["d2"]
    assert not model.questions("relevance") and "decompose" not in seq
    # a threshold above every score: nothing relevant, so the question decomposes (as with the LLM's "no")
    model = lynch_model()
    out, seq, _ = run(model, rankings=LYNCH_RANKINGS, ra_isf_relevance="scorer", relevance_threshold=0.95)
    assert model.questions("decompose")[0] == Q and not model.questions("relevance")


def test_the_original_question_needs_ra_isf_min_relevant_passages_a_sub_question_one():
    """With ra_isf_min_relevant=2, the film's passage alone (one hop short) does not answer the
    original question: it decomposes, and each sub-question answers from its one relevant passage."""
    model = lynch_model()
    model.relevant.add((Q, "Ronnie Rocket"))
    model.from_passages[Q] = "David Lynch"  # what answering at once from the film's passage gives
    rankings = {**LYNCH_RANKINGS, Q: ["d1", "d3"]}
    at_once, _, _ = run(model, rankings=rankings)
    assert at_once["answer"] == "David Lynch" and not model.questions("decompose")  # the paper's rule: one is enough
    out, _, updates = run(model, rankings=rankings, ra_isf_min_relevant=2)
    assert out["answer"] == "Missoula, Montana" and model.questions("decompose") == [Q]
    assert [f["relevant"] for f in _frames(updates)] == [["d1"], ["d1"], ["d2"]]  # sub-questions: one each
    assert any("fewer than ra_isf_min_relevant (2)" in n for n in out["notes"])
    # with two relevant passages the original question is answered from them at once
    model.relevant.add((Q, "Rocket"))
    both, _, _ = run(model, rankings=rankings, ra_isf_min_relevant=2)
    assert both["answer"] == "David Lynch" and model.questions("decompose") == [Q]  # no new decomposition


def test_self_knowledge_threshold_decides():
    """Answered from memory only when the judge's margin beats self_knowledge_threshold (0.9 here)."""
    model = Model(known={"What is the capital of Japan?": "Tokyo"}, relevant={("What is the capital of Japan?", "Ronnie Rocket")},
                  from_passages={"What is the capital of Japan?": "Tokyo, Japan"})
    sure, _, _ = run(model, question="What is the capital of Japan?", default=["d1"], llm=MarginLLM, self_knowledge_threshold=0.8)
    unsure, _, _ = run(model, question="What is the capital of Japan?", default=["d1"], llm=MarginLLM, self_knowledge_threshold=1.0)
    assert sure["answer"] == "Tokyo" and unsure["answer"] == "Tokyo, Japan"  # retrieved and read instead
    assert model.questions("memory") == ["What is the capital of Japan?"]


def test_no_relevant_passage_decomposes_and_composes_from_sub_answers():
    model = lynch_model()
    out, seq, updates = run(model, rankings=LYNCH_RANKINGS)
    assert out["answer"] == "Missoula, Montana"
    # the second sub-question was asked with the first one's answer filled in
    assert out["reasoning_path"] == [{"question": DIRECTOR, "answer": "David Lynch"}, {"question": BIRTHPLACE, "answer": "Missoula, Montana"}]
    assert [[e["id"] for e in h["evidence"]] for h in out["hops"]] == [["d1"], ["d2"]]
    assert {e["id"] for e in out["evidence"]} == {"d1", "d2"}  # the sub-answers' passages, via gather
    assert seq.count("self_knowledge") == 3 and seq.count("decompose") == 1 and seq.count("compose") == 1
    assert seq[-4:] == ["finish", "gather", "confidence", "respond"]
    frames = _frames(updates)
    assert [(f["depth"], f["parent"], f["stage"], f["basis"]) for f in frames] == [
        (0, None, "done", "sub_answers"), (1, 0, "done", "passages"), (1, 0, "done", "passages"),
    ]
    assert frames[0]["children"] == [1, 2] and frames[2]["written"] == "Where was #1 born?"
    assert model.questions("compose") == [Q] and out["notes"] == []


def test_depth_limit_answers_unknown_without_calls():
    model = lynch_model(decompositions={
        Q: f"1. {DIRECTOR}\n2. Where was #1 born?",
        DIRECTOR: "1. What is Ronnie Rocket?\n2. Who made #1?",
    })
    model.relevant = {(BIRTHPLACE, "David Lynch")}  # the first sub-question must decompose too
    out, _, updates = run(model, rankings={**LYNCH_RANKINGS, DIRECTOR: []}, ra_isf_depth=1)
    frames = _frames(updates)
    assert [(f["question"], f["depth"], f["answer"], f["basis"]) for f in frames[3:]] == [
        ("What is Ronnie Rocket?", 2, "unknown", "depth_limit"), ("Who made #1?", 2, "unknown", "depth_limit"),
    ]
    assert frames[1]["answer"] == "unknown" and frames[1]["basis"] == "leaf"  # nothing retrieved for it
    # past the limit nothing is asked about a frame; the second sub-question needs #1 (unknown)
    assert model.questions("know") == [Q, DIRECTOR]
    assert frames[2]["basis"] == "unresolved" and frames[2]["answer"] == "unknown"
    assert any("deeper than the depth limit (1)" in n for n in out["notes"])
    assert any("which is unknown" in n for n in out["notes"])
    # every sub-answer unknown: the question is a leaf, answered from its own (irrelevant) passage
    assert frames[0]["basis"] == "leaf" and out["evidence"][0]["id"] == "d3"
    assert [h["question"] for h in out["hops"]] == ["What is Ronnie Rocket?", "Who made #1?", DIRECTOR, "Where was #1 born?"]


def test_depth_zero_never_answers_sub_questions():
    model = lynch_model()
    out, _, updates = run(model, rankings={**LYNCH_RANKINGS, Q: []}, ra_isf_depth=0)
    assert out["answer"] == "unknown" and out["evidence"] == []
    assert all(f["basis"] == "depth_limit" for f in _frames(updates)[1:])
    assert model.questions("know") == [Q]


def test_empty_retrieval_goes_to_decomposition_and_a_broken_one_gives_unknown():
    model = Model()
    out, seq, _ = run(model)  # the index returns nothing for any question
    assert out["answer"] == "unknown" and out["evidence"] == [] and out["hops"] == []
    assert "relevance" not in seq and model.questions("decompose") == [Q]
    assert not model.questions("passages")  # nothing to answer from: no call
    assert any("nothing retrieved" in n for n in out["notes"]) and any("no usable sub-question" in n for n in out["notes"])


def test_empty_retrieval_at_the_top_is_solved_through_sub_questions():
    out, _, _ = run(lynch_model(), rankings={**LYNCH_RANKINGS, Q: []})
    assert out["answer"] == "Missoula, Montana" and len(out["hops"]) == 2


@pytest.mark.parametrize(
    "reply",
    [
        "I cannot split this question.",
        f"1. {Q}",  # repeats the question
        "",
        "Sub-questions:\n\n",
    ],
)
def test_broken_decomposition_makes_a_leaf_answered_from_what_was_retrieved(reply):
    model = Model(decompositions={Q: reply}, from_passages={Q: "Missoula"})
    out, seq, updates = run(model, default=["d3"])
    assert seq.count("next_frame") == 2 and "compose" not in seq  # no sub-question was pushed
    assert out["answer"] == "Missoula" and [e["id"] for e in out["evidence"]] == ["d3"]
    assert _frames(updates)[0]["basis"] == "leaf" and out["hops"] == []
    assert any("no usable sub-question" in n for n in out["notes"])
    assert model.questions("passages") == [Q]  # the leaf's one answer call


def test_leaf_answer_uses_the_best_guess_prompt():
    model = Model(decompositions={Q: "nonsense"}, from_passages={Q: "Missoula"})
    res = setup(model, default=["d3"])
    build_graph("ra_isf").invoke({"question": Q}, {"configurable": {"resources": res, "samples": 1}})
    answer_prompts = [p for p in res.llm.inner.calls if p.startswith(prompts.PASSAGE_ANSWER_SYSTEM)]
    assert len(answer_prompts) == 1 and prompts.GUESS in answer_prompts[0]


# --- unusable answers ------------------------------------------------------------------------------


@pytest.mark.parametrize("reply", ["", "???", "I don't know", Q])
def test_unusable_answer_from_memory_falls_back_to_retrieval(reply):
    model = Model(known={Q: reply}, relevant={(Q, "David Lynch")}, from_passages={Q: "Missoula, Montana"})
    out, seq, _ = run(model, default=["d2"])
    assert seq[3:7] == ["self_knowledge", "answer", "retrieve", "relevance"]
    assert out["answer"] == "Missoula, Montana"
    assert any("answer from memory was unusable" in n for n in out["notes"])


def test_unknown_answer_from_relevant_passages_falls_back_to_decomposition():
    model = lynch_model(relevant={(Q, "Rocket"), (DIRECTOR, "Ronnie Rocket"), (BIRTHPLACE, "David Lynch")})
    out, _, _ = run(model, rankings=LYNCH_RANKINGS)
    assert model.questions("decompose") == [Q] and out["answer"] == "Missoula, Montana"
    assert any("relevant passages gave no usable answer" in n for n in out["notes"])


def test_unusable_composition_falls_back_to_a_leaf():
    model = lynch_model(composed={Q: "..."}, from_passages={DIRECTOR: "David Lynch", BIRTHPLACE: "Missoula, Montana", Q: "Montana"})
    out, _, updates = run(model, rankings=LYNCH_RANKINGS)
    assert out["answer"] == "Montana" and _frames(updates)[0]["basis"] == "leaf"
    assert any("no usable answer composed" in n for n in out["notes"]) and len(out["hops"]) == 2


def test_judgements_that_are_neither_yes_nor_no_count_as_no():
    class Vague(Model):
        def __call__(self, prompt, i):
            reply = super().__call__(prompt, i)
            return "Maybe, it depends." if reply in ("yes", "no") else reply

    model = Vague(known={Q: "Helena"}, relevant={(Q, "David Lynch")}, decompositions={Q: "no idea"}, from_passages={Q: "Missoula"})
    out, seq, updates = run(model, default=["d2"])
    assert seq[3:8] == ["self_knowledge", "retrieve", "relevance", "decompose", "answer"]  # not known, none relevant
    root = _frames(updates)[0]
    assert root["known"] is False and root["relevant"] == [] and root["basis"] == "leaf" and out["answer"] == "Missoula"


# --- limits --------------------------------------------------------------------------------------


def test_frame_cap_stops_a_chatty_decomposer():
    class Chatty(Model):
        """Splits every question into four new ones."""

        def __call__(self, prompt, i):
            if prompt.startswith(prompts.DECOMPOSE_SYSTEM):
                start = len(self.asked) * 4
                self.asked.append(("decompose", _last(r"Question: (.*)", prompt)))
                return "\n".join(f"{n}. What is fact number {start + n}?" for n in range(1, 5))
            return super().__call__(prompt, i)

    model = Chatty()
    out, seq, updates = run(model, default=["d3"], ra_isf_depth=10)  # no recursion_limit given
    frames = _frames(updates)
    assert len(frames) == MAX_FRAMES and max(f["depth"] for f in frames) == 4
    assert any(f"frame cap ({MAX_FRAMES}) reached" in n for n in out["notes"])
    assert any("kept the first 2" in n for n in out["notes"])  # the decomposition that hit the cap
    assert all(f["stage"] == "done" for f in frames) and seq[-1] == "respond"
    assert len(seq) <= RECURSION_LIMIT and out["answer"] == "unknown"


def test_too_many_sub_questions_keep_the_first_four():
    reply = "\n".join(f"{i}. Who is person {i}?" for i in range(1, 8))
    model = Model(decompositions={Q: reply})
    out, _, updates = run(model)
    assert [f["question"] for f in _frames(updates)[1:]] == [f"Who is person {i}?" for i in range(1, 5)]
    assert any("kept the first 4" in n for n in out["notes"])


# --- the parser ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1. Who directed X?\n2. Where was #1 born?", ["Who directed X?", "Where was #1 born?"]),
        ("Sub-questions:\n- Who directed X?\n- When was X released?", ["Who directed X?", "When was X released?"]),
        ("Sub-question 1: Who directed X?\nSub-question 2: Where was #1 born?", ["Who directed X?", "Where was #1 born?"]),
        ("**1.** Who directed X? Answer: Lynch\n2) Where was #1 born", ["Who directed X?", "Where was #1 born"]),
        ("Who directed X?\nWhere was #1 born?", ["Who directed X?", "Where was #1 born?"]),
        ("1. Who directed X?\n2. who directed X\n3. Where was #2 born?", ["Who directed X?", "Where was #1 born?"]),
        ("1. Where was #2 born?\n2. Who directed X?", ["Where was #0 born?", "Who directed X?"]),
        ("1. #1?\n2. ???", []),
        ("The director is Lynch.", []),
        ("", []),
    ],
)
def test_parse_sub_questions(text, expected):
    assert parse_sub_questions(text, ["Where was the director of X born?"])[0] == expected


def test_parse_drops_restatements_and_renumbers_references():
    subs, notes = parse_sub_questions(f"1. {Q}\n2. {DIRECTOR}\n3. Where was #2 born?\n4. Where was #1 born?", [Q])
    assert subs == [DIRECTOR, "Where was #1 born?", "Where was #0 born?"]
    assert len(notes) == 1 and "repeated the question" in notes[0]


def test_parse_drops_a_parent_question_too():
    parent = "Who directed Ronnie Rocket?"
    subs, _ = parse_sub_questions(f"1. {parent}\n2. When was it made?", ["What is Ronnie Rocket?", parent])
    assert subs == ["When was it made?"]


def fallbacks(fn) -> tuple[object, int]:
    """(``fn()``, the parse fall-backs it counted)."""
    result, usage = counted(fn)
    return result, usage["parse_fallbacks"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"sub_questions": "1. Who directed X? 2. Where was #1 born?"}', ["Who directed X?", "Where was #1 born?"]),
        ('{"sub_questions": "1. Who directed X?\\n2. Where was #1 born?"}', ["Who directed X?", "Where was #1 born?"]),
        ('{"sub_questions": "Who directed X? Where was #1 born?"}', ["Who directed X?", "Where was #1 born?"]),
        ('{"sub_questions": "1) Who directed X? Answer: Lynch 2) Where was #1 born"}', ["Who directed X?", "Where was #1 born"]),
        ('{"sub_questions": "1. What film came out in 1999? 2. Who directed #1?"}', ["What film came out in 1999?", "Who directed #1?"]),
        ('{"sub_questions": "1. Where was the director of X born? 2. Who directed X? 3. Where was #2 born?"}', ["Who directed X?", "Where was #1 born?"]),
        ('{"sub_questions": "The director is Lynch."}', []),
    ],
)
def test_parse_sub_questions_reads_the_object_first_without_fall_back(text, expected):
    assert fallbacks(lambda: parse_sub_questions(text, ["Where was the director of X born?"])[0]) == (expected, 0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1. Who directed X?\n2. Where was #1 born?", ["Who directed X?", "Where was #1 born?"]),
        ('{"sub_questions": "1. Who directed X? 2. Where was', ["Who directed X?", "Where was"]),  # cut: salvaged
        ('{"step": "Who directed X"}', []),  # another object: no line of it is a sub-question
        ("", []),
    ],
)
def test_parse_sub_questions_reads_any_other_reply_as_free_text_and_counts_it(text, expected):
    assert fallbacks(lambda: parse_sub_questions(text, ["Where was the director of X born?"])[0]) == (expected, 1)


@pytest.mark.parametrize(
    ("text", "expected", "counted_fallbacks"),
    [('{"answer": "Missoula, Montana."}', "Missoula, Montana", 0), ('{"answer": "unknown"}', "unknown", 0), ("Short answer: Missoula", "Missoula", 1)],
)
def test_answers_are_read_as_short_answers(text, expected, counted_fallbacks):
    assert fallbacks(lambda: prompts.read_answer(text)) == (expected, counted_fallbacks)


def test_the_worked_examples_are_what_the_grammar_allows():
    gbnf(prompts.SCHEMA)  # a bounded grammar exists
    passages = [{"title": "T", "text": "x"}]
    cases = [
        (prompts.decompose_messages(Q), prompts.SCHEMA),
        (prompts.passage_answer_messages(Q, passages, guess=False), prompts.ANSWER_SCHEMA),
        (prompts.passage_answer_messages(Q, passages, guess=True), prompts.ANSWER_SCHEMA),
        (prompts.compose_messages(Q, [(DIRECTOR, "David Lynch")]), prompts.ANSWER_SCHEMA),
    ]
    for messages, schema in cases:
        replies = [m.content for m in messages if m.type == "ai"]
        assert replies and '{"' in messages[0].content  # the rule asks for the object
        for reply in replies:
            found = json.loads(reply)
            assert read_object(reply, schema) == found and reply == as_reply(**found)
            assert all(len(v) <= schema["properties"][k]["maxLength"] for k, v in found.items())
    assert '{"answer": "unknown"}' in prompts.SELF_ANSWER_SYSTEM and prompts.ANSWER_SCHEMA is answer_prompt.SCHEMA
    decomposed = [parse_sub_questions(r.content, [q])[0] for r, (q, _) in zip(cases[0][0][2::2], prompts.DECOMPOSE_EXAMPLES, strict=True)]
    assert decomposed == [subs for _, subs in prompts.DECOMPOSE_EXAMPLES]


class JsonModel(Model):
    """The same replies, as one decoding under their schemas writes them (the judges stay words)."""

    def __call__(self, prompt: str, i: int) -> str:
        reply = super().__call__(prompt, i)
        kind = self.asked[-1][0]
        if kind in ("know", "relevance"):
            return reply
        if kind == "decompose":
            return as_reply(sub_questions=" ".join(reply.splitlines()))
        return as_reply(answer=reply)


def schema_of(prompt: str) -> dict:
    """The schema an RA-ISF prompt's reply is asked under: the decomposition's, or a short answer's."""
    return prompts.SCHEMA if prompt.startswith(prompts.DECOMPOSE_SYSTEM) else answer_prompt.SCHEMA


@pytest.mark.parametrize(
    ("model", "rankings", "default"),
    [
        (lambda: lynch_model(), LYNCH_RANKINGS, None),  # decomposition, passage answers, composition
        (lambda: Model(known={Q: "Missoula, Montana"}), None, None),  # from memory
        (lambda: Model(decompositions={Q: "no idea"}, from_passages={Q: "Missoula, Montana"}), None, ["d3"]),  # a leaf
    ],
)
def test_every_reply_is_asked_under_its_schema_and_read_without_fall_back(model, rankings, default):
    expected = model()
    res = setup(JsonModel(**vars(expected)), rankings, default)
    out = build_graph("ra_isf").invoke({"question": Q}, {"configurable": {"resources": res, "samples": 2}})
    llm = res.llm.inner
    assert out["answer"] == "Missoula, Montana" and out["usage"]["parse_fallbacks"] == 0
    assert None not in llm.schemas and llm.schemas == [schema_of(p) for p in llm.calls]
    free = setup(expected, rankings, default)  # the same model in free text: the same run, read by the fall-backs
    again = build_graph("ra_isf").invoke({"question": Q}, {"configurable": {"resources": free, "samples": 2}})
    assert (again["answer"], again["reasoning_path"]) == (out["answer"], out["reasoning_path"])
    assert again["usage"]["parse_fallbacks"] == len(llm.calls)


def test_structured_output_off_asks_without_schemas_and_reads_the_same():
    res = setup(JsonModel(**vars(lynch_model())), LYNCH_RANKINGS)
    out = build_graph("ra_isf").invoke({"question": Q}, {"configurable": {"resources": res, "samples": 2, "structured_output": False}})
    assert set(res.llm.inner.schemas) == {None} and len(res.llm.inner.schemas) == 1 + 2 + 1 + 2
    assert out["answer"] == "Missoula, Montana" and len(out["hops"]) == 2 and out["usage"]["parse_fallbacks"] == 0


def test_a_json_unknown_from_memory_falls_back_to_retrieval():
    model = JsonModel(known={Q: "unknown"}, relevant={(Q, "David Lynch")}, from_passages={Q: "Missoula, Montana"})
    out, seq, _ = run(model, default=["d2"])
    assert seq[3:7] == ["self_knowledge", "answer", "retrieve", "relevance"] and out["answer"] == "Missoula, Montana"
    assert any("answer from memory was unusable" in n for n in out["notes"]) and out["usage"]["parse_fallbacks"] == 0


# --- the output contract -------------------------------------------------------------------------


def test_output_contract_and_usage():
    res = setup(lynch_model(), LYNCH_RANKINGS)
    out = build_graph("ra_isf").invoke({"question": Q}, {"configurable": {"resources": res, "samples": 2}})
    assert set(out) >= {"answer", "confidence", "reasoning_path", "evidence", "hops", "usage", "messages", "notes"}
    assert "frames" not in out and "stack" not in out  # internal state stays internal
    assert out["confidence"] == 1.0  # both samples say Missoula, Montana
    usage = out["usage"]
    assert usage["calls"]["self_knowledge"] == 3 and usage["calls"]["relevance"] == 3 and usage["calls"]["next_frame"] == 5
    assert usage["judge_calls"] == 3 + 5  # self-knowledge per frame; relevance per passage (d3; d1, d3; d2, d3)
    assert usage["llm_calls"] == 1 + 2 + 1 + 2  # decompose, two answers, compose, two confidence samples
    reply = out["messages"][-1]
    assert isinstance(reply, AIMessage) and reply.content.startswith("Missoula, Montana")
    assert f"1. {DIRECTOR} -> David Lynch" in reply.content and "Ronnie Rocket (d1)" in reply.content


def test_node_updates_stream_one_judgement_per_step():
    _, seq, updates = run(lynch_model(), rankings=LYNCH_RANKINGS)
    assert seq == [
        "ask", "start", "next_frame",
        "self_knowledge", "retrieve", "relevance", "decompose", "next_frame",  # the question
        "self_knowledge", "retrieve", "relevance", "answer", "next_frame",  # Who directed Ronnie Rocket?
        "self_knowledge", "retrieve", "relevance", "answer", "next_frame",  # Where was David Lynch born?
        "compose", "next_frame", "finish", "gather", "confidence", "respond",
    ]
    by_node: dict[str, list[dict]] = {}
    for update in updates:
        for name, value in update.items():
            by_node.setdefault(name, []).append(value)
    assert [v["current"] for v in by_node["next_frame"]] == [0, 1, 2, 0, None]
    assert by_node["decompose"][0]["stack"] == [0, 2, 1]  # first sub-question on top
    assert [v["frames"][i]["known"] for i, v in zip([0, 1, 2], by_node["self_knowledge"], strict=True)] == [False] * 3
    assert by_node["relevance"][1]["frames"][1]["relevant"] == ["d1"]
    assert by_node["answer"][0]["frames"][1]["answer"] == "David Lynch"
    assert by_node["next_frame"][2]["frames"][2]["question"] == BIRTHPLACE  # #1 filled in when visited
    assert by_node["compose"][0]["frames"][0]["answer"] == "Missoula, Montana"


def test_a_chat_thread_starts_each_question_afresh():
    model = Model(known={"What is the capital of Japan?": "Tokyo"}, relevant={(Q, "David Lynch")}, from_passages={Q: "Missoula, Montana"})
    graph = build_graph("ra_isf", checkpointer=InMemorySaver())
    config = {"configurable": {"resources": setup(model, default=["d2"]), "samples": 1, "thread_id": "t"}}
    first = graph.invoke({"question": Q}, config)
    second = graph.invoke({"question": "What is the capital of Japan?"}, config)
    assert first["answer"] == "Missoula, Montana" and second["answer"] == "Tokyo"
    assert second["evidence"] == [] and second["hops"] == []
    frames = graph.get_state(config).values["frames"]
    assert [f["question"] for f in frames] == ["What is the capital of Japan?"]
    assert [m.type for m in second["messages"]] == ["human", "ai", "human", "ai"]


def test_the_graph_is_named_and_allows_every_frames_steps():
    ra_isf = build_graph("ra_isf")
    assert ra_isf.name == "ra_isf" and ra_isf.config["recursion_limit"] == RECURSION_LIMIT
    assert {"self_knowledge", "relevance", "decompose", "compose", "next_frame"} <= set(ra_isf.get_graph().nodes)


def test_stream_shows_every_ra_isf_step(capsys):
    """``sunar ask --stream`` for RA-ISF: each frame, each judgement, the sub-questions, the answers."""
    from sunar.graph import GRAPHS
    from sunar.streaming import stream_steps

    res = setup(lynch_model(), LYNCH_RANKINGS)
    out = stream_steps(build_graph("ra_isf"), {"question": Q}, {"configurable": {"resources": res, "samples": 2}}, GRAPHS["ra_isf"].describe)
    shown = capsys.readouterr().err.splitlines()
    assert out["answer"] == "Missoula, Montana"
    assert f"[next_frame] work on (depth 0): {Q}" in shown
    assert "[self_knowledge] known from memory: no" in shown
    assert any(line.startswith("[retrieve] ") and line.endswith(" passages") for line in shown)
    assert any(line.startswith("[relevance] ") and "judged relevant" in line for line in shown)
    assert any(line.startswith("[decompose] sub-questions: ") for line in shown)
    assert any(line.startswith("[answer] answer (passages): ") for line in shown)
    assert "[finish] final answer: Missoula, Montana" in shown
