"""Comparisons decided in code (sunar.compare), each shape's path through the graphs with scripted
models, the hop budget, and the worked examples of each kind."""

import pytest

from fakes import MemoryIndex, TableScorer, docs, judging, resources, scripted_llm, self_ask_script
from sunar.compare import (
    Comparison,
    as_side,
    comparison,
    decide,
    hop_budget,
    of_its_kind,
    shape,
    sides,
    spelled_out,
)
from sunar.configuration import Configuration
from sunar.follow_ups import loops_on_answer
from sunar.graph import VARIANTS, build_graph, describe_step
from sunar.nodes.decompose import demonstrations_for
from sunar.nodes.shorten import by_rule
from sunar.prompts.self_ask import COMPARE_NUDGE
from sunar.values import a_country, country_of, date_of, number_of


@pytest.mark.parametrize(
    "question, expected",
    [
        ("Who was born later, Meghan O'Leary or Engin Fırat?", Comparison("Meghan O'Leary", "Engin Fırat", "latest")),
        ("Which film came out first, Oloibiri (Film) or The Eagle'S Claw?", Comparison("Oloibiri (Film)", "The Eagle'S Claw", "earliest")),
        ("Was Jovita Carranza or Fidel Kuri Grajales born first?", Comparison("Jovita Carranza", "Fidel Kuri Grajales", "earliest")),
        ("Who was born first out of Heng Pov and Rajesh Bhola?", Comparison("Heng Pov", "Rajesh Bhola", "earliest")),
        ("Who is younger, Bob Degen or Ashad Ali?", Comparison("Bob Degen", "Ashad Ali", "latest")),
        ("Who lived longer, Elsa Herrmann or Pope Gregory Ii?", Comparison("Elsa Herrmann", "Pope Gregory Ii", "longest")),
        ("Which film has the director died earlier, Family Honeymoon or Confess, Doctor Corda?",
         Comparison("Family Honeymoon", "Confess, Doctor Corda", "earliest")),
        ("Which film has the director who is older than the other, A Lady To Love or Queen Of Burlesque? ",
         Comparison("A Lady To Love", "Queen Of Burlesque", "earliest")),
        ("Which film was released more recently, No Path Through Fire or Bright Leaf?", Comparison("No Path Through Fire", "Bright Leaf", "latest")),
        ("Are Alofau and Patti, Dashtiari located in the same country?", Comparison("Alofau", "Patti, Dashtiari", "same")),
        ("Which film has more directors, The Sailor'S Song or 88:88?", Comparison("The Sailor'S Song", "88:88", "most")),
        ("Which river is longer, the Nile or the Amazon?", Comparison("the Nile", "the Amazon", "most")),
        ("Are both villages, Lehututu and Kat Kiyars, located in the same country?", Comparison("Lehututu", "Kat Kiyars", "same")),
        ("Are director of film Sleepers and director of film The Juniper Tree (Film) from the same country?",
         Comparison("Sleepers", "The Juniper Tree (Film)", "same")),
        ("Do both films Chatterbox (1936 Film) and Swept From The Sea have the directors that share the same nationality?",
         Comparison("Chatterbox (1936 Film)", "Swept From The Sea", "same")),
        ("Do both directors of films Flow: For Love Of Water and Neutral Port share the same nationality?",
         Comparison("Flow: For Love Of Water", "Neutral Port", "same")),
    ],
)
def test_a_comparison_is_read_with_its_two_sides_as_the_question_writes_them(question, expected):
    assert comparison(question) == expected
    assert shape(question) == "comparison"


@pytest.mark.parametrize(
    "question, kind",
    [
        ("Where was the director of film Ronnie Rocket born?", "chain"),
        ("Who was the first president of the country where Ravel was born?", "chain"),  # "first", but nothing to compare
        ("Who is the paternal grandfather of Charlotte Bacon?", "inference"),
        ("Who is Edward Wingfield's maternal grandmother?", "inference"),
        ("Who is the father-in-law of Queen Victoria?", "inference"),
    ],
)
def test_what_is_not_a_comparison_of_two_named_things(question, kind):
    assert shape(question) == kind


