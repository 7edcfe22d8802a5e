"""The rule-based clean-up of the final answer (``shorten``: no call), each rule alone and in both graphs;
with a scripted LLM."""

import pytest

from fakes import MemoryIndex, TableNLI, TableScorer, docs, resources, scripted_llm
from sunar.graph import build_graph, describe_step
from sunar.nodes.shorten import shorten

QUESTION = "Where was the director of Ronnie Rocket born?"
CORPUS = docs(
    ("rr", "Ronnie Rocket", "Ronnie Rocket is an unfinished film by David Lynch."),
    ("dl", "David Lynch", "David Lynch was born in Missoula, Montana, on January 20, 1946."),
)
RANKINGS = {"Who directed Ronnie Rocket?": [("rr", 3.0)], "Where was David Lynch born?": [("dl", 3.0)]}


def script():
    """A model that answers nothing: the rules make no call."""
    return scripted_llm(lambda prompt: "So the final answer is: unknown", lambda question, i: "unknown")


def node(answer: str, **config):
    llm = script()
    res = resources(llm, TableScorer({}), MemoryIndex(CORPUS, RANKINGS), nli=TableNLI())
    update = shorten({"question": QUESTION, "answer": answer}, {"configurable": {"resources": res, **config}})
    return update, llm


def graph_config(final: str, last: str = "") -> dict:
    """A scripted run of either graph whose chain (or its last hop only: ``last``), MER and Self-Ask
    all end with ``final``."""

    def self_ask(prompt: str) -> str:
        found = prompt.rsplit("Question:", 1)[1].count("Intermediate answer:")
        return ["Follow up: Who directed Ronnie Rocket?", "Follow up: Where was David Lynch born?", f"So the final answer is: {final}"][min(found, 2)]

    def answer(question: str, i: int) -> str:
        table = {"Who directed Ronnie Rocket?": "David Lynch", "Where was David Lynch born?": last or final, "MER:" + QUESTION: final}
        return table.get(question, "unknown")

    res = resources(scripted_llm(self_ask, answer), TableScorer({"rr": 0.9, "dl": 0.8}), MemoryIndex(CORPUS, RANKINGS), nli=TableNLI())
    return {"resources": res, "batch_size": 2, "budget": 2, "samples": 2, "calibration": "off"}


@pytest.mark.parametrize(
    ("question", "answer", "expected"),
    [
        ("Where was the director of film See Naples And Die born?", "Alexandria, Egypt", "Alexandria"),
        ("Where did he die?", "Hradec Králové, Austria-Hungary", "Hradec Králové"),  # a former state
        ("Where did he study?", "Clifton College, London, United States", "Clifton College, London"),
        ("Where was she born?", "Missoula, Montana, USA", "Missoula, Montana"),
        ("Where was she born?", "Weston-super-Mare, Somerset", "Weston-super-Mare, Somerset"),  # a county stays
        ("Where was she born?", "Germany", "Germany"),  # nothing but a country
        ("Where was she born?", "Atlanta, Georgia", "Atlanta, Georgia"),  # a country's name that is a US state's too
        ("Which country was she born in?", "Munich, Germany", "Munich, Germany"),  # the question asks for it
        ("What is the nationality of the director?", "Paris, France", "Paris, France"),
        ("How many people live there?", "3,771,900", "3,771,900"),
        ("When was he born?", "April 22, 1875", "April 22, 1875"),
    ],
)
def test_an_answer_without_its_country(question, answer, expected):
    from sunar.text import without_country

    assert without_country(question, answer) == expected


def test_drop_country_is_a_rule_with_no_call_and_a_note():
    update, llm = node("Munich, Germany", drop_country=True)
    assert update["answer"] == "Munich" and update["notes"] == ["the country was dropped from the answer 'Munich, Germany'"]
    assert not llm.calls
    for answer, config in [("Munich, Germany", {"drop_country": False}), ("unknown", {"drop_country": True}), ("Munich", {"drop_country": True})]:
        update, llm = node(answer, **config)
        assert "answer" not in update and not llm.calls


