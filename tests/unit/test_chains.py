"""Uncertainty that acts: a hop's own samples, chains branched off uncertain hops, the chosen chain,
and grounded final answers, with a scripted LLM and a scripted NLI."""

import re

from fakes import MemoryIndex, TableNLI, TableScorer, docs, resources, scripted_llm, whole_state
from sunar.configuration import Configuration
from sunar.graph import build_graph, describe_step
from sunar.nodes.next_chain import choose, support
from sunar.prompts.mer import bridge_in, bridges
from sunar.prompts.spans import final_spans, spans

QUESTION = "Where was the director of Ronnie Rocket born?"
CORPUS = docs(
    ("rr", "Ronnie Rocket", "Ronnie Rocket is an unfinished film by David Lynch, with a part for Mel Brooks."),
    ("dl", "David Lynch", "David Lynch was born in Missoula, Montana, on January 20, 1946."),
    ("mb", "Mel Brooks", "Mel Brooks was born in Brooklyn."),
)
RANKINGS = {
    "Who directed Ronnie Rocket?": [("rr", 3.0)],
    "Where was David Lynch born?": [("dl", 3.0)],
    "Where was Mel Brooks born?": [("mb", 3.0)],
}
SCORES = {"rr": 0.9, "dl": 0.8, "mb": 0.7}


def self_ask(prompt: str) -> str:
    """Self-Ask by the path so far: who directed it, then where that answer was born, then the end."""
    found = re.findall(r"Intermediate answer: (.*)", prompt.rsplit("Question:", 1)[1])
    if not found:
        return "Follow up: Who directed Ronnie Rocket?"
    if len(found) == 1:
        return f"Follow up: Where was {found[0]} born?"
    return f"So the final answer is: {found[-1]}"


def flag_samples(llm, answer):
    """``llm`` with ``answer.sampling`` True while it samples (a hop's samples, told apart from its greedy answer)."""
    answer.sampling = False
    original = llm.sample

    def sample(messages, m, **kw):
        answer.sampling = True
        try:
            return original(messages, m, **kw)
        finally:
            answer.sampling = False

    llm.sample = sample
    return llm


def run(director=("David Lynch", "David Lynch", "Mel Brooks"), mer_answer="Missoula", variant="sunar", lynch_born="Missoula", **config):
    """The graph on the question; the director's answers are (greedy, sample 1, sample 2, ...)."""
    places = {"Where was David Lynch born?": lynch_born, "Where was Mel Brooks born?": "Brooklyn"}

    def answer(question, i):
        if question == "Who directed Ronnie Rocket?":  # the hop's samples are director[1:], the greedy answer director[0]
            return director[0] if i == 0 and not answer.sampling else director[min(i + 1, len(director) - 1)]
        if question.startswith("MER:"):
            return mer_answer
        return places.get(question, "unknown")

    llm = flag_samples(scripted_llm(self_ask, answer), answer)
    res = resources(llm, TableScorer(SCORES), MemoryIndex(CORPUS, RANKINGS), nli=TableNLI())
    cfg = {"resources": res, "batch_size": 2, "budget": 2, "samples": 2, "hop_samples": 2, "asu_batches": False, "calibration": "off", **config}
    return whole_state(build_graph(variant), {"question": QUESTION}, {"configurable": cfg}), llm


def test_an_uncertain_hop_branches_and_each_chain_is_followed():
    out, _ = run(branch_width=2)
    hop1 = out["hops"][0]
    assert hop1["samples"] == ["David Lynch", "David Lynch", "Mel Brooks"]
    assert hop1["candidates"] == [{"answer": "David Lynch", "share": 0.6667}, {"answer": "Mel Brooks", "share": 0.3333}]
    chains = out["chains"]
    assert [c["answer"] for c in chains] == ["Missoula", "Brooklyn"]
    assert [c["hops"][-1]["question"] for c in chains] == ["Where was David Lynch born?", "Where was Mel Brooks born?"]
    assert [c["weight"] for c in chains] == [0.6667, 0.3333] and all(c["status"] == "done" for c in chains)
    assert out["chosen"] == 0 and out["answer"] == "Missoula"
    assert [s["question"] for s in out["reasoning_path"]] == ["Who directed Ronnie Rocket?", "Where was David Lynch born?"]
    assert any("each is followed as a chain" in n for n in out["notes"])