@pytest.mark.parametrize(
    "text, date",
    [("2 May 1934", (1934, 5, 2)), ("May 2, 1934", (1934, 5, 2)), ("1934-05-02", (1934, 5, 2)), ("1934", (1934, 0, 0)),
     ("c. 1570", (1570, 0, 0)), ("44 BC", (-44, 0, 0)), ("September 1919", (1919, 9, 0)), ("Missoula, Montana", None),
     ("between 1920 and 1930", None), ("March 5", None)],
)
def test_dates_as_answers_write_them(text, date):
    assert date_of(text) == date


def test_numbers_and_countries_as_answers_write_them():
    assert number_of("3") == 3 and number_of("three directors") == 3 and number_of("6,650 km") == 6650
    assert number_of("two or three") is None and number_of("many") is None
    assert country_of("American") == country_of("USA") == country_of("United States of America") == "united states"
    assert country_of("Paris, France") == "france" and a_country("Indian") and a_country("Botswana")
    assert not a_country("Barry Levinson") and not a_country("Missoula, Montana")
    # nationalities beyond the largest countries, and countries under another name than ISO's
    assert country_of("Jamaican") == "jamaica" and country_of("Burmese") == country_of("Burma") == country_of("Myanmar") == "myanmar"
    assert country_of("Cape Verde") == country_of("Cabo Verde") and country_of("Côte d'Ivoire") == country_of("Ivory Coast")
    # a nationality written with its origin first is its last part; a country's own hyphen is kept
    assert country_of("Lithuanian-American") == country_of("Ukrainian- born, Lithuanian- American") == "united states"
    assert country_of("Austria-Hungary") != country_of("Hungary")
    for whole, part in (("South Sudan", "Sudan"), ("Papua New Guinea", "Guinea"), ("American Samoa", "Samoa"), ("Equatorial Guinea", "Guinea")):
        assert a_country(whole) and country_of(whole) != country_of(part)


def hop(question, answer):
    return {"question": question, "answer": answer, "evidence": [], "batches": []}


BRIDGE = "Which film has the director born later, Dark Interval or Yeti Obhijaan?"
BRIDGE_HOPS = [hop("Who directed Dark Interval?", "Charles Saunders"), hop("Who directed Yeti Obhijaan?", "Srijit Mukherji"),
               hop("When was Charles Saunders born?", "8 April 1904"), hop("When was Srijit Mukherji born?", "23 September 1977")]


def test_each_side_gets_its_own_hops_and_its_bridges_hops():
    a, b = sides(comparison(BRIDGE), BRIDGE_HOPS)
    assert [h["answer"] for h in a] == ["Charles Saunders", "8 April 1904"]
    assert [h["answer"] for h in b] == ["Srijit Mukherji", "23 September 1977"]


def test_the_values_decide_not_the_order_of_mention():
    assert decide(BRIDGE, BRIDGE_HOPS).answer == "Yeti Obhijaan"
    earlier = BRIDGE.replace("later", "earlier")
    assert decide(earlier, BRIDGE_HOPS).answer == "Dark Interval"
    swapped = [BRIDGE_HOPS[1], BRIDGE_HOPS[0], BRIDGE_HOPS[3], BRIDGE_HOPS[2]]
    assert decide(BRIDGE, swapped).answer == "Yeti Obhijaan"