@pytest.mark.parametrize("variant", ["sunar", "self_ask"])
def test_both_graphs_drop_the_country_of_their_final_answer(variant):
    cfg = graph_config("Missoula, United States")
    assert build_graph(variant).invoke({"question": QUESTION}, {"configurable": cfg})["answer"] == "Missoula, United States"
    assert build_graph(variant).invoke({"question": QUESTION}, {"configurable": {**cfg, "drop_country": True}})["answer"] == "Missoula"


POP = "Along with the Closer performer, what notable pop artist started out his career on adult contemporary radio?"
ON_AC = "Michael Bublé and Josh Groban started out as AC artists. Michael Bublé sings standards."


@pytest.mark.parametrize(
    ("question", "answer", "titles", "texts", "expected"),
    [
        (POP, "Michael Bublé and Josh Groban", [], [ON_AC], "Michael Bublé"),
        (POP, "Michael Bublé and Josh Groban", [], [ON_AC.split(".")[0], "Josh Groban"], "Josh Groban"),  # the first found on its own
        (POP, "Michael Bublé and Josh Groban", [], [ON_AC.split(".")[0]], "Michael Bublé and Josh Groban"),  # only within the whole
        ("Who led the expedition?", "Chen Zheng and Chen Yuanguang", [], ["Chen Zheng, together with his son Chen Yuanguang, led it"], "Chen Zheng"),
        ("Which artist was featured along with Kenny G?", "George Benson, Kenny G, Dave Koz", [], ["George Benson, Kenny G, and Dave Koz"], "George Benson"),
        ("Which artist was featured along with Kenny G?", "Kenny G, George Benson", [], ["Kenny G and George Benson"], "Kenny G, George Benson"),  # two by a comma: a qualifier
        ("Who played in it?", "Kenny G and George Benson", [], ["Kenny G and George Benson; George Benson, Kenny G"], "Kenny G"),
        ("Who played there along with Kenny G?", "Kenny G and George Benson", [], ["George Benson, Kenny G"], "George Benson"),  # the question names Kenny G
        ("Where was he born?", "Springfield, Sangamon County, Illinois", [], ["Springfield is the seat of Sangamon County, Illinois"], "Springfield, Sangamon County, Illinois"),
        ("What company merged with it?", "American Car and Foundry Company", [], ["twelve companies merged to form American Car and Foundry Company"], "American Car and Foundry Company"),
        ("Which film was he in?", "Master and Commander", ["Master and Commander: The Far Side of the World"], ["Master Jack and Commander Aubrey"], "Master and Commander"),
        ("Which department ran it?", "Health and Human Services", ["Department of Health and Human Services"], ["Health, Human Services"], "Health and Human Services"),
        ("Who were the founders?", "Chen Zheng and Chen Yuanguang", [], ["Chen Zheng, Chen Yuanguang"], "Chen Zheng and Chen Yuanguang"),  # asks for several
        ("When did they win the cup?", "1898 and 1959", [], ["1898, 1959"], "1898 and 1959"),  # dates are no names
        ("Who wrote it?", "The Beatles and The Who", [], ["The Beatles, The Who"], "The Beatles and The Who"),
        ("Who sang it?", "Prince and Madonna", [], ["Prince, Madonna"], "Prince and Madonna"),  # one word: not name enough
    ],
)
def test_a_list_of_names_is_cut_to_one_the_pages_or_samples_hold_on_its_own(question, answer, titles, texts, expected):
    from sunar.text import one_of_list

    assert one_of_list(question, answer, titles, texts) == expected


