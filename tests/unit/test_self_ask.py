"""The Self-Ask parser on well-formed and malformed outputs, and decompose's deliberate fall-backs."""

import pytest

from fakes import MemoryIndex, TableScorer, docs, resources, scripted_llm, self_ask_script
from sunar.errors import SunarError
from sunar.follow_ups import builds_on, describes_hidden, loops_on_answer, remaining
from sunar.graph import build_graph
from sunar.prompts.answer import clean_answer
from sunar.prompts.mer import parse_mer
from sunar.prompts.self_ask import NUDGE, REPEAT_NUDGE, parse_self_ask
from sunar.text import restates, substituted


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Follow up: Who directed Ronnie Rocket?", ("follow_up", "Who directed Ronnie Rocket?")),
        ("Follow-up question: Who is X?\nIntermediate answer: Y", ("follow_up", "Who is X?")),
        ("**Follow up:** Who is X?", ("follow_up", "Who is X?")),
        ("Are follow up questions needed here: Yes.\nFollow up: Who is X?", ("follow_up", "Who is X?")),
        ("So the final answer is: Missoula, Montana.", ("final", "Missoula, Montana")),
        ("[Final Answer]: Missoula", ("final", "Missoula")),
        ("the final answer is Missoula", ("final", "Missoula")),
        ("So the final answer is:", ("final", "unknown")),
        ("Who directed Ronnie Rocket?", ("follow_up", "Who directed Ronnie Rocket?")),
        ("Intermediate answer: David Lynch", ("invalid", "Intermediate answer: David Lynch")),
        ("I think it is Lynch", ("invalid", "I think it is Lynch")),
        ("", ("invalid", "")),
        ("\n\n  \n", ("invalid", "")),
        ("Follow up:", ("invalid", "Follow up:")),
    ],
)
def test_parse_self_ask(text, expected):
    assert parse_self_ask(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[Answer]: Lynch directed it and was born in Missoula.\n[Final Answer]: Missoula, Montana", ("Lynch directed it and was born in Missoula.", "Missoula, Montana", True)),
        ("Reasoning here.\nMissoula", ("Reasoning here.", "Missoula", False)),
        ("", ("", "unknown", False)),
        ("[Final Answer]: I don't know", ("", "unknown", True)),
        # the colon dropped (seen on dev: "[Final Answer] Neil Patrick Harris")
        ("[Answer]: Harris plays him.\n[Final Answer] Neil Patrick Harris", ("Harris plays him.", "Neil Patrick Harris", True)),
        ("Reasoning.\n[Final Answer] Clancy Brown", ("Reasoning.", "Clancy Brown", True)),
    ],
)
def test_parse_mer(text, expected):
    assert parse_mer(text) == expected


def test_clean_answer():
    assert clean_answer("  Short answer: \"Missoula\".\nmore") == "Missoula"
    assert clean_answer("") == "unknown" and clean_answer("Not mentioned in the documents") == "unknown"
    assert clean_answer("Not specified in the documents.") == "unknown" == clean_answer("not provided")
    assert clean_answer("Nothing Compares 2 U") == "Nothing Compares 2 U"  # a title that begins like a refusal is an answer
    assert clean_answer("[Final Answer] Clancy Brown") == "Clancy Brown" == clean_answer("[Answer]: Clancy Brown")
    assert clean_answer("Answer key") == "Answer key"  # a label needs its colon unless bracketed


CORPUS = docs(("d1", "Ronnie Rocket", "Ronnie Rocket is an unfinished film by David Lynch."), ("d2", "David Lynch", "Lynch was born in Missoula."))


def _graph(self_ask, answer, variant="sunar_r", question="Where was the director of Ronnie Rocket born?", **settings):
    """Run a graph over CORPUS with a scripted Self-Ask model; returns (output, llm)."""
    llm = scripted_llm(self_ask, answer)
    res = resources(llm, TableScorer({"d1": 1.0, "d2": 0.5}), MemoryIndex(CORPUS, default_ranking=[("d1", 2.0), ("d2", 1.0)]))
    return build_graph(variant).invoke({"question": question}, {"configurable": {"resources": res, **settings}}), llm