def test_the_best_supported_chain_is_chosen_for_the_final_step():
    # the greedy answer names nobody the follow-up finds; the samples agree on Mel Brooks
    out, _ = run(director=("David Lynch", "Mel Brooks", "Mel Brooks"), mer_answer="Brooklyn", branch_width=2)
    assert [c["answer"] for c in out["chains"]] == ["Brooklyn", "Missoula"]  # the larger set is followed first
    assert out["chosen"] == 0 and out["hops"][0]["answer"] == "Mel Brooks" and out["answer"] == "Brooklyn"


def test_one_chain_when_branching_is_off_or_the_budget_is_spent():
    for config in ({"branch_width": 1}, {"branch_width": 2, "max_chains": 1}):
        out, _ = run(**config)
        assert len(out["chains"]) == 1 and out["chosen"] == 0
        assert out["hops"][0]["answer"] == "David Lynch" and out["hops"][0]["candidates"][1]["answer"] == "Mel Brooks"


def test_agreeing_samples_do_not_branch_and_variants_without_asu_do_not_sample():
    out, llm = run(director=("David Lynch",) * 3, branch_width=3)
    assert len(out["chains"]) == 1 and out["hops"][0]["candidates"] == [{"answer": "David Lynch", "share": 1.0}]
    for variant in ("sunar_no_asu", "self_ask"):
        out, llm = run(variant=variant, branch_width=2)
        assert "samples" not in out["hops"][0] and len(out["chains"]) == 1


def test_unknown_answers_are_not_followed():
    out, _ = run(director=("unknown", "unknown", "David Lynch"), branch_width=2)
    assert out["hops"][0]["answer"] == "David Lynch" and len(out["chains"]) == 1  # the only named candidate
    out, _ = run(director=("unknown",) * 3, branch_width=2)
    assert out["hops"][0]["answer"] == "unknown"


def test_the_paper_asu_runs_only_when_asu_batches_is_on():
    out, _ = run(asu_batches=True, asu_skip_outranked=False)
    assert all(b.get("answers") for h in out["hops"] for b in h["batches"])
    out, _ = run(asu_batches=False)
    assert not any(b.get("answers") for h in out["hops"] for b in h["batches"])


def test_chain_support_and_choice():
    hop = {"question": "q", "answer": "x", "batches": [], "evidence": [{"id": "d", "title": "T", "text": "born in Missoula, Montana", "score": 1.0}]}
    chain = {"hops": [hop], "draft_answer": "", "status": "done"}
    assert support({**chain, "answer": "Missoula", "weight": 1.0}) == 1.0
    assert support({**chain, "answer": "Brooklyn", "weight": 1.0}) == 0.5
    assert support({**chain, "answer": "unknown", "weight": 1.0}) == 0.0
    chains = [{**chain, "answer": "Brooklyn", "weight": 0.6}, {**chain, "answer": "Missoula", "weight": 0.4}]
    assert choose(chains) == 1  # 0.4 supported beats 0.6 * 0.5


def test_a_grounded_final_answer_is_one_of_the_hops_answers_the_questions_names_or_the_evidence_spans():
    out, llm = run(grounded_final=True)
    mer = [s for s in llm.schemas if s and "rationale" in s.get("properties", {})]
    assert mer, "MER was not asked under a schema"
    allowed = mer[-1]["properties"]["answer"]["enum"]
    assert allowed[:5] == ["David Lynch", "Missoula", "yes", "no", "Ronnie Rocket"]  # hop answers, yes/no, the question's names
    assert "Missoula, Montana" in allowed and "Brooklyn" not in allowed and allowed[-1] == "unknown"
    assert mer[-1]["properties"]["rationale"]["maxLength"] == 300
    out, llm = run()
    assert all("enum" not in s["properties"]["answer"] for s in llm.schemas if s and "rationale" in s.get("properties", {}))
    assert final_spans("Is A taller than B?", ["unknown", "x" * 200], []) == ["yes", "no", "B"]  # "Is" and "A" begin sentences