def test_one_answer_cuts_a_list_after_the_country_with_a_note_and_no_call():
    state = {"question": POP, "answer": "Michael Bublé and Josh Groban", "hops": [
        {"question": "Who started out on AC radio?", "answer": "Michael Bublé and Josh Groban", "batches": [],
         "evidence": [{"id": "ac", "title": "Adult contemporary music", "text": ON_AC.split(".")[0], "score": 1.0}],
         "samples": ["Michael Bublé and Josh Groban", "Michael Bublé"]}]}
    llm = script()
    res = resources(llm, TableScorer({}), MemoryIndex(CORPUS, RANKINGS), nli=TableNLI())
    update = shorten(state, {"configurable": {"resources": res, "one_answer": True}})
    assert update["answer"] == "Michael Bublé" and not llm.calls  # held on its own by a sample
    assert update["notes"] == ["the list 'Michael Bublé and Josh Groban' was cut to the one name asked for"]
    assert "answer" not in shorten(state, {"configurable": {"resources": res, "one_answer": False}})
    assert "answer" not in shorten({**state, "hops": [{**state["hops"][0], "samples": []}]}, {"configurable": {"resources": res}})  # on by default
    from sunar.configuration import Configuration
    from sunar.nodes.shorten import by_rule

    assert by_rule({"question": "Who sang it?", "evidence": [{"title": "X", "text": "Ann Lee and Bob Ray. Bob Ray, England"}]}, "Ann Lee and Bob Ray, England",
                   Configuration(drop_country=True, one_answer=True)) == ("Bob Ray", ["the country was dropped from the answer 'Ann Lee and Bob Ray, England'",
                                                                                  "the list 'Ann Lee and Bob Ray' was cut to the one name asked for"])


@pytest.mark.parametrize("variant", ["sunar", "self_ask"])
def test_both_graphs_cut_a_final_list_to_one_name_their_pages_hold(variant):
    cfg = graph_config("Ronnie Rocket and David Lynch")  # the question names the first
    assert build_graph(variant).invoke({"question": QUESTION}, {"configurable": {**cfg, "one_answer": False}})["answer"] == "Ronnie Rocket and David Lynch"
    out = build_graph(variant).invoke({"question": QUESTION}, {"configurable": cfg})  # on by default
    assert out["answer"] == "David Lynch" and "the list 'Ronnie Rocket and David Lynch' was cut to the one name asked for" in out["notes"]


@pytest.mark.parametrize(
    ("answer", "texts", "expected"),
    [
        ("22 February 1720", ["He died on February 22, 1720, in Tbilisi."], "February 22, 1720"),
        ("22 February, 1720", ["died February 22 1720"], "February 22 1720"),
        ("February 22, 1720", ["He died on 22 February 1720."], "22 February 1720"),
        ("3rd generation", ["USB came with the third generation iPod."], "third generation"),
        ("Third generation", ["USB came with the 3rd generation iPod."], "3rd generation"),
        ("22nd Infantry Division", ["the twenty-second Infantry Division"], "22nd Infantry Division"),  # past the twentieth: as it is
        # as it was: the pages hold it as it is (whatever the case), or not in another way either
        ("22 February 1720", ["died 22 February 1720", "born February 22, 1720"], "22 February 1720"),
        ("1st Baron Revelstoke", ["Edward Baring, 1st baron Revelstoke"], "1st Baron Revelstoke"),
        ("3rd generation", ["the third album; the 3rd gen"], "3rd generation"),  # "third generation" is not there
        ("He died on 22 February 1720", ["February 22, 1720"], "He died on 22 February 1720"),
        ("22 Feb 1720", ["February 22, 1720"], "22 Feb 1720"),
        ("22 February 1720", [], "22 February 1720"),
        ("Missoula", ["born in Missoula, Montana"], "Missoula"),
    ],
)
def test_a_date_or_ordinal_is_written_as_the_pages_write_it(answer, texts, expected):
    from sunar.text import in_pages_form

    assert in_pages_form(answer, texts) == expected


def test_page_form_is_a_rule_with_no_call_and_a_note_after_the_list_rule():
    from sunar.configuration import Configuration
    from sunar.nodes.shorten import by_rule

    pages = [{"title": "Rodam", "text": "Ann Lee died on February 22, 1720. Bob Ray was a painter."}]
    state = {"question": "When did she die?", "hops": [{"question": "When did Ann Lee die?", "answer": "22 February 1720", "evidence": pages}]}
    assert by_rule(state, "22 February 1720", Configuration()) == ("February 22, 1720", ["the answer '22 February 1720' was written as its pages write it"])
    assert by_rule(state, "22 February 1720", Configuration(page_form=False)) == ("22 February 1720", [])
    assert by_rule(state, "unknown", Configuration()) == ("unknown", [])
    llm = script()
    res = resources(llm, TableScorer({}), MemoryIndex(CORPUS, RANKINGS), nli=TableNLI())
    update = shorten({**state, "answer": "22 February 1720"}, {"configurable": {"resources": res}})
    assert update["answer"] == "February 22, 1720" and not llm.calls