def run(steps, variant="sunar_r", max_hops=4, answer=lambda q, i: "David Lynch", question="Where was the director of Ronnie Rocket born?", **settings):
    return _graph(self_ask_script(steps), answer, variant, question, max_hops=max_hops, samples=2, **settings)


def test_two_hops_then_final_answer():
    answers = {"Who directed Ronnie Rocket?": "David Lynch", "Where was David Lynch born?": "Missoula"}
    out, _ = run(
        ["Follow up: Who directed Ronnie Rocket?", "Follow up: Where was David Lynch born?", "So the final answer is: Missoula"],
        answer=lambda q, i: answers.get(q, "Missoula" if i == 0 else "Helena"),
    )
    assert out["reasoning_path"] == [{"question": q, "answer": a} for q, a in answers.items()]
    assert out["answer"] == "Missoula" and out["notes"] == []
    assert out["confidence"] == 0.5  # of 2 samples, one agrees with the answer


def test_hop_limit_forces_the_answer():
    out, _ = run([f"Follow up: question number {i}?" for i in range(10)], max_hops=2)
    assert len(out["hops"]) == 2 and any("hop limit (2)" in n for n in out["notes"])
    assert out["answer"] == "David Lynch"  # conclude answered from the evidence


def test_repeated_follow_up_stops_decomposition():
    out, _ = run(["Follow up: Who directed Ronnie Rocket?", "Follow up: who directed ronnie rocket"])
    assert len(out["hops"]) == 1 and any("repeated a follow-up" in n for n in out["notes"])






def test_what_the_question_still_asks_once_each_hop_s_part_is_answered():
    assert substituted("Who is the father of the composer of song I Am The World?", "Who composed I Am The World?", "Robin Gibb") == (
        "Who is the father of Robin Gibb?")
    assert substituted("Who is the employer of the physicist who Mach number is named after?", "Who is the physicist who Mach number is named after?",
                       "Ernst Mach") == "Who is the employer of Ernst Mach?"
    # the question's context stays; the article opening the part goes with it, not across a comma
    assert substituted("In A League of Their Own, who played the husband of the actress who played Thelma in Thelma and Louise?",
                       "Who played Thelma in Thelma and Louise?", "Geena Davis") == "In A League of Their Own, who played the husband of Geena Davis?"
    assert substituted("When is the director of film Udayananu Tharam's birthday?", "Who is the director of Udayananu Tharam?",
                       "Rosshan Andrrews") == "When is Rosshan Andrrews's birthday?"  # the possessive kept
    assert substituted("Where was the director of film Ronnie Rocket born?", "Where was David Lynch born?", "Missoula") is None  # no name shared
    assert substituted("Who is the spouse of Vivien Leigh?", "Who is the spouse of Vivien Leigh?", "Laurence Olivier") is None  # nothing left
    hops = [{"question": "Who directed Ronnie Rocket?", "answer": "David Lynch"}, {"question": "Where was David Lynch born?", "answer": "Missoula"}]
    assert remaining("Where was the director of film Ronnie Rocket born?", hops[:1]) == "Where was David Lynch born?"
    assert remaining("Where was the director of film Ronnie Rocket born?", hops) is None  # only after the first hop
    assert remaining("Where was the director of film Ronnie Rocket born?", [{**hops[0], "answer": "unknown"}]) is None


def test_broken_format_at_first_step_retrieves_for_the_question_itself():
    out, _ = run(["Lorem ipsum", "So the final answer is: Missoula"])
    assert out["hops"][0]["question"] == "Where was the director of Ronnie Rocket born?"
    assert any("broke the format" in n for n in out["notes"]) and out["answer"] == "Missoula"


def test_final_answer_before_any_retrieval_still_retrieves():
    out, _ = run(["So the final answer is: Helena", "So the final answer is: Missoula"])
    assert len(out["hops"]) == 1 and out["hops"][0]["evidence"]
    assert out["answer"] == "Missoula"