def test_the_bridges_of_a_path():
    path = [("Who directed Ronnie Rocket?", "David Lynch"), ("Where was David Lynch born?", "Missoula"), ("What is Missoula's county?", "Missoula County")]
    assert bridges(path) == {"david lynch": ("David Lynch", "Who directed Ronnie Rocket?"), "missoula": ("Missoula", "Where was David Lynch born?")}
    assert bridges([("When was X born?", "1946"), ("Who is X's wife?", "Y")]) == {}  # an answer no later step names
    assert bridges([("Who is X's wife?", "unknown"), ("Where was unknown born?", "Z")]) == {}
    assert bridges([("Who directed it?", "Lynch")]) == {}  # the last hop's answer is no bridge
    found = bridges(path)
    assert bridge_in("David Lynch's", found) == ("David Lynch", "Who directed Ronnie Rocket?")
    assert bridge_in("missoula", found)[0] == "Missoula" and bridge_in("the David Lynch", found)[0] == "David Lynch"
    assert bridge_in("Missoula County", found) is None and bridge_in("Lynch", found) is None  # more or less than a bridge: may be the answer
    assert bridge_in("Montana", found) is None and bridge_in("", found) is None


def test_spans_of_the_evidence():
    found = spans([
        {"title": "Dollar (1938 film)", "text": "It was directed by Gustaf Molander. He was born in Helsingfors, Finland on 18 November 1888 and died in 1973."},
        {"title": "University of Michigan", "text": "The University of Michigan has 46,000 students."},
    ])
    for span in ("Dollar", "Gustaf Molander", "Helsingfors, Finland", "Helsingfors", "18 November 1888", "1973", "University of Michigan", "46,000"):
        assert span in found, span
    assert "It" not in found and "He" not in found
    # names whose capitals lie beyond Latin-1 are spans whole
    assert spans([{"title": "Days and Hours", "text": "It was directed by Pjer Žalica, who studied in Łódź."}])[-2:] == ["Pjer Žalica", "Łódź"]


def test_the_stream_shows_candidates_and_chains():
    hop = {"question": "q", "answer": "David Lynch", "evidence": [], "candidates": [{"answer": "David Lynch", "share": 0.67}, {"answer": "Mel Brooks", "share": 0.33}]}
    assert "candidates: David Lynch (67%), Mel Brooks (33%)" in describe_step("answer_hop", {"hops": [hop]}, {})
    hop["samples"] = ["David Lynch", "David Lynch", "Mel Brooks"]
    assert "; candidates of 3 answers: David Lynch (67%), Mel Brooks (33%)" in describe_step("answer_hop", {"hops": [hop]}, {})
    chains = [{"answer": "Missoula", "weight": 0.67}, {"answer": "Brooklyn", "weight": 0.33}]
    assert describe_step("retrieve", {"ranking": [("d", 1.0)]}, {}) == "first stage: 1 documents"
    assert describe_step("next_chain", {"chains": chains, "chosen": 0}, {}) == "2 chains: Missoula (p = 0.67); Brooklyn (p = 0.33); chose 1"
    assert "Mel Brooks" in describe_step("next_chain", {"chains": chains[:1], "chosen": None, "hops": [{**hop, "answer": "Mel Brooks"}], "weight": 0.33}, {})