def test_lifetimes_and_the_same_country():
    lived = "Who lived longer, Elsa Herrmann or Pope Gregory Ii?"
    hops = [hop("When was Elsa Herrmann born?", "1893"), hop("When did Elsa Herrmann die?", "1957"),
            hop("When was Pope Gregory II born?", "669"), hop("When did Pope Gregory II die?", "11 February 731")]
    assert decide(lived, hops).answer == "Elsa Herrmann"  # 64 years against 62
    same = "Are director of film Sleepers and director of film Jaco (Film) from the same country?"
    hops = [hop("Who directed Sleepers?", "Barry Levinson"), hop("Who directed Jaco?", "Stephen Kijak"),
            hop("What is the nationality of Barry Levinson?", "American"), hop("What is the nationality of Stephen Kijak?", "United States of America")]
    assert decide(same, hops).answer == "yes"
    hops[3] = hop("What is the nationality of Stephen Kijak?", "Canadian")
    assert decide(same, hops).answer == "no"
    hops[2:] = [hop("What is the nationality of Barry Levinson?", "Ukrainian- born, Lithuanian- American"),
                hop("What is the nationality of Stephen Kijak?", "Canadian")]
    assert decide(same, hops).answer == "no"  # before, the first value was no country: no decision, MER answered "Canadian"
    in_ = "Are Chão Bom and Karam Bast located in the same country?"
    assert decide(in_, [hop("Which country is Chão Bom in?", "Cape Verde"), hop("Which country is Karam Bast in?", "Iran")]).answer == "no"
    # a chain that stopped at the two directors has no country to compare: the final step answers
    assert decide(same, hops[:2]) is None
    more = "Which film has more directors, The Sailor'S Song or 88:88?"
    hops = [hop("How many directors does The Sailor's Song have?", "3"), hop("How many directors does 88:88 have?", "one director")]
    assert decide(more, hops).answer == "The Sailor'S Song"


@pytest.mark.parametrize(
    "hops",
    [
        [hop("When was Bob Degen born?", "1944")],  # one side has no hop
        [hop("When was Bob Degen born?", "1944"), hop("When was Ashad Ali born?", "unknown")],  # no value
        [hop("When was Bob Degen born?", "1944"), hop("When was Ashad Ali born?", "March 1944")],  # the same year, no order
        [hop("When were Bob Degen and Ashad Ali born?", "1944 and 1950")],  # a hop about both sides
    ],
)
def test_what_cannot_be_decided_in_code_is_left_to_the_final_step(hops):
    assert decide("Who is younger, Bob Degen or Ashad Ali?", hops) is None


def test_a_comparison_may_take_four_hops_a_chain_keeps_its_limit():
    assert hop_budget(BRIDGE, 3) == 4 and hop_budget("Where was the director of film Ronnie Rocket born?", 3) == 3
    assert hop_budget(BRIDGE, 6) == 6


def test_a_grandfather_is_asked_for_as_a_father_twice():
    question = "Who is the paternal grandfather of Charlotte Bacon?"
    assert spelled_out(question) == "Who is the father of the father of Charlotte Bacon?"
    hops = [hop("Who is the father of Charlotte Bacon?", "Nathaniel Bacon")]
    assert not loops_on_answer("Who is the father of Nathaniel Bacon?", hops, question)
    assert loops_on_answer("Who is the father of Nathaniel Bacon?", hops, "Who is the father of Charlotte Bacon?")


def test_worked_examples_are_of_the_questions_own_kind():
    pool = [("Where was the director of film X born?", [("Who directed X?", "Y"), ("Where was Y born?", "Z")], "Z"),
            ("Who was born later, Ann Lee or Bo Wu?", [("When was Ann Lee born?", "1950"), ("When was Bo Wu born?", "1960")], "Bo Wu"),
            ("Who is the paternal grandfather of Al Bo?", [("Who is the father of Al Bo?", "Cy Bo"), ("Who is the father of Cy Bo?", "Di Bo")], "Di Bo")]
    assert of_its_kind("Who was born first, Ed Ma or Flo Ng?", pool) == [pool[1]]
    assert of_its_kind("Who is the maternal grandfather of Gus Ha?", pool) == [pool[2]]
    assert of_its_kind("Where was the director of film Vertigo born?", pool) == [pool[0]]
    assert of_its_kind("Who is younger, Ed Ma or Flo Ng?", pool[:1]) == pool[:1]  # none of its kind: the others
    cfg = Configuration(profile="cpu")
    assert [d[2] for d in demonstrations_for("Who is younger, Ed Ma or Flo Ng?", cfg)] and all(
        shape(d[0]) == "comparison" for d in demonstrations_for("Who is younger, Ed Ma or Flo Ng?", cfg))  # the shipped pool's