def test_broken_format_later_stops_and_concludes():
    out, _ = run(["Follow up: Who directed Ronnie Rocket?", "Intermediate answer: oops"])
    assert len(out["hops"]) == 1 and any("broke the format" in n for n in out["notes"])
    assert out["answer"] == "David Lynch"


def test_unknown_intermediate_and_empty_answers():
    out, _ = run(["Follow up: Who directed Ronnie Rocket?", "So the final answer is: unknown"], answer=lambda q, i: "")
    assert out["hops"][0]["answer"] == "unknown" and out["answer"] == "unknown"


@pytest.mark.parametrize("bad", ["", "   ", "???", "x" * 2001, 42, None])
def test_bad_questions_are_one_clear_error(bad):
    with pytest.raises(SunarError) as info:
        run(["Follow up: a?"], question=bad)
    assert "\n" not in str(info.value)


def _nudged(steps: list[str], after_nudge: str, nudge: str = NUDGE):
    """A Self-Ask model replying `steps` by step number, and `after_nudge` once nudged."""
    by_step = self_ask_script(steps)

    def reply(prompt: str) -> str:
        return after_nudge if nudge in prompt else by_step(prompt)

    return reply


def _echo_then(after_nudge: str):
    """A Self-Ask model that first echoes the question, and after the nudge says `after_nudge`."""
    return _nudged(["Follow up: Where was the director of Ronnie Rocket born?", "So the final answer is: Missoula"], after_nudge)


def _run_with(self_ask, question="Where was the director of Ronnie Rocket born?", answer="Missoula"):
    return _graph(self_ask, lambda q, i: answer, question=question)


def test_echoed_question_is_asked_again_for_the_hidden_entity():
    out, llm = _run_with(_echo_then("Follow up: Who directed Ronnie Rocket?"))
    assert out["hops"][0]["question"] == "Who directed Ronnie Rocket?"
    assert any("asked again" in n for n in out["notes"]) and out["answer"] == "Missoula"


def test_echo_after_the_nudge_keeps_the_question():
    out, _ = _run_with(_echo_then("Follow up: where was the director of Ronnie Rocket born"))
    assert out["hops"][0]["question"] == "Where was the director of Ronnie Rocket born?"
    assert any("used as the first sub-question" in n for n in out["notes"])


def test_restates_is_strict():
    q = "Who is the father of Edward Baring, 1st Baron Revelstoke's father?"
    assert restates("who is the father of edward baring 1st baron revelstoke's father", q)
    assert not restates("Who is Edward Baring, 1st Baron Revelstoke's father?", q)  # a real first step
    assert not restates("", q)


def _repeat_then(after_nudge: str):
    """A Self-Ask model that asks its first follow-up again, and after the nudge says `after_nudge`."""
    steps = ["Follow up: Who directed Ronnie Rocket?", "Follow up: Who directed Ronnie Rocket?", "So the final answer is: Helena"]
    return _nudged(steps, after_nudge, REPEAT_NUDGE)


@pytest.mark.parametrize(
    ("after_nudge", "hops", "answer"),
    [
        ("Follow up: Where was David Lynch born?", 2, "Helena"),  # a new step, then the final step
        ("So the final answer is: Missoula", 1, "Missoula"),  # the answer: the path ends there
    ],
)
def test_repeated_follow_up_is_asked_again_once(after_nudge, hops, answer):
    out, _ = _run_with(_repeat_then(after_nudge))
    assert len(out["hops"]) == hops and out["answer"] == answer
    assert any("repeated a follow-up; asked again" in n for n in out["notes"])


@pytest.mark.parametrize(
    ("follow_up", "answers", "expected"),
    [
        ("Where was David Lynch born?", ["David Lynch"], True),
        ("What is the capital of Montana?", ["David Lynch", "Missoula, Montana"], True),
        ("Where was Ronnie Rocket directed?", ["David Lynch", "Missoula, Montana"], False),
        ("Where was the University of Zurich founded?", ["University of Zurich"], True),
        ("Who founded the University of Basel?", ["University of Zurich"], True),  # "university" is named
        ("Where was he born in 1875?", ["1875"], True),
        ("Which film came out first?", ["Jaws", "Persona"], False),
        ("What is the capital of it?", ["US", "of"], True),  # no answer has a content word: cannot tell
        ("When was Pablo Picasso born?", ["unknown", "Unknown."], True),  # no answers found: cannot tell
        ("Who is the director?", [], True),
    ],
)
def test_builds_on(follow_up, answers, expected):
    assert builds_on(follow_up, [{"question": "q", "answer": a} for a in answers]) is expected