def support_run(variant, hop_support, reread="David Lynch", fits="yes", escalation=None, **config):
    """Ronnie Rocket's page names Mel Brooks in a part, and the reader takes him for the director;
    the judge says the page does not state that, and ruled out, the reader names ``reread``; asked
    whether the final answer answers the question, it says ``fits``."""
    verdicts = {"Who directed Ronnie Rocket? = Mel Brooks": "no", "Who directed Ronnie Rocket? = David Lynch": "yes",
                "Where was David Lynch born? = Missoula": "yes", "Where was Mel Brooks born? = Brooklyn": "yes"}
    replies = {"Who directed Ronnie Rocket?": "Mel Brooks", "Who directed Ronnie Rocket? (The answer is not Mel Brooks.)": reread,
               "Where was David Lynch born?": "Missoula", "Where was Mel Brooks born?": "Brooklyn"}

    def answer(question, i):
        if question.startswith("SUPPORT:"):
            return verdicts.get(question.removeprefix("SUPPORT:"), "no")
        if question.startswith("FITS:"):
            return fits
        return replies.get(question.removeprefix("MER:"), "unknown") if not question.startswith("MER:") else "Missoula"

    llm = scripted_llm(self_ask, answer)
    res = resources(llm, TableScorer(SCORES), MemoryIndex(CORPUS, RANKINGS), nli=TableNLI(), escalation=escalation)
    cfg = {"resources": res, "batch_size": 2, "budget": 2, "samples": 2, "asu_batches": False, "calibration": "off", "hop_support": hop_support,
           **({"escalate_llm": "embedded:qwen2.5-1.5b"} if escalation else {}), **config}  # the injected larger model stands for it
    return whole_state(build_graph(variant), {"question": QUESTION}, {"configurable": cfg}), llm


def test_a_support_judgement_alone_only_records_it():
    out, llm = support_run("sunar", "judge")
    assert [h["answer"] for h in out["hops"]] == ["Mel Brooks", "Brooklyn"]
    assert [h["support"] for h in out["hops"]] == [0.0, 1.0] and out["signals"]["hop_support"] == 0.0
    assert not any("(The answer is not" in c for c in llm.calls)
    off, llm = support_run("sunar", "off")
    assert "support" not in off["hops"][0] and off["signals"]["hop_support"] is None
    assert not llm.judge_calls


def test_the_final_answer_is_judged_against_the_question_and_the_chain_support_is_its_weakest_link():
    from sunar.prompts import support
    from sunar.streaming import describe_common

    out, llm = support_run("sunar", "judge")  # hops judged 0.0 and 1.0; the judge says MER's Missoula answers the question
    assert (out["signals"]["answer_fits"], out["signals"]["chain_support"]) == (1.0, 0.0)
    [judged] = [c for c in llm.judge_calls if c.startswith(support.FITS_SYSTEM)]
    assert judged.endswith("1. Who directed Ronnie Rocket? Mel Brooks\n2. Where was Mel Brooks born? Brooklyn\nProposed answer: Missoula\n"
                           "Does the proposed answer answer the question?")
    assert describe_common("confidence", {"trust": 0.4, "signals": out["signals"]}).endswith("; it answers the question: p = 1.00")
    unfit, _ = support_run("sunar", "judge", fits="no")  # the answer not what was asked: the weakest link is the answer's
    assert (unfit["signals"]["hop_support"], unfit["signals"]["answer_fits"], unfit["signals"]["chain_support"]) == (0.0, 0.0, 0.0)
    off, llm = support_run("sunar", "off")
    assert "answer_fits" not in off["signals"] and not llm.judge_calls
    assert "it answers the question" not in describe_common("confidence", {"trust": 0.4, "signals": off["signals"]})


def larger_llm(reads="David Lynch", says_yes=("Who directed Ronnie Rocket? = David Lynch",)):
    """The larger model of ``hop_support=escalate``: it reads the director's page as ``reads`` and
    says yes only to the (sub-question = answer) pairs of ``says_yes``."""
    def answer(question, i):
        if question.startswith("SUPPORT:"):
            return "yes" if question.removeprefix("SUPPORT:") in says_yes else "no"
        return reads if question == "Who directed Ronnie Rocket?" else "unknown"
    return scripted_llm(self_ask, answer)