CORPUS = docs(
    ("d1", "Dark Interval", "Dark Interval is a 1950 film directed by Charles Saunders."),
    ("d2", "Yeti Obhijaan", "Yeti Obhijaan is a 2017 film directed by Srijit Mukherji."),
    ("d3", "Charles Saunders", "Charles Saunders (8 April 1904 - 1997) was an English director."),
    ("d4", "Srijit Mukherji", "Srijit Mukherji (born 23 September 1977) is an Indian director."),
)
STEPS = ["Follow up: Who directed Dark Interval?", "Follow up: Who directed Yeti Obhijaan?", "Follow up: When was Charles Saunders born?",
         "Follow up: When was Srijit Mukherji born?", "So the final answer is: Dark Interval"]
HOPS = {"Who directed Dark Interval?": "Charles Saunders", "Who directed Yeti Obhijaan?": "Srijit Mukherji",
        "When was Charles Saunders born?": "8 April 1904", "When was Srijit Mukherji born?": "23 September 1977"}


def run(variant, steps=STEPS, **config):
    llm = scripted_llm(self_ask_script(steps), judging(HOPS, ["Dark Interval"], {"Yeti Obhijaan"}))
    index = MemoryIndex(CORPUS, default_ranking=[("d1", 2.0), ("d2", 1.9), ("d3", 1.5), ("d4", 1.4)], graph={})
    res = resources(llm, TableScorer({"d1": 0.9, "d2": 0.9, "d3": 0.8, "d4": 0.8}), index)
    cfg = {"configurable": {"resources": res, "batch_size": 4, "budget": 4, "samples": 3, "max_hops": 3, **config}}
    graph = build_graph(variant)
    updates = list(graph.stream({"question": BRIDGE}, cfg, stream_mode="updates"))
    return updates, graph.invoke({"question": BRIDGE}, cfg), res.llm


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_a_bridge_comparison_takes_four_hops_and_is_decided_on_its_dates(variant):
    updates, out, llm = run(variant)
    nodes = [next(iter(u)) for u in updates]
    assert nodes.count("answer_hop") == 4  # beyond max_hops 3: both sides' bridges and dates
    # Self-Ask's own final answer (and MER's) named the first film; the dates name the second
    assert out["answer"] == "Yeti Obhijaan"
    assert "final" not in nodes and nodes[nodes.index("compare") + 1] == "check"
    assert not any(c.startswith("You check a chain") for c in llm.inner.calls)  # no MER call
    line = describe_step("compare", updates[nodes.index("compare")]["compare"], {})
    assert line == "compared in code: Dark Interval: 8 April 1904; Yeti Obhijaan: 23 September 1977: the later is Yeti Obhijaan"


def test_a_comparison_the_chain_cannot_decide_goes_to_the_final_step():
    steps = ["Follow up: Who directed Dark Interval?", "So the final answer is: Dark Interval"]
    updates, out, _ = run("sunar", steps=steps)
    nodes = [next(iter(u)) for u in updates]
    assert nodes[nodes.index("compare") + 1] == "final" and out["answer"] == "Dark Interval"
    assert describe_step("compare", updates[nodes.index("compare")]["compare"], {}) is None


