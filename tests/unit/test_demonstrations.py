"""Worked decompositions retrieved for Self-Ask: the pool built from the data's own
decompositions, retrieval by the question's shape, and the prompt that shows them."""

import json
from collections import Counter

import pytest

from fakes import MemoryIndex, TableScorer, docs, resources, scripted_llm, self_ask_script
from sunar.compare import shape as kind_of
from sunar.errors import SunarError
from sunar.graph import build_graph
from sunar.prompts.demonstrations import SHIPPED_POOL, as_question, load_pool, pool_records, retrieve, shape, steps_of

POOL = [
    ("Where was the director of film Tuos born?", [("Who directed Tuos?", "Roderick Cabrido"), ("Where was Roderick Cabrido born?", "Tondo")], "Tondo"),
    ("Who is the spouse of the performer of song Hello?", [("Who performed Hello?", "Adele"), ("Who is the spouse of Adele?", "Simon Konecki")], "Simon Konecki"),
    ("When did the father of Ada Lovelace die?", [("Who is the father of Ada Lovelace?", "Lord Byron"), ("When did Lord Byron die?", "1824")], "1824"),
]


def test_steps_from_musique_decompositions_and_2wiki_triples():
    musique = {"decomposition": [{"question": "Vivien Leigh >> spouse", "answer": "Laurence Olivier"}, {"question": "where was #1 born", "answer": "Dorking"}]}
    assert steps_of(musique) == [("Who is the spouse of Vivien Leigh?", "Laurence Olivier"), ("Where was Laurence Olivier born?", "Dorking")]
    wiki = {"evidence_triples": [["Dollar", "director", "Gustaf Molander"], ["Gustaf Molander", "place of birth", "Helsingfors"]]}
    assert steps_of(wiki) == [("Who directed Dollar?", "Gustaf Molander"), ("Where was Gustaf Molander born?", "Helsingfors")]
    assert as_question("Kurt Russell >> head coach") == "What is the head coach of Kurt Russell?"
    assert steps_of({"question": "q"}) is None
    assert pool_records([{"question": "Q?", **wiki, "dataset": "2wiki"}, {"question": "none"}])[0]["answer"] == "Helsingfors"


def test_a_comparisons_steps_ask_about_each_entity_it_names_and_its_answer_is_one_of_them_or_yes_no():
    born = {"type": "comparison", "question": "Who died earlier, Forouzan or Sir Robert Rankin, 1St Baronet?", "answers": ["Sir Robert Rankin, 1St Baronet"],
            "evidence_triples": [["Forouzan", "date of death", "24 January 2016"], ["Sir Robert Rankin, 1st Baronet", "date of death", "11 October 1960"]]}
    assert steps_of(born) == [("When did Forouzan die?", "24 January 2016"), ("When did Sir Robert Rankin, 1st Baronet die?", "11 October 1960")]
    assert pool_records([born])[0]["answer"] == "Sir Robert Rankin, 1st Baronet"  # the gold, as its step names it (not the title case)
    bridge = {"type": "bridge_comparison", "question": "Which film has the director who died earlier, Alarm At Midnight or Uthiripookkal?",
              "answers": ["Alarm At Midnight"], "evidence_triples": [["Alarm at Midnight", "director", "Johannes Meyer"], ["Uthiripookkal", "director", "J. Mahendran"],
                                                                     ["Johannes Meyer (director)", "date of death", "25 January 1976"], ["J. Mahendran", "date of death", "2 April 2019"]]}
    assert steps_of(bridge) == [("Who directed Alarm at Midnight?", "Johannes Meyer"), ("Who directed Uthiripookkal?", "J. Mahendran"),
                                ("When did Johannes Meyer die?", "25 January 1976"), ("When did J. Mahendran die?", "2 April 2019")]
    assert pool_records([bridge])[0]["answer"] == "Alarm at Midnight"
    same = {"type": "comparison", "question": "Are Alofau and Patti, Dashtiari located in the same country?", "answers": ["no"],
            "evidence_triples": [["Alofau", "country", "American Samoa"], ["Patti, Dashtiari", "country", "Iran"]]}
    assert pool_records([same])[0] == {"question": same["question"], "steps": [["Which country is Alofau in?", "American Samoa"],
                                       ["Which country is Patti, Dashtiari in?", "Iran"]], "answer": "no", "dataset": ""}
    inference = {"type": "inference", "question": "Who is the paternal grandfather of Robert Berkeley (Judge)?", "answers": ["William Berkeley"],
                 "evidence_triples": [["Robert Berkeley", "father", "Rowland Berkeley"], ["Rowland Berkeley", "father", "William Berkeley"]]}
    assert steps_of(inference) == [("Who is the father of Robert Berkeley?", "Rowland Berkeley"), ("Who is the father of Rowland Berkeley?", "William Berkeley")]
    assert pool_records([inference])[0]["answer"] == "William Berkeley"  # a chain: its last step's


def test_retrieval_by_shape_never_returns_the_question_itself():
    assert shape("Where was the director of film Ronnie Rocket born?") == {"where", "was", "director", "of", "film", "born"}
    found = retrieve("Where was the director of film Ronnie Rocket born?", POOL, 2)
    assert found[-1][0] == POOL[0][0]  # the closest last, next to the question
    assert POOL[1][0] not in [d[0] for d in retrieve(POOL[1][0], POOL, 3)]
    assert retrieve("anything", POOL, 0) == []


def test_self_ask_and_sunar_see_the_retrieved_demonstrations(tmp_path):
    pool = tmp_path / "pool.jsonl"
    pool.write_text("\n".join(json.dumps({"question": q, "steps": s, "answer": a}) for q, s, a in POOL), encoding="utf-8")
    for variant in ("self_ask", "sunar"):
        llm = scripted_llm(self_ask_script(["Follow up: Who directed Ronnie Rocket?", "So the final answer is: Missoula"]), lambda q, i: "David Lynch")
        res = resources(llm, TableScorer({"a": 1.0}), MemoryIndex(docs(("a", "A", "text")), default_ranking=[("a", 1.0)]))
        cfg = {"resources": res, "demonstrations": 1, "demonstration_pool": str(pool), "calibration": "off"}
        build_graph(variant).invoke({"question": "Where was the director of film Ronnie Rocket born?"}, {"configurable": cfg})
        prompts = [c for c in llm.calls if "Follow up:" in c]
        assert prompts and all("Who directed Tuos?" in p and "Adele" not in p for p in prompts)


def test_the_shipped_pool_and_a_broken_one(tmp_path):
    shipped = load_pool("")
    assert shipped == load_pool(str(SHIPPED_POOL))
    kinds = Counter(kind_of(question) for question, _, _ in shipped)
    assert kinds == {"chain": 100, "comparison": 79, "inference": 11}  # dev's first 100; dev_b's comparisons and inferences
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"question": "q"}\n', encoding="utf-8")
    with pytest.raises(SunarError, match="line 1"):
        load_pool(str(broken))
    with pytest.raises(SunarError, match="cannot be read"):
        load_pool(str(tmp_path / "missing.jsonl"))