def test_a_doubted_hop_is_read_again_by_the_larger_model_which_keeps_the_answer_it_finds_supported():
    larger = larger_llm()
    out, llm = support_run("sunar", "escalate", escalation=larger)
    hop1 = out["hops"][0]
    assert (hop1["answer"], hop1["support"], hop1["escalated"]) == ("David Lynch", 1.0, "Mel Brooks")
    assert out["reasoning_path"][0]["escalated"] == "Mel Brooks"  # the path a reply and an eval record show
    assert [h["question"] for h in out["hops"]] == ["Who directed Ronnie Rocket?", "Where was David Lynch born?"]
    assert "escalated" not in out["hops"][1]  # its pages state Missoula: the small model's answer stands, the larger one not asked
    assert [c for c in larger.calls if c.endswith("Question: Who directed Ronnie Rocket?")]  # it read the hop
    assert len(larger.judge_calls) == 2  # and judged both answers
    line = describe_step("answer_hop", {"hops": [hop1]}, {})
    assert "; read again by the larger model: 'Mel Brooks' replaced by 'David Lynch'; its pages state it: p = 1.00" in line
    # the larger model reads the same answer, or finds its own no better supported: the small model's answer stays
    for other in (larger_llm(reads="Mel Brooks"), larger_llm(says_yes=())):
        kept, _ = support_run("sunar", "escalate", escalation=other)
        assert (kept["hops"][0]["answer"], kept["hops"][0]["escalated"], kept["hops"][0]["support"]) == ("Mel Brooks", "Mel Brooks", 0.0)
        assert "'Mel Brooks' kept" in describe_step("answer_hop", {"hops": kept["hops"][:1]}, {})
    plain, _ = support_run("self_ask", "escalate", escalation=larger_llm())  # Self-Ask has no judge: nothing is escalated
    assert "escalated" not in plain["hops"][0] and plain["hops"][0]["answer"] == "Mel Brooks"


def test_escalate_needs_the_larger_model_named():
    import pytest

    from sunar.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="hop_support=escalate needs escalate_llm"):
        Configuration.from_runnable_config({"configurable": {"hop_support": "escalate"}}).check()
    with pytest.raises(ConfigurationError, match="unknown escalate_llm 'gpt'"):
        Configuration.from_runnable_config({"configurable": {"hop_support": "escalate", "escalate_llm": "gpt"}}).check()
    with pytest.raises(ConfigurationError, match="the resources given hold no escalation LLM"):  # a Python caller's own resources
        support_run("sunar", "escalate", escalate_llm="embedded:qwen2.5-1.5b")
    with pytest.raises(ConfigurationError, match="hop_support=escalate_uncertain needs escalate_llm"):
        Configuration.from_runnable_config({"configurable": {"hop_support": "escalate_uncertain"}}).check()


def test_an_uncertain_hop_its_judge_does_not_doubt_is_read_again_by_the_larger_model_with_escalate_uncertain():
    """The small model takes Mel Brooks for the director 3 times in 4 and its judge believes it; the
    answers split, so ``escalate_uncertain`` has the larger model read the hop, and David Lynch is kept."""

    def answer(question, i):
        if question.startswith(("SUPPORT:", "FITS:")):
            return "yes"
        if question == "Who directed Ronnie Rocket?":
            return "David Lynch" if i == 1 else "Mel Brooks"
        return {"Where was David Lynch born?": "Missoula", "Where was Mel Brooks born?": "Brooklyn", "MER:" + QUESTION: "Missoula"}.get(question, "unknown")

    def run(hop_support):
        larger = larger_llm()
        res = resources(scripted_llm(self_ask, answer), TableScorer(SCORES), MemoryIndex(CORPUS, RANKINGS), nli=TableNLI(), escalation=larger)
        cfg = {"resources": res, "batch_size": 2, "budget": 2, "samples": 2, "asu_batches": False, "calibration": "off", "hop_samples": 3,
               "hop_support": hop_support, "escalate_llm": "embedded:qwen2.5-1.5b"}
        return whole_state(build_graph("sunar"), {"question": QUESTION}, {"configurable": cfg})["hops"][0], larger

    hop, larger = run("escalate_uncertain")
    assert [c["answer"] for c in hop["candidates"]] == ["Mel Brooks", "David Lynch"]  # split: more than one semantic set
    assert (hop["answer"], hop["escalated"], hop["support"]) == ("David Lynch", "Mel Brooks", 1.0) and len(larger.judge_calls) == 2
    believed, larger = run("escalate")  # the judge alone does not doubt it: the larger model is never asked
    assert believed["answer"] == "Mel Brooks" and "escalated" not in believed and larger.calls == []