@pytest.mark.parametrize("variant", ["sunar", "self_ask"])
def test_both_graphs_write_a_final_date_as_their_pages_do(variant):
    cfg = graph_config("20 January 1946")  # the page: "born in Missoula, Montana, on January 20, 1946"
    assert build_graph(variant).invoke({"question": QUESTION}, {"configurable": {**cfg, "page_form": False}})["answer"] == "20 January 1946"
    out = build_graph(variant).invoke({"question": QUESTION}, {"configurable": cfg})  # on by default
    assert out["answer"] == "January 20, 1946" and "the answer '20 January 1946' was written as its pages write it" in out["notes"]


def test_a_final_answer_that_is_a_bridge_gives_way_to_the_last_hops():
    from sunar.configuration import Configuration
    from sunar.nodes.shorten import by_rule, past_the_bridge

    hops = [{"question": "Who did Hagar marry?", "answer": "Abraham"}, {"question": "Who did Abraham marry after Sarah's death?", "answer": "Keturah"}]
    assert past_the_bridge(hops, "Abraham") == ("Keturah", "Who did Hagar marry?")
    assert past_the_bridge(hops, "abraham's") == ("Keturah", "Who did Hagar marry?")  # possessive or not
    assert past_the_bridge(hops, "Keturah") is None and past_the_bridge(hops, "Sarah") is None  # no bridge
    assert past_the_bridge(hops[:1], "Abraham") is None  # one hop: nothing names it later
    assert past_the_bridge([*hops[:1], {**hops[1], "answer": "unknown"}], "Abraham") is None  # the last hop names nothing
    assert past_the_bridge([*hops[:1], {**hops[1], "answer": "Abraham"}], "Abraham") is None  # the last hop says the bridge too
    assert past_the_bridge([{**hops[0], "question": "When was Hagar born?"}, {**hops[1], "question": "Who did he marry?"}], "Abraham") is None  # not named later
    state = {"question": "Who did the spouse of Hagar marry after the death of Sarah?", "hops": hops}
    note = "the answer 'Abraham' answers the step 'Who did Hagar marry?' on the way; the last hop's answer was taken"
    assert by_rule(state, "Abraham", Configuration(bridge_to_last=True)) == ("Keturah", [note])
    assert by_rule(state, "Abraham", Configuration(bridge_to_last=False)) == ("Abraham", [])
    moved = {**state, "hops": [hops[0], {**hops[1], "answer": "Hebron, Israel"}]}  # then the next rule acts on the last hop's answer
    assert by_rule(moved, "Abraham", Configuration(bridge_to_last=True, drop_country=True)) == (
        "Hebron", [note, "the country was dropped from the answer 'Hebron, Israel'"])


@pytest.mark.parametrize("variant", ["sunar", "self_ask"])
def test_both_graphs_take_the_last_hops_answer_for_a_bridge(variant):
    cfg = graph_config("David Lynch", last="Missoula")  # the chain's last hop answered Missoula; MER and Self-Ask the bridge
    assert build_graph(variant).invoke({"question": QUESTION}, {"configurable": {**cfg, "bridge_to_last": False}})["answer"] == "David Lynch"
    out = build_graph(variant).invoke({"question": QUESTION}, {"configurable": cfg})  # on by default
    assert out["answer"] == "Missoula"
    note = "the answer 'David Lynch' answers the step 'Who directed Ronnie Rocket?' on the way; the last hop's answer was taken"
    assert note in out["notes"]
    steps = list(build_graph(variant).stream({"question": QUESTION}, {"configurable": cfg}, stream_mode="updates"))
    assert describe_step("shorten", next(u["shorten"] for u in steps if "shorten" in u), {}) == f"answer now Missoula: {note}"