DRIFT = ["Follow up: Who directed Ronnie Rocket?", "Follow up: Where was David Lynch born?", "Follow up: Where was Ronnie Rocket directed?"]
LYNCH = {"Who directed Ronnie Rocket?": "David Lynch", "Where was David Lynch born?": "Missoula, Montana"}


def _lynch(q, i):
    """Intermediate answers; the drifted follow-up gets its own wrong answer; the final answer calls
    (conclude, MER) read the chain's answer."""
    return "Los Angeles" if q.startswith("Where was Ronnie Rocket directed") else LYNCH.get(q, "Missoula, Montana")


@pytest.mark.parametrize("variant", ["sunar_r", "sunar"])
def test_follow_up_that_left_the_chain_ends_the_decomposition(variant):
    out, _ = run(DRIFT, variant=variant, max_hops=3, answer=_lynch, chain_check_after=2)
    assert [h["question"] for h in out["hops"]] == list(LYNCH)
    assert any("names none of the 2 answers found; decomposition stopped" in n for n in out["notes"])
    assert out["answer"] == "Missoula, Montana"


def test_chain_check_off_asks_the_drifting_follow_up():
    out, _ = run(DRIFT, max_hops=3, answer=_lynch, chain_check_after=0)
    assert out["hops"][-1]["question"] == "Where was Ronnie Rocket directed?" and len(out["hops"]) == 3
    assert any("hop limit (3)" in n for n in out["notes"]) and out["hops"][-1]["answer"] == "Los Angeles"


@pytest.mark.parametrize(("after", "hops"), [(0, 3), (1, 1), (2, 3), (3, 3)])
def test_chain_check_starts_after_that_many_answers(after, hops):
    """The second follow-up of a comparison names no answer (it opens the second branch), so
    checking from one answer on would cut it; from two on, the third follow-up names one and goes on."""
    steps = ["Follow up: Who directed Ronnie Rocket?", "Follow up: Who directed Persona?", "Follow up: Where was David Lynch born?", "So the final answer is: Missoula"]
    out, _ = run(steps, max_hops=4, answer=lambda q, i: {"Who directed Persona?": "Ingmar Bergman"}.get(q, _lynch(q, i)), chain_check_after=after)
    assert len(out["hops"]) == hops


@pytest.mark.parametrize(
    ("follow_up", "expected"),
    [
        ("When did Louis II, Count Palatine of Zweibrücken's father die?", True),
        ("What university did the director of film Everything I Like graduate from?", True),
        ("When was Hector Macpherson Jr.'s mother born?", True),
        ("Where was the director of film Ronnie Rocket born?", True),
        ("Who is Mustafa Zaman Abbasi's father?", False),  # asks for the name
        ("What nationality is Mustafa Zaman Abbasi's father?", False),  # the description ends it: an echo, not this
        ("Who plays Marty McFly's daughter in Back to the Future 2?", False),  # who: asks for the person
        ("What is the director of film Everything I Like?", False),
        ("Who wrote The Canon of Medicine?", False),
        ("Which county borders Bancroft's county?", False),  # county: not a person
        ("Who directed the film Dollar?", False),
    ],
)
def test_describes_hidden(follow_up, expected):
    assert describes_hidden(follow_up) is expected


QUESTION = "When was Hector Macpherson Jr.'s father born?"
UNSPLIT = "Follow up: When was Hector Macpherson Jr.'s father born in Scotland?"


def _described_then(after_nudge: str):
    """A Self-Ask model whose first follow-up asks about the father before naming him."""
    return _nudged([UNSPLIT, "Follow up: When was Hector Macpherson Sr. born?", "So the final answer is: 1851"], after_nudge)