def cut_run(verdicts, variant="sunar", cut_answer="David Lynch", **config):
    """The director's hop finds Ronnie Rocket's page and Mel Brooks's; its reader names Mel Brooks when
    Ronnie Rocket's page comes first (the greedy reading), ``cut_answer`` when Mel Brooks's does (the cut
    reading, reversed); the judge says yes to the (sub-question = answer) pairs of ``verdicts``."""
    rankings = {**RANKINGS, "Who directed Ronnie Rocket?": [("rr", 3.0), ("mb", 2.0)]}
    places = {"Where was David Lynch born?": "Missoula", "Where was Mel Brooks born?": "Brooklyn", "MER:" + QUESTION: "Missoula"}

    def answer(question, i):
        if question.startswith(("SUPPORT:", "FITS:")):
            return "yes" if question.split(":", 1)[1] in verdicts or question.startswith("FITS:") else "no"
        return places.get(question, "unknown")

    llm = scripted_llm(self_ask, answer)
    script = llm.chat.script

    def first_page(prompt, i):
        if prompt.endswith("Question: Who directed Ronnie Rocket?"):
            return cut_answer if prompt.rsplit("Documents:\n", 1)[1].startswith("[1] Mel Brooks:") else "Mel Brooks"
        return script(prompt, i)

    llm.chat.script = first_page
    res = resources(llm, TableScorer(SCORES), MemoryIndex(CORPUS, rankings), nli=TableNLI())
    cfg = {"resources": res, "batch_size": 2, "budget": 2, "samples": 2, "asu_batches": False, "calibration": "off", "hop_support": "cut_uncertain", **config}
    return whole_state(build_graph(variant), {"question": QUESTION}, {"configurable": cfg}), llm