@pytest.mark.parametrize(
    ("question", "last", "answer", "expected"),
    [
        ("Where did Martin Šulík graduate from?", "Academy of Performing Arts in Bratislava", "Bratislava", "Academy of Performing Arts in Bratislava"),
        ("Where did he study?", "University of Texas at Austin", "austin", "University of Texas at Austin"),
        ("What is the date of death of the composer of Limehouse Blues?", "2 May 1934", "1934", "2 May 1934"),
        ("When did he die?", "May 2, 1934", "1934", "May 2, 1934"),
        ("In what year did he die?", "2 May 1934", "1934", None),  # the question asks for the end
        ("In which city did he study?", "Academy of Performing Arts in Bratislava", "Bratislava", None),
        ("Where was he born?", "Alexandria, Egypt", "Alexandria", None),  # the head kept: not an end
        ("Where was he born?", "Palos Verdes Estates, California", "California", None),  # a region after a comma
        ("Who was her husband?", "Wonjong of Goryeo", "Goryeo", None),  # "of": no place after it
        ("When did he die?", "May 1934", "1934", None),  # no full date
        ("Where was he born?", "Munich", "nich", None),  # inside a word
        ("Where was he born?", "unknown", "known", None),
        ("Where did he study?", "Academy in Bratislava", "Academy in Bratislava", None),  # the same answer
    ],
)
def test_an_answer_that_is_only_the_end_of_the_last_hops_gives_way_to_it(question, last, answer, expected):
    from sunar.nodes.shorten import end_of_last

    assert end_of_last(question, [{"question": "Who directed it?", "answer": "Martin Šulík"}, {"question": "Where?", "answer": last}], answer) == expected
    assert end_of_last(question, [], answer) is None


def test_whole_last_is_a_rule_with_no_call_and_a_note_before_the_country_is_dropped():
    from sunar.configuration import Configuration
    from sunar.nodes.shorten import by_rule

    state = {"question": "Where did the director of Everything I Like graduate from?",
             "hops": [{"question": "Who directed Everything I Like?", "answer": "Martin Šulík"},
                      {"question": "Where did Martin Šulík graduate from?", "answer": "Academy of Performing Arts in Bratislava, Slovakia"}]}
    assert by_rule(state, "Bratislava, Slovakia", Configuration(whole_last=False, drop_country=False)) == ("Bratislava, Slovakia", [])
    note = "the answer 'Bratislava, Slovakia' is only the end of the last hop's answer 'Academy of Performing Arts in Bratislava, Slovakia', which was taken"
    assert by_rule(state, "Bratislava, Slovakia", Configuration(drop_country=True)) == (  # on by default
        "Academy of Performing Arts in Bratislava", [note, "the country was dropped from the answer 'Academy of Performing Arts in Bratislava, Slovakia'"])
    llm = script()
    res = resources(llm, TableScorer({}), MemoryIndex(CORPUS, RANKINGS), nli=TableNLI())
    update = shorten({**state, "answer": "Bratislava, Slovakia"}, {"configurable": {"resources": res, "drop_country": False}})
    assert update["answer"] == "Academy of Performing Arts in Bratislava, Slovakia" and update["notes"] == [note] and not llm.calls


@pytest.mark.parametrize("variant", ["sunar", "self_ask"])
def test_both_graphs_take_the_last_hops_whole_answer_for_its_end(variant):
    cfg = graph_config("1946", last="January 20, 1946")  # the last hop read the full date; MER and Self-Ask gave its year
    assert build_graph(variant).invoke({"question": QUESTION}, {"configurable": {**cfg, "whole_last": False}})["answer"] == "1946"
    out = build_graph(variant).invoke({"question": QUESTION}, {"configurable": cfg})  # on by default
    assert out["answer"] == "January 20, 1946"
    assert "the answer '1946' is only the end of the last hop's answer 'January 20, 1946', which was taken" in out["notes"]