def test_a_final_answer_naming_a_sides_director_is_that_side():
    assert as_side(BRIDGE, "Srijit Mukherji", BRIDGE_HOPS) == "Yeti Obhijaan"
    assert as_side(BRIDGE, "23 September 1977", BRIDGE_HOPS) == "Yeti Obhijaan"
    assert as_side(BRIDGE, "Yeti Obhijaan", BRIDGE_HOPS) is None  # already a side
    assert as_side(BRIDGE, "Satyajit Ray", BRIDGE_HOPS) is None  # found by neither side
    assert as_side("Where was the director of film Dark Interval born?", "Charles Saunders", BRIDGE_HOPS) is None
    cfg = Configuration(profile="cpu")
    answer, notes = by_rule({"question": BRIDGE, "hops": BRIDGE_HOPS}, "Charles Saunders", cfg)
    assert answer == "Dark Interval" and "one of the two compared" in notes[0]
    # no rule for chains touches a comparison's side ("..., France" is a title here, not a place)
    question = "Which film came out first, Paris, France or Vertigo?"
    assert by_rule({"question": question, "hops": []}, "Paris, France", cfg) == ("Paris, France", [])


def test_the_stream_says_how_each_shape_is_handled():
    first = {"sub_question": "Who directed Dark Interval?"}
    assert describe_step("decompose", first, {"question": BRIDGE}).startswith(
        "a comparison of 'Dark Interval' and 'Yeti Obhijaan' (the later), decided in code on what each side's hops find; follow-up:")
    grand = describe_step("decompose", {"sub_question": "Who is the father of Al Bo?"}, {"question": "Who is the paternal grandfather of Al Bo?"})
    assert grand.startswith("an inference over family relations")
    chain = describe_step("decompose", {"sub_question": "Who directed X?"}, {"question": "Where was the director of film X born?"})
    assert chain == "follow-up: Who directed X?"
    later = describe_step("decompose", {"sub_question": "Who directed Yeti Obhijaan?"}, {"question": BRIDGE, "hops": BRIDGE_HOPS[:1]})
    assert later == "follow-up: Who directed Yeti Obhijaan?"


def test_a_relation_asked_as_often_as_the_question_names_it_is_not_asked_again():
    question = "Who is the paternal grandfather of Robert Berkeley?"
    hops = [hop("Who is the father of Robert Berkeley?", "Rowland Berkeley"), hop("Who is the father of Rowland Berkeley?", "William Berkeley")]
    assert not loops_on_answer("Who is the father of Rowland Berkeley?", hops[:1], question)
    assert loops_on_answer("Who is the father of William Berkeley?", hops, question)  # a third father: the answer is found


def test_a_comparison_decided_in_code_is_not_judged_again():
    _, out, llm = run("sunar")
    assert not any("Proposed answer: Yeti Obhijaan" in c for c in llm.inner.calls)
    assert out["signals"].get("answer_fits") is None


def test_a_comparison_answered_before_its_values_were_found_is_asked_for_the_next_step():
    same = "Are the directors of films Dark Interval and Yeti Obhijaan from the same country?"
    nudged = {2: "Follow up: What is the nationality of Charles Saunders?", 3: "Follow up: What is the nationality of Srijit Mukherji?"}

    def self_ask(prompt):
        n = prompt.rsplit("Question:", 1)[1].count("Intermediate answer:")
        if COMPARE_NUDGE in prompt.rsplit("Question:", 1)[1]:
            return nudged[n]
        return STEPS[n] if n < 2 else "So the final answer is: yes"  # the two directors, then a shortcut

    hops = {**HOPS, "What is the nationality of Charles Saunders?": "English", "What is the nationality of Srijit Mukherji?": "Indian"}
    llm = scripted_llm(self_ask, judging(hops, ["yes"], {"yes"}))
    index = MemoryIndex(CORPUS, default_ranking=[("d1", 2.0), ("d2", 1.9), ("d3", 1.5), ("d4", 1.4)], graph={})
    res = resources(llm, TableScorer({"d1": 0.9, "d2": 0.9, "d3": 0.8, "d4": 0.8}), index)
    out = build_graph("self_ask").invoke({"question": same}, {"configurable": {"resources": res, "max_hops": 3, "budget": 4}})
    assert [h["answer"] for h in out["hops"]] == ["Charles Saunders", "Srijit Mukherji", "English", "Indian"]
    assert out["answer"] == "no" and sum("answered before both sides' values were found" in n for n in out["notes"]) == 2