def test_a_hop_read_again_cut_short_and_reversed_takes_that_answer_when_it_is_better_supported(monkeypatch):
    out, llm = cut_run({"Who directed Ronnie Rocket? = David Lynch", "Where was David Lynch born? = Missoula"})
    hop1 = out["hops"][0]  # Mel Brooks read first, judged no; the cut reading (Mel Brooks's sentence first) names David Lynch, judged yes
    assert (hop1["answer"], hop1["support"], hop1["unsupported"], hop1["cut_read"]) == ("David Lynch", 1.0, "Mel Brooks", "David Lynch")
    assert [h["question"] for h in out["hops"]] == ["Who directed Ronnie Rocket?", "Where was David Lynch born?"] and out["answer"] == "Missoula"
    director = [p.rsplit("Documents:\n", 1)[1] for p in llm.calls if p.endswith("Question: Who directed Ronnie Rocket?")]
    assert len(director) == 2 and director[1].startswith("[1] Mel Brooks: Mel Brooks was born in Brooklyn.\n[2] Ronnie Rocket: ")
    judged = [c.rsplit("Question: ", 1)[1] for c in llm.judge_calls if "Proposed answer:" in c and "Steps:" not in c]
    assert judged[:2] == ["Who directed Ronnie Rocket?\nProposed answer: Mel Brooks\nDo the documents state this answer?",
                          "Who directed Ronnie Rocket?\nProposed answer: David Lynch\nDo the documents state this answer?"]
    hop2 = out["hops"][1]  # its pages state Missoula: not read again
    assert hop2["answer"] == "Missoula" and "cut_read" not in hop2 and len(judged) == 3
    assert "'Who directed Ronnie Rocket?' read again from its pages cut short: 'David Lynch' is better supported than 'Mel Brooks'" in out["notes"]
    assert "; read again cut short: 'David Lynch' taken for 'Mel Brooks'; its pages state it: p = 1.00" in describe_step("answer_hop", {"hops": [hop1]}, {})
    # the cut reading judged no better: the hop keeps its answer
    kept, _ = cut_run({"Where was Mel Brooks born? = Brooklyn"})
    assert (kept["hops"][0]["answer"], kept["hops"][0]["cut_read"], kept["hops"][0]["support"]) == ("Mel Brooks", "David Lynch", 0.0)
    assert "unsupported" not in kept["hops"][0] and kept["hops"][1]["question"] == "Where was Mel Brooks born?"
    assert "; read again cut short: 'David Lynch' not taken;" in describe_step("answer_hop", {"hops": kept["hops"][:1]}, {})
    # one sentence kept, Ronnie Rocket's (the first of sentences the scorer ties): it reads Mel Brooks again
    monkeypatch.setattr("sunar.hop_support.CUT_SENTENCES", 1)
    alone, llm = cut_run({"Where was Mel Brooks born? = Brooklyn"})
    assert alone["hops"][0]["cut_read"] == "Mel Brooks" and alone["hops"][0]["answer"] == "Mel Brooks"
    # a cut reading of the wrong kind (a bare date for a who) is neither judged nor taken, whatever the judge would say
    monkeypatch.undo()
    dated, llm = cut_run({"Who directed Ronnie Rocket? = 21 June 1770"}, cut_answer="21 June 1770")
    assert (dated["hops"][0]["answer"], dated["hops"][0]["cut_read"]) == ("Mel Brooks", "21 June 1770") and "unsupported" not in dated["hops"][0]
    assert not [c for c in llm.judge_calls if "Proposed answer: 21 June 1770" in c]
    # a graph without the judge (Self-Ask) reads nothing again
    plain, llm = cut_run({"Who directed Ronnie Rocket? = David Lynch"}, variant="self_ask")
    assert plain["hops"][0]["answer"] == "Mel Brooks" and "cut_read" not in plain["hops"][0] and not llm.judge_calls


def test_cut_uncertain_reads_again_cut_short_only_the_hops_the_judge_doubts_or_whose_answers_split():
    from sunar.hop_support import doubted

    verdicts = {"Who directed Ronnie Rocket? = David Lynch", "Where was David Lynch born? = Missoula"}
    out, llm = cut_run(verdicts)
    hop1, hop2 = out["hops"]  # Mel Brooks doubted: read again cut short, David Lynch taken; Missoula believed: not read again
    assert (hop1["answer"], hop1["unsupported"], hop1["cut_read"]) == ("David Lynch", "Mel Brooks", "David Lynch") and out["answer"] == "Missoula"
    assert hop2["answer"] == "Missoula" and "cut_read" not in hop2
    assert len([p for p in llm.calls if p.endswith("Question: Where was David Lynch born?")]) == 1  # read once
    believed, _ = cut_run({"Who directed Ronnie Rocket? = Mel Brooks"})
    assert believed["hops"][0]["answer"] == "Mel Brooks" and "cut_read" not in believed["hops"][0]
    # answers that split count (as for escalate_uncertain, not escalate); a split into "unknown" does not
    split = {"answer": "Mel Brooks", "candidates": [{"answer": "Mel Brooks", "share": 0.75}, {"answer": "David Lynch", "share": 0.25}]}
    assert doubted(split, 0.9) and not doubted(split, 0.9, split_counts=False) and doubted(split, 0.4, split_counts=False)
    assert not doubted({**split, "candidates": split["candidates"][:1]}, 0.9)
    assert not doubted({**split, "candidates": [split["candidates"][0], {"answer": "unknown", "share": 0.25}]}, 0.9)