@pytest.mark.parametrize(
    ("after_nudge", "first", "note"),
    [
        ("Follow up: Who was Hector Macpherson Jr.'s father?", "Who was Hector Macpherson Jr.'s father?", "asked again and it gave a new step"),
        # copied the instructions: shares no word with the question
        ("Follow up: Who is the person, place or thing the question describes?", UNSPLIT[11:], "no better step, so it is kept"),
        ("Follow up: When was Hector Macpherson Jr.'s father born?", UNSPLIT[11:], "no better step, so it is kept"),  # the same problem
    ],
)
def test_first_follow_up_about_an_unnamed_person_is_asked_again_once(after_nudge, first, note):
    out, _ = _run_with(_described_then(after_nudge), question=QUESTION, answer="Hector Macpherson Sr.")
    assert out["hops"][0]["question"] == first and len(out["hops"]) == 2
    assert any("person it had not named" in n and note in n for n in out["notes"])


@pytest.mark.parametrize(
    ("follow_up", "step", "answer", "question", "expected"),
    [
        ("Who is the spouse of Chris Pérez?", "Who is the spouse of Selena?", "Chris Pérez", "Who is the spouse of the performer of song Missing My Baby?", True),
        ("Who is Sir Francis Baring, 1st Baronet?", "Who is Edward Baring's father?", "Sir Francis Baring, 1st Baronet", "Who is the father of Edward Baring's father?", True),  # asks nothing else
        ("Maria Bello wife in grown ups?", "Who plays the wife of the screenwriter in Grown Ups?", "Maria Bello", "Who plays the wife of the screenwriter in Grown Ups?", True),
        ("Who is the father of Henry Baring?", "Who is Edward Baring's father?", "Henry Baring", "Who is the father of Edward Baring's father?", False),  # named twice
        ("Where was David Lynch born?", "Who directed Ronnie Rocket?", "David Lynch", "Where was the director of Ronnie Rocket born?", False),  # a new relation
        ("Who is the spouse of Selena?", "Who performed Missing My Baby?", "Selena", "Who is the spouse of the performer of song Missing My Baby?", False),
        ("Who is the spouse of Mel Brooks?", "Who is the spouse of Selena?", "Chris Pérez", "Who is the spouse of the performer of Missing My Baby?", False),  # not the last answer
        ("Who is unknown?", "Who is the spouse of Selena?", "unknown", "Who is the spouse of the performer of Missing My Baby?", False),  # no answer to go round
    ],
)
def test_loops_on_answer(follow_up, step, answer, question, expected):
    assert loops_on_answer(follow_up, [{"question": step, "answer": answer}], question) is expected
    assert loops_on_answer(follow_up, [], question) is False


SPOUSE = "Who is the spouse of the director of Ronnie Rocket?"
LOOP = ["Follow up: Who directed Ronnie Rocket?", "Follow up: Who is the spouse of David Lynch?", "Follow up: Who is the spouse of Emily Stofle?", "So the final answer is: Mel Brooks"]


@pytest.mark.parametrize("variant", ["sunar_r", "sunar"])
def test_a_follow_up_going_round_the_last_answer_ends_with_that_answer(variant):
    spouses = {"Who directed Ronnie Rocket?": "David Lynch", "Who is the spouse of David Lynch?": "Emily Stofle", "Who is the spouse of Emily Stofle?": "David Lynch"}

    def answer(q, i):
        return spouses.get(q, "Emily Stofle")  # MER reads the chain's last answer

    out, _ = run(LOOP, variant=variant, answer=answer, question=SPOUSE)
    assert len(out["hops"]) == 3  # off by default: the loop is asked
    out, _ = run(LOOP, variant=variant, answer=answer, question=SPOUSE, end_loops=True)
    assert [h["question"] for h in out["hops"]] == ["Who directed Ronnie Rocket?", "Who is the spouse of David Lynch?"]
    assert out["answer"] == "Emily Stofle"
    assert any("'Who is the spouse of Emily Stofle?' goes round the last answer" in n for n in out["notes"])
