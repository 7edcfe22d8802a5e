"""Uncertainty that acts: a hop's own samples, chains branched off uncertain hops, the chosen chain,
the final vote and grounded answers, with a scripted LLM and a scripted NLI."""

import json
import re

from fakes import MemoryIndex, TableNLI, TableScorer, docs, question_of, resources, scripted_llm, whole_state
from sunar.configuration import Configuration
from sunar.graph import build_graph, describe_step
from sunar.nodes.next_chain import choose, support
from sunar.nodes.vote import chain_vote, tally
from sunar.prompts import careful
from sunar.prompts.mer import bridge_in, bridges
from sunar.prompts.plan import SYSTEM as PLAN_SYSTEM
from sunar.prompts.self_ask import SYSTEM as SELF_ASK_SYSTEM
from sunar.prompts.spans import final_spans, grounded_schema, spans, without_parts

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
    "Who directed Ronnie Rocket? David Lynch Mel Brooks": [("rr", 3.0), ("mb", 2.0)],  # retrieved again (requery)
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


def run(director=("David Lynch", "David Lynch", "Mel Brooks"), mer_answer="Missoula", variant="sunar", retry=None, plan="", lynch_born="Missoula", **config):
    """The graph on the question; the director's answers are (greedy, sample 1, sample 2, ...);
    ``retry``: MER's reply when it is asked again because it named a bridge entity; ``plan``: the
    reply to a planned decomposition's prompt."""
    places = {"Where was David Lynch born?": lynch_born, "Where was Mel Brooks born?": "Brooklyn"}

    def answer(question, i):
        if question == "Who directed Ronnie Rocket?":  # the hop's samples are director[1:], the greedy answer director[0]
            return director[0] if i == 0 and not answer.sampling else director[min(i + 1, len(director) - 1)]
        if question.startswith("MER:"):
            return mer_answer
        return places.get(question, "unknown")

    llm = flag_samples(scripted_llm(self_ask, answer, plan=lambda prompt: plan), answer)
    script = llm.chat.script
    llm.chat.script = lambda prompt, i: retry if retry is not None and "on the way to the answer" in prompt else script(prompt, i)
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


def test_each_chain_fills_the_plan_with_its_own_answers():
    out, llm = run(branch_width=2, decomposition="plan", plan="1. Who directed Ronnie Rocket?\n2. Where was #1 born?")
    assert out["plan"] == ["Who directed Ronnie Rocket?", "Where was #1 born?"]
    chains = out["chains"]
    assert [[h["question"] for h in c["hops"]] for c in chains] == [
        ["Who directed Ronnie Rocket?", "Where was David Lynch born?"],
        ["Who directed Ronnie Rocket?", "Where was Mel Brooks born?"],
    ]
    assert [c["answer"] for c in chains] == ["Missoula", "Brooklyn"] and out["answer"] == "Missoula"
    # one plan for the question, and no Self-Ask step at all
    assert sum(c.startswith(PLAN_SYSTEM) for c in llm.calls) == 1 and not any(c.startswith(SELF_ASK_SYSTEM) for c in llm.calls)


def test_documents_read_alone_that_disagree_on_the_bridge_branch_the_chain():
    rankings = {**RANKINGS, "Who directed Ronnie Rocket?": [("rr", 3.0), ("mb", 2.0)]}

    def answer(question, i):  # the greedy read sees both pages; the samples would all agree
        return {"Where was David Lynch born?": "Missoula", "Where was Mel Brooks born?": "Brooklyn"}.get(question, "David Lynch")

    llm = scripted_llm(self_ask, answer)
    script = llm.chat.script

    def brooks_alone(prompt):  # the director's hop read from Mel Brooks's page alone
        return "Who directed Ronnie Rocket?" in prompt and "Mel Brooks was born" in prompt and "unfinished film" not in prompt

    def per_document(prompt, i):  # ... names him
        return "Mel Brooks" if brooks_alone(prompt) else script(prompt, i)

    llm.chat.script = per_document
    res = resources(llm, TableScorer(SCORES), MemoryIndex(CORPUS, rankings), nli=TableNLI())
    cfg = {"resources": res, "batch_size": 2, "budget": 2, "samples": 2, "hop_samples": 2, "asu_batches": False, "calibration": "off", "branch_width": 2}
    sampled = build_graph("sunar").invoke({"question": QUESTION}, {"configurable": cfg})
    assert sampled["hops"][0]["samples"] == ["David Lynch"] * 3 and len(sampled["chains"] or []) <= 1  # the samples agree
    read = build_graph("sunar").invoke({"question": QUESTION}, {"configurable": {**cfg, "hop_reading": "documents"}})
    assert read["hops"][0]["samples"] == ["David Lynch", "David Lynch", "Mel Brooks"]  # greedy, then Ronnie Rocket's page, Mel Brooks's
    assert [c["hops"][-1]["question"] for c in read["chains"]] == ["Where was David Lynch born?", "Where was Mel Brooks born?"]
    assert sum(map(brooks_alone, llm.calls)) == 1  # Mel Brooks's page was read alone once, in the run that reads documents
    # With focus_pages the hop reads only the page its question names (Ronnie Rocket): that page alone agrees.
    before = len(llm.calls)
    focused = build_graph("sunar").invoke({"question": QUESTION}, {"configurable": {**cfg, "hop_reading": "documents", "focus_pages": True}})
    assert focused["hops"][0]["samples"] == ["David Lynch", "David Lynch"] and len(focused["chains"] or []) <= 1
    assert sum(map(brooks_alone, llm.calls)) == 1
    director = [p for p in llm.calls[before:] if p.endswith("Question: Who directed Ronnie Rocket?")]
    assert len(director) == 1  # Ronnie Rocket's page read once: the greedy reply is already that page's alone


def test_a_hops_pages_cut_to_their_best_sentences_and_read_in_other_orders_branch_the_chain():
    rankings = {**RANKINGS, "Who directed Ronnie Rocket?": [("rr", 3.0), ("mb", 2.0)]}

    def answer(question, i):  # every reading names David Lynch, but for the director's hop below
        return {"Where was David Lynch born?": "Missoula", "Where was Mel Brooks born?": "Brooklyn"}.get(question, "David Lynch")

    llm = scripted_llm(self_ask, answer)
    script = llm.chat.script

    def first_page(prompt, i):  # the director's hop names whoever's page it reads first
        if prompt.endswith("Question: Who directed Ronnie Rocket?") and prompt.rsplit("Documents:\n", 1)[1].startswith("[1] Mel Brooks:"):
            return "Mel Brooks"
        return script(prompt, i)

    llm.chat.script = first_page
    scorer = TableScorer(SCORES)
    res = resources(llm, scorer, MemoryIndex(CORPUS, rankings), nli=TableNLI())
    cfg = {"resources": res, "batch_size": 2, "budget": 2, "samples": 2, "hop_samples": 2, "asu_batches": False, "calibration": "off",
           "branch_width": 2, "hop_reading": "sentences"}
    out = build_graph("sunar").invoke({"question": QUESTION}, {"configurable": cfg})
    # one sentence a page, all kept: read reversed (Mel Brooks's page first), then rotated by two (two pages: as ranked)
    assert out["hops"][0]["samples"] == ["David Lynch", "Mel Brooks", "David Lynch"]
    assert [c["hops"][-1]["question"] for c in out["chains"]] == ["Where was David Lynch born?", "Where was Mel Brooks born?"]
    assert ("Who directed Ronnie Rocket?", ["rr#0", "mb#0"]) in scorer.calls  # each sentence scored with its page's title
    director = [p for p in llm.calls if p.endswith("Question: Who directed Ronnie Rocket?")]
    shown = [p.rsplit("Documents:\n", 1)[1].split("\n\nQuestion")[0] for p in director]
    assert len(director) == 3 and shown[1] == "[1] Mel Brooks: Mel Brooks was born in Brooklyn.\n[2] Ronnie Rocket: " + CORPUS["rr"].text
    # with focus_pages the greedy reading reads only the page the sub-question names; the cut ones read every page
    focused = build_graph("sunar").invoke({"question": QUESTION}, {"configurable": {**cfg, "focus_pages": True}})
    assert focused["hops"][0]["read"] == ["rr"] and focused["hops"][0]["samples"] == ["David Lynch", "Mel Brooks", "David Lynch"]
    # cut to the one sentence the scorer ranks first (Mel Brooks's), every other reading names him: his set is followed
    scorer.table, before = {**SCORES, "mb#0": 1.0}, len(llm.calls)
    cut = build_graph("sunar").invoke({"question": QUESTION}, {"configurable": {**cfg, "hop_sentences": 1}})
    assert cut["hops"][0]["samples"] == ["David Lynch", "Mel Brooks", "Mel Brooks"]
    assert [c["hops"][-1]["question"] for c in cut["chains"]] == ["Where was Mel Brooks born?", "Where was David Lynch born?"]
    again = [p.rsplit("Documents:\n", 1)[1] for p in llm.calls[before:] if p.endswith("Question: Who directed Ronnie Rocket?")]
    assert len(again) == 3 and all(p.startswith("[1] Mel Brooks: Mel Brooks was born in Brooklyn.\n\nQuestion") for p in again[1:])


def test_an_uncertain_hop_is_retrieved_again_once_with_its_candidates():
    out, llm = run(requery=True, branch_width=2)
    hop1 = out["hops"][0]
    assert hop1["requery"] == "Who directed Ronnie Rocket? David Lynch Mel Brooks" and out["acted"] == "uncertain"
    # the second first stage skips what the first round scored; the hop reads both rounds
    assert [b["ids"] for b in hop1["batches"]] == [["rr"], ["mb"]]
    assert [e["id"] for e in hop1["evidence"]] == ["rr", "mb"]
    director = [c for c in llm.calls if c.endswith("Question: Who directed Ronnie Rocket?")]
    assert len(director) == 2 * 3  # greedy + 2 samples, in each round; then it branches as before
    assert [c["answer"] for c in out["chains"]] == ["Missoula", "Brooklyn"]
    assert "requery" not in out["chains"][0]["hops"][1] and any("retrieving again" in n for n in out["notes"])


def test_a_certain_hop_or_requery_off_retrieves_once():
    for director, config in ((("David Lynch",) * 3, {"requery": True}), (("David Lynch", "David Lynch", "Mel Brooks"), {})):
        out, _ = run(director=director, **config)
        assert "requery" not in out["hops"][0] and len(out["hops"][0]["batches"]) == 1


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


def test_the_vote_pools_the_final_answer_with_the_chains():
    out, _ = run(mer_answer="Brooklyn", branch_width=2, final_vote=True)
    # MER's Brooklyn (weighing the Missoula chain it read, 0.67) + the Brooklyn chain (0.33) outweigh Missoula (0.67)
    assert out["answer"] == "Brooklyn"
    out, _ = run(mer_answer="unknown", branch_width=2, final_vote=True)
    assert out["answer"] == "Missoula" and out["acted"] == "outvoted"
    out, _ = run(mer_answer="unknown", branch_width=2)  # no vote without final_vote: MER's answer stands
    assert out["answer"] == "unknown" and out.get("acted") != "outvoted"
    assert tally(["Seoul", "Korea", "korea"], [1.0, 0.7, 0.6], [[0], [1, 2]]) == "Korea"
    assert tally(["Seoul", "Korea", "Goryeo"], [1.0, 0.7, 0.6], [[0], [1], [2]]) == "Seoul"
    assert tally(["unknown", "Korea"], [1.0, 0.2], [[0], [1]]) == "Korea"


def _voted(final: str, read: float, *chains: tuple[str, float]) -> str:
    done = [{"hops": [], "draft_answer": "", "status": "done", "answer": a, "weight": w} for a, w in chains]
    state = {"question": "Which team does not play at the Garden?", "answer": final, "weight": read, "chains": done}
    llm = scripted_llm(self_ask, lambda question, i: "unknown")
    return chain_vote(state, {"configurable": {"resources": resources(llm, TableScorer({}), MemoryIndex(CORPUS, {}))}}).get("answer", final)


def test_the_final_step_weighs_the_chain_it_read():
    # it departed from its chain, which the other chain agrees with: the chains decide
    assert _voted("Boston Red Sox", 0.5, ("Brooklyn Nets", 0.5), ("Brooklyn Nets", 0.5)) == "Brooklyn Nets"
    # against its own chain alone it is a tie, and the final step's answer stands
    assert _voted("James Schiro", 0.75, ("Brian Moynihan", 0.75), ("Bank of America", 0.25)) == "James Schiro"
    # a chain it agrees with adds to it
    assert _voted("Brooklyn", 0.67, ("Missoula", 0.67), ("Brooklyn", 0.33)) == "Brooklyn"


def test_chain_support_and_choice():
    hop = {"question": "q", "answer": "x", "batches": [], "evidence": [{"id": "d", "title": "T", "text": "born in Missoula, Montana", "score": 1.0}]}
    chain = {"hops": [hop], "draft_answer": "", "status": "done"}
    assert support({**chain, "answer": "Missoula", "weight": 1.0}) == 1.0
    assert support({**chain, "answer": "Brooklyn", "weight": 1.0}) == 0.5
    assert support({**chain, "answer": "unknown", "weight": 1.0}) == 0.0
    chains = [{**chain, "answer": "Brooklyn", "weight": 0.6}, {**chain, "answer": "Missoula", "weight": 0.4}]
    assert choose(chains) == 1  # 0.4 supported beats 0.6 * 0.5


def test_grounded_answers_are_decoded_under_the_evidence_spans():
    out, llm = run(grounded_answers=True)
    enums = [s["properties"]["answer"]["enum"] for s in llm.schemas if s and "enum" in s.get("properties", {}).get("answer", {})]
    assert enums, "no hop answer was asked under a grounded schema"
    assert "Missoula, Montana" in enums[-1] and "January 20, 1946" in enums[-1] and enums[-1][-1] == "unknown"


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


def test_whole_answers_keep_the_pieces_of_the_hops_answers_out_of_the_final_spans():
    def allowed(**config):
        _, llm = run(grounded_final=True, lynch_born="Missoula, Montana", **config)
        return [s for s in llm.schemas if s and "rationale" in s.get("properties", {})][-1]["properties"]["answer"]["enum"]

    assert "Missoula" in allowed() and "Montana" in allowed()  # the evidence's spans, pieces of the hop's answer
    kept = allowed(whole_answers=True)
    assert "Missoula, Montana" in kept and "Missoula" not in kept and "Montana" not in kept and "David" not in kept
    assert "David Lynch" in kept and "Brooklyn" not in kept and kept[-1] == "unknown"
    assert without_parts(["Bratislava", "Academy of Performing Arts in Bratislava", "Arts in", "Vienna", "yes"],
                         ["Academy of Performing Arts in Bratislava", "unknown", ""]) == ["Academy of Performing Arts in Bratislava", "Vienna", "yes"]
    assert without_parts(["Korea"], ["Korean Peninsula"]) == ["Korea"]  # a piece is whole words


def test_a_final_answer_that_is_a_bridge_entity_is_asked_for_again():
    """MER names the director, the answer to the first step that the second names: asked once more."""
    out, _ = run(director=("David Lynch",) * 3, mer_answer="David Lynch", retry='{"answer": "Missoula"}', bridge_to_last=False)
    assert out["answer"] == "David Lynch"  # off by default
    out, llm = run(director=("David Lynch",) * 3, mer_answer="David Lynch", retry='{"answer": "x"}')
    assert out["answer"] == "Missoula" and not any("on the way to the answer" in c for c in llm.calls)  # bridge_to_last: the last hop's, no call
    out, llm = run(director=("David Lynch",) * 3, mer_answer="David Lynch", retry='{"answer": "Missoula"}', final_not_bridge=True)
    assert out["answer"] == "Missoula"
    assert any("the answer to the step 'Who directed Ronnie Rocket?'" in n and "it answered 'Missoula'" in n for n in out["notes"])
    out, llm = run(director=("David Lynch",) * 3, mer_answer="David Lynch", retry='{"answer": "David Lynch"}', final_not_bridge=True, bridge_to_last=False)
    assert out["answer"] == "David Lynch" and any("it kept to it" in n for n in out["notes"])
    out, llm = run(director=("David Lynch",) * 3, mer_answer="Missoula", retry='{"answer": "x"}', final_not_bridge=True)
    assert out["answer"] == "Missoula" and not any("on the way to the answer" in c for c in llm.calls)  # not a bridge: no call


def test_a_grounded_final_answer_asked_again_may_not_be_a_bridge():
    out, llm = run(director=("David Lynch",) * 3, mer_answer="David Lynch", retry='{"answer": "Missoula"}', final_not_bridge=True, grounded_final=True)
    retry = [s for s, c in zip(llm.schemas, llm.calls, strict=True) if "on the way to the answer" in c]
    assert len(retry) == 1 and out["answer"] == "Missoula"
    allowed = retry[0]["properties"]["answer"]["enum"]
    assert "David Lynch" not in allowed and "Missoula" in allowed and allowed[-1] == "unknown"


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
    assert grounded_schema([])["properties"]["answer"]["enum"] == ["unknown"]
    # names whose capitals lie beyond Latin-1 are spans whole
    assert spans([{"title": "Days and Hours", "text": "It was directed by Pjer Žalica, who studied in Łódź."}])[-2:] == ["Pjer Žalica", "Łódź"]


def test_the_stream_shows_candidates_and_chains():
    hop = {"question": "q", "answer": "David Lynch", "evidence": [], "candidates": [{"answer": "David Lynch", "share": 0.67}, {"answer": "Mel Brooks", "share": 0.33}]}
    assert "candidates: David Lynch (67%), Mel Brooks (33%)" in describe_step("answer_hop", {"hops": [hop]}, {})
    hop["samples"] = ["David Lynch", "David Lynch", "Mel Brooks"]
    assert "; candidates of 3 answers: David Lynch (67%), Mel Brooks (33%)" in describe_step("answer_hop", {"hops": [hop]}, {})
    chains = [{"answer": "Missoula", "weight": 0.67}, {"answer": "Brooklyn", "weight": 0.33}]
    assert describe_step("answer_hop", {"requery": "Who directed it? A B", "acted": "uncertain"}, {}) == "uncertain: retrieving again for 'Who directed it? A B'"
    assert describe_step("retrieve", {"ranking": [("d", 1.0)]}, {"requery": "q A B"}) == "first stage again, for 'q A B': 1 documents"
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


def test_a_hop_answer_its_pages_do_not_state_is_read_again_with_it_ruled_out():
    plain, llm = support_run("self_ask", "reread")  # the judge is SUNAR's own: Self-Ask's hop stands unjudged
    assert plain["hops"][0]["answer"] == "Mel Brooks" and "support" not in plain["hops"][0] and llm.judge_calls == []
    out, llm = support_run("sunar", "reread")
    hop1 = out["hops"][0]
    assert (hop1["answer"], hop1["support"], hop1["unsupported"]) == ("David Lynch", 1.0, "Mel Brooks")
    assert [h["question"] for h in out["hops"]] == ["Who directed Ronnie Rocket?", "Where was David Lynch born?"]
    assert out["hops"][1]["support"] == 1.0 and "unsupported" not in out["hops"][1]
    assert out["reasoning_path"][0]["support"] == 1.0 and out["reasoning_path"][0]["unsupported"] == "Mel Brooks"
    assert out["signals"]["hop_support"] == 1.0
    assert any("'Mel Brooks' is not what the pages read" in n for n in out["notes"])
    line = describe_step("answer_hop", {"hops": [hop1]}, {})
    assert line.endswith("; read again: its pages do not state 'Mel Brooks'; its pages state it: p = 1.00"), line


def test_a_hop_answer_its_pages_do_not_state_is_retrieved_again_past_the_documents_scored():
    """The first stage ranks Ronnie Rocket's page, then David Lynch's; NAR scores one: the reader takes Mel
    Brooks from it, the judge says its page does not state that, and NAR goes on to the next page."""
    asked = []

    def answer(question, i):
        if question.startswith("SUPPORT:"):
            return "yes" if question.endswith("= David Lynch") or "born" in question else "no"
        if question == "Who directed Ronnie Rocket?" and i == 0:
            asked.append(question)
            return "Mel Brooks" if len(asked) == 1 else "David Lynch"  # read again from both rounds' pages
        return {"Where was David Lynch born?": "Missoula", "MER:" + QUESTION: "Missoula"}.get(question, "unknown")

    rankings = {**RANKINGS, "Who directed Ronnie Rocket?": [("rr", 3.0), ("dl", 2.0)]}
    llm = scripted_llm(self_ask, answer)
    res = resources(llm, TableScorer(SCORES), MemoryIndex(CORPUS, rankings), nli=TableNLI())
    cfg = {"resources": res, "batch_size": 1, "budget": 1, "samples": 2, "asu_batches": False, "calibration": "off", "hop_samples": 1, "hop_support": "retrieve"}
    steps = [(n, u) for chunk in build_graph("sunar").stream({"question": QUESTION}, {"configurable": cfg}, stream_mode="updates") for n, u in chunk.items()]
    requeried = [u for n, u in steps if n == "answer_hop" and u.get("requery")]
    assert len(requeried) == 1 and requeried[0]["requery"] == "Who directed Ronnie Rocket?"  # once, for its own sub-question
    assert requeried[0]["acted"] == "unsupported"
    assert describe_step("answer_hop", requeried[0], {}) == "its pages do not state its answer: retrieving again for 'Who directed Ronnie Rocket?'"
    hops = next(u for n, u in steps if n == "answer_hop" and u.get("hops"))["hops"]
    assert hops[0]["answer"] == "David Lynch" and hops[0]["support"] == 1.0 and hops[0]["requery"] == "Who directed Ronnie Rocket?"
    assert {e["id"] for e in hops[0]["evidence"]} == {"rr", "dl"}  # both rounds' pages
    assert [u["answer"] for _, u in steps if u.get("answer")][-1] == "Missoula"
    unjudged, _ = support_run("sunar", "judge")  # the judge alone retrieves nothing again
    assert unjudged["hops"][0]["answer"] == "Mel Brooks" and "requery" not in unjudged["hops"][0]


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
    reread, _ = support_run("sunar", "reread", fits="no")  # every hop supported, the answer not what was asked: the answer is the weak link
    assert (reread["signals"]["hop_support"], reread["signals"]["answer_fits"], reread["signals"]["chain_support"]) == (1.0, 0.0, 0.0)
    off, llm = support_run("sunar", "off")
    assert "answer_fits" not in off["signals"] and not llm.judge_calls
    assert "it answers the question" not in describe_common("confidence", {"trust": 0.4, "signals": off["signals"]})


def test_a_reread_that_names_the_same_or_nothing_or_is_no_better_keeps_the_first_answer():
    for reread in ("Mel Brooks", "unknown", "Ronnie Rocket"):  # the same; nothing; a name the judge does not back either
        out, llm = support_run("sunar", "reread", reread=reread)
        hop1 = out["hops"][0]
        assert (hop1["answer"], hop1["support"]) == ("Mel Brooks", 0.0) and "unsupported" not in hop1
        assert sum("(The answer is not Mel Brooks.)" in c for c in llm.calls) == 1  # read again once


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

    from sunar.configuration import Configuration
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

def test_a_doubted_hop_read_again_carefully_takes_the_answer_its_copied_sentence_holds():
    sentence = "Ronnie Rocket is an unfinished film by David Lynch, with a part for Mel Brooks"
    verdicts = {"Who directed Ronnie Rocket? = Mel Brooks": "no", "Who directed Ronnie Rocket? = David Lynch": "yes"}

    def run(reply, hop_support="careful", variant="sunar", samples=0):
        def answer(question, i):
            if question.startswith("CAREFUL:"):
                return reply
            if question.startswith("SUPPORT:"):
                return verdicts.get(question.removeprefix("SUPPORT:"), "yes")
            if question.startswith("FITS:"):
                return "yes"
            return {"Who directed Ronnie Rocket?": "Mel Brooks", "Where was David Lynch born?": "Missoula",
                    "Where was Mel Brooks born?": "Brooklyn", "MER:" + QUESTION: "Missoula"}.get(question, "unknown")

        llm = scripted_llm(self_ask, answer)
        res = resources(llm, TableScorer(SCORES), MemoryIndex(CORPUS, RANKINGS), nli=TableNLI())
        cfg = {"resources": res, "batch_size": 2, "budget": 2, "samples": 2, "asu_batches": False, "calibration": "off",
               "hop_support": hop_support, "hop_samples": samples}
        return whole_state(build_graph(variant), {"question": QUESTION}, {"configurable": cfg}), llm

    out, llm = run(json.dumps({"sentence": sentence, "answer": "David Lynch"}))
    hop1 = out["hops"][0]  # the judge doubted Mel Brooks; the careful reading copies the page's sentence, which holds Lynch
    assert (hop1["answer"], hop1["support"], hop1["read_carefully"], hop1["sentence"]) == ("David Lynch", 1.0, "Mel Brooks", sentence)
    assert [h["question"] for h in out["hops"]] == ["Who directed Ronnie Rocket?", "Where was David Lynch born?"]
    assert "read_carefully" not in out["hops"][1]  # its pages state Missoula: not read again
    assert sum(c.startswith(careful.SYSTEM) for c in llm.calls) == 1 and out["answer"] == "Missoula"
    assert out["reasoning_path"][0]["read_carefully"] == "Mel Brooks"
    assert any("'Mel Brooks' to 'Who directed Ronnie Rocket?' was doubted or uncertain; read again carefully" in n for n in out["notes"])
    assert "; read again carefully: 'Mel Brooks' replaced, the pages say" in describe_step("answer_hop", {"hops": [hop1]}, {})
    # a sentence not on the pages, an answer the sentence does not hold, the same answer, or no object: the hop stands
    for reply in (json.dumps({"sentence": "Ronnie Rocket was directed by David Lynch", "answer": "David Lynch"}),
                  json.dumps({"sentence": sentence, "answer": "Kyle MacLachlan"}),
                  json.dumps({"sentence": sentence, "answer": "Mel Brooks"}), "David Lynch"):
        kept, _ = run(reply)
        assert (kept["hops"][0]["answer"], kept["hops"][0]["support"], kept["hops"][0]["read_carefully"]) == ("Mel Brooks", 0.0, "Mel Brooks")
        assert "sentence" not in kept["hops"][0] and not any("read again carefully" in n for n in kept["notes"])
        assert "; read again carefully: 'Mel Brooks' kept" in describe_step("answer_hop", {"hops": kept["hops"][:1]}, {})
    judged, llm = run(json.dumps({"sentence": sentence, "answer": "David Lynch"}), hop_support="judge")  # the judge alone reads nothing again
    assert judged["hops"][0]["answer"] == "Mel Brooks" and not any(c.startswith(careful.SYSTEM) for c in llm.calls)
    assert "read_carefully" not in judged["hops"][0]


def test_a_careful_answer_needs_a_sentence_of_the_pages_about_what_the_question_names():
    pages = [{"title": "Malcolm Shabazz", "text": "His father, L. A. Bouasba, was an Algerian Muslim. He grew up in Paris."},
             {"title": "Humehume", "text": "He was the son of Kaumualii, king of Kauai."}]

    def reply(sentence, answer):
        return careful.quoted_answer(json.dumps({"sentence": sentence, "answer": answer}), "Who is Humehume's father?", pages)

    assert reply("He was the son of Kaumualii, king of Kauai.", "Kaumualii") == ("Kaumualii", "He was the son of Kaumualii, king of Kauai.")  # on his page
    assert reply("His father, L. A. Bouasba, was an Algerian Muslim.", "L. A. Bouasba") is None  # someone else's father
    assert reply("He was the son of Kaumualii", "Kauai") is None  # the sentence does not hold the answer
    anyone = careful.quoted_answer(json.dumps({"sentence": "His father, L. A. Bouasba, was an Algerian Muslim", "answer": "L. A. Bouasba"}),
                                   "who was the father?", pages)
    assert anyone == ("L. A. Bouasba", "His father, L. A. Bouasba, was an Algerian Muslim")  # a question that names nobody: any sentence


def test_an_uncertain_hop_its_judge_believes_is_read_again_carefully():
    from sunar.hop_support import escalating

    cfg = Configuration(hop_support="careful")
    split = {"answer": "Mel Brooks", "candidates": [{"answer": "Mel Brooks", "share": 0.75}, {"answer": "David Lynch", "share": 0.25}]}
    assert escalating(split, 0.9, cfg) and escalating({"answer": "Mel Brooks"}, 0.2, cfg)  # split samples, or a doubting judge
    assert not escalating({**split, "candidates": split["candidates"][:1]}, 0.9, cfg)  # one set and believed
    assert not escalating({**split, "candidates": [split["candidates"][0], {"answer": "unknown", "share": 0.25}]}, 0.9, cfg)
    assert not escalating(split, 0.9, Configuration(hop_support="escalate", escalate_llm="embedded:qwen2.5-1.5b"))  # only escalate_uncertain and careful count splits


def test_a_final_answer_gives_way_to_the_last_hops_answer_its_pages_state():
    out, _ = support_run("sunar", "judge", final_from_hop=True)  # the chain goes on from Mel Brooks to Brooklyn; MER says Missoula
    assert out["answer"] == "Brooklyn" and any("which its pages state, replaced the final step's 'Missoula'" in n for n in out["notes"])
    assert out["acted"] == "hop_supported"
    kept, _ = support_run("sunar", "judge")  # off: MER's answer stands
    assert kept["answer"] == "Missoula"
    agreed, _ = support_run("self_ask", "judge", final_from_hop=True)  # Self-Ask concluded with the last hop's answer
    assert agreed["answer"] == "Brooklyn" and not any("which its pages state" in n for n in agreed["notes"])


def test_the_last_hops_answer_replaces_nothing_unless_supported_past_the_bridge_and_different():
    from sunar.nodes.vote import supported_hop

    question = "Where was the director of Ronnie Rocket born?"
    hops = [{"question": "Who directed Ronnie Rocket?", "answer": "David Lynch", "support": 0.9},
            {"question": "Where was David Lynch born?", "answer": "Missoula", "support": 0.8}]
    assert supported_hop({"question": question, "answer": "Montana", "hops": hops}) == "Missoula"
    assert supported_hop({"question": question, "answer": "Missoula, Montana", "hops": hops}) is None  # it agrees
    assert supported_hop({"question": question, "answer": "Montana", "hops": [hops[0], {**hops[1], "support": 0.4}]}) is None
    assert supported_hop({"question": question, "answer": "Montana", "hops": [hops[0], {**hops[1], "support": None}]}) is None
    assert supported_hop({"question": question, "answer": "Montana", "hops": hops[:1]}) is None  # a chain that ended on its bridge
    assert supported_hop({"question": question, "answer": "Montana", "hops": [hops[0], {**hops[1], "answer": "unknown"}]}) is None
    assert supported_hop({"question": question, "answer": "Montana", "hops": []}) is None
    line = describe_step("vote", {"answer": "Missoula", "acted": "hop_supported"}, {})
    assert line == "the last hop's supported answer replaced the final step's: Missoula"
    assert describe_step("vote", {"answer": "Missoula", "acted": "outvoted"}, {}) == "the chains outvoted the final step: Missoula"


def branch_run(**config):
    """The reader takes Mel Brooks (in a part on Ronnie Rocket's page) for the director twice of three
    times, David Lynch once; the judge says the page states David Lynch, not Mel Brooks."""
    directors = ["Mel Brooks", "Mel Brooks", "David Lynch"]
    verdicts = {"Who directed Ronnie Rocket? = David Lynch": "yes", "Where was David Lynch born? = Missoula": "yes", "Where was Mel Brooks born? = Brooklyn": "yes"}
    places = {"Where was David Lynch born?": "Missoula", "Where was Mel Brooks born?": "Brooklyn"}

    def answer(question, i):
        if question.startswith("SUPPORT:"):
            return verdicts.get(question.removeprefix("SUPPORT:"), "no")
        if question.startswith("FITS:"):
            return "yes"
        if question == "Who directed Ronnie Rocket?":
            return directors[0] if not answer.sampling else directors[1 + i % 2]
        return "Missoula" if question.startswith("MER:") else places.get(question, "unknown")

    llm = flag_samples(scripted_llm(self_ask, answer), answer)
    res = resources(llm, TableScorer(SCORES), MemoryIndex(CORPUS, RANKINGS), nli=TableNLI())
    cfg = {"resources": res, "batch_size": 2, "budget": 2, "samples": 2, "hop_samples": 2, "asu_batches": False, "calibration": "off",
           "hop_support": "judge", "branch_width": 2, **config}
    return whole_state(build_graph("sunar"), {"question": QUESTION}, {"configurable": cfg}), llm


def test_branches_weighed_by_their_pages_support():
    plain, _ = branch_run()  # by the samples' shares: Mel Brooks is followed first and weighs most
    assert plain["hops"][0]["candidates"] == [{"answer": "Mel Brooks", "share": 0.6667}, {"answer": "David Lynch", "share": 0.3333}]
    assert [(c["hops"][0]["answer"], c["weight"]) for c in plain["chains"]] == [("Mel Brooks", 0.6667), ("David Lynch", 0.3333)]
    assert plain["answer"] == "Missoula" and plain["chosen"] == 0 and plain["hops"][0]["answer"] == "Mel Brooks"
    out, llm = branch_run(branch_support=True)  # share times P(yes): David Lynch 0.33, Mel Brooks 0
    assert out["hops"][0]["candidates"] == plain["hops"][0]["candidates"]  # the samples' shares stay as they were
    assert [(c["hops"][0]["answer"], c["hops"][0]["support"], c["weight"]) for c in out["chains"]] == [("David Lynch", 1.0, 0.3333), ("Mel Brooks", 0.0, 0.0)]
    assert out["chosen"] == 0 and [h["answer"] for h in out["hops"]] == ["David Lynch", "Missoula"]
    assert any("weighed by its pages' support: 'David Lynch' (p = 1.00), 'Mel Brooks' (p = 0.00)" in n for n in out["notes"])
    # each candidate is judged once: the followed one's support is not asked again
    asked = [m for m in llm.judge_calls if question_of(str(m)) == "Who directed Ronnie Rocket?"]
    assert len(asked) == 2, asked
    same, _ = branch_run(branch_support=True, hop_support="off")  # nothing is judged without hop_support
    assert [c["weight"] for c in same["chains"]] == [0.6667, 0.3333]


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
    cfg = {"resources": res, "batch_size": 2, "budget": 2, "samples": 2, "asu_batches": False, "calibration": "off", "hop_support": "cut", **config}
    return whole_state(build_graph(variant), {"question": QUESTION}, {"configurable": cfg}), llm


def test_a_hop_read_again_cut_short_and_reversed_takes_that_answer_when_it_is_better_supported():
    out, llm = cut_run({"Who directed Ronnie Rocket? = David Lynch", "Where was David Lynch born? = Missoula"})
    hop1 = out["hops"][0]  # Mel Brooks read first, judged no; the cut reading (Mel Brooks's sentence first) names David Lynch, judged yes
    assert (hop1["answer"], hop1["support"], hop1["unsupported"], hop1["cut_read"]) == ("David Lynch", 1.0, "Mel Brooks", "David Lynch")
    assert [h["question"] for h in out["hops"]] == ["Who directed Ronnie Rocket?", "Where was David Lynch born?"] and out["answer"] == "Missoula"
    director = [p.rsplit("Documents:\n", 1)[1] for p in llm.calls if p.endswith("Question: Who directed Ronnie Rocket?")]
    assert len(director) == 2 and director[1].startswith("[1] Mel Brooks: Mel Brooks was born in Brooklyn.\n[2] Ronnie Rocket: ")
    judged = [c.rsplit("Question: ", 1)[1] for c in llm.judge_calls if "Proposed answer:" in c and "Steps:" not in c]
    assert judged[:2] == ["Who directed Ronnie Rocket?\nProposed answer: Mel Brooks\nDo the documents state this answer?",
                          "Who directed Ronnie Rocket?\nProposed answer: David Lynch\nDo the documents state this answer?"]
    hop2 = out["hops"][1]  # one page: the cut reading names Missoula again, so it is not judged a second time
    assert (hop2["answer"], hop2["cut_read"]) == ("Missoula", "Missoula") and "unsupported" not in hop2 and len(judged) == 3
    assert "'Who directed Ronnie Rocket?' read again from its pages cut short: 'David Lynch' is better supported than 'Mel Brooks'" in out["notes"]
    assert "; read again cut short: 'David Lynch' taken for 'Mel Brooks'; its pages state it: p = 1.00" in describe_step("answer_hop", {"hops": [hop1]}, {})
    # the cut reading judged no better: the hop keeps its answer
    kept, _ = cut_run({"Where was Mel Brooks born? = Brooklyn"})
    assert (kept["hops"][0]["answer"], kept["hops"][0]["cut_read"], kept["hops"][0]["support"]) == ("Mel Brooks", "David Lynch", 0.0)
    assert "unsupported" not in kept["hops"][0] and kept["hops"][1]["question"] == "Where was Mel Brooks born?"
    assert "; read again cut short: 'David Lynch' not taken;" in describe_step("answer_hop", {"hops": kept["hops"][:1]}, {})
    # hop_sentences=1 keeps one sentence, Ronnie Rocket's (the first of sentences the scorer ties): it reads Mel Brooks again
    alone, llm = cut_run({"Where was Mel Brooks born? = Brooklyn"}, hop_sentences=1)
    assert alone["hops"][0]["cut_read"] == "Mel Brooks" and alone["hops"][0]["answer"] == "Mel Brooks"
    # a cut reading of the wrong kind (a bare date for a who) is neither judged nor taken, whatever the judge would say
    dated, llm = cut_run({"Who directed Ronnie Rocket? = 21 June 1770"}, cut_answer="21 June 1770")
    assert (dated["hops"][0]["answer"], dated["hops"][0]["cut_read"]) == ("Mel Brooks", "21 June 1770") and "unsupported" not in dated["hops"][0]
    assert not [c for c in llm.judge_calls if "Proposed answer: 21 June 1770" in c]
    # a graph without the judge (Self-Ask) reads nothing again
    plain, llm = cut_run({"Who directed Ronnie Rocket? = David Lynch"}, variant="self_ask")
    assert plain["hops"][0]["answer"] == "Mel Brooks" and "cut_read" not in plain["hops"][0] and not llm.judge_calls


def test_cut_uncertain_reads_again_cut_short_only_the_hops_the_judge_doubts_or_whose_answers_split():
    from sunar.hop_support import escalating

    verdicts = {"Who directed Ronnie Rocket? = David Lynch", "Where was David Lynch born? = Missoula"}
    out, llm = cut_run(verdicts, hop_support="cut_uncertain")
    hop1, hop2 = out["hops"]  # Mel Brooks doubted: read again cut short, David Lynch taken; Missoula believed: not read again
    assert (hop1["answer"], hop1["unsupported"], hop1["cut_read"]) == ("David Lynch", "Mel Brooks", "David Lynch") and out["answer"] == "Missoula"
    assert hop2["answer"] == "Missoula" and "cut_read" not in hop2
    assert len([p for p in llm.calls if p.endswith("Question: Where was David Lynch born?")]) == 1  # one reading, where cut reads it twice
    believed, _ = cut_run({"Who directed Ronnie Rocket? = Mel Brooks"}, hop_support="cut_uncertain")
    assert believed["hops"][0]["answer"] == "Mel Brooks" and "cut_read" not in believed["hops"][0]
    every, _ = cut_run({"Who directed Ronnie Rocket? = Mel Brooks"})  # cut reads a believed hop again all the same
    assert every["hops"][0]["cut_read"] == "David Lynch" and every["hops"][0]["answer"] == "Mel Brooks"
    # answers that split count, as for escalate_uncertain; a split into "unknown" does not
    split = {"answer": "Mel Brooks", "candidates": [{"answer": "Mel Brooks", "share": 0.75}, {"answer": "David Lynch", "share": 0.25}]}
    cfg = Configuration(hop_support="cut_uncertain")
    assert escalating(split, 0.9, cfg) and not escalating({**split, "candidates": split["candidates"][:1]}, 0.9, cfg)
    assert not escalating({**split, "candidates": [split["candidates"][0], {"answer": "unknown", "share": 0.25}]}, 0.9, cfg)


def test_a_doubted_hop_takes_the_span_of_its_pages_the_judge_finds_better_supported():
    out, llm = cut_run({"Who directed Ronnie Rocket? = David Lynch", "Where was David Lynch born? = Missoula"}, hop_support="spans")
    hop1 = out["hops"][0]  # Mel Brooks read, judged no; of the pages' spans David Lynch is judged yes
    assert (hop1["answer"], hop1["support"], hop1["unsupported"], hop1["spans_judged"]) == ("David Lynch", 1.0, "Mel Brooks", 3)
    judged = [c.rsplit("Proposed answer: ", 1)[1].split("\n")[0] for c in llm.judge_calls if "Question: Who directed Ronnie Rocket?" in c]
    assert judged == ["Mel Brooks", "David Lynch", "Mel Brooks", "Brooklyn"]  # the hop's answer, then each span but the question's own name
    assert [h["question"] for h in out["hops"]] == ["Who directed Ronnie Rocket?", "Where was David Lynch born?"] and out["answer"] == "Missoula"
    assert "spans_judged" not in out["hops"][1]  # believed: its spans are not judged
    assert out["reasoning_path"][0]["spans_judged"] == 3 and "spans_judged" not in out["reasoning_path"][1]
    assert "3 spans of the pages read for 'Who directed Ronnie Rocket?' judged as its answer: 'David Lynch' is better supported than 'Mel Brooks'" in out["notes"]
    assert "; 3 spans of its pages judged: 'David Lynch' taken for 'Mel Brooks'; its pages state it: p = 1.00" in describe_step("answer_hop", {"hops": [hop1]}, {})
    # no span judged better: the hop keeps its answer
    kept, _ = cut_run({"Where was Mel Brooks born? = Brooklyn"}, hop_support="spans")
    assert (kept["hops"][0]["answer"], kept["hops"][0]["spans_judged"]) == ("Mel Brooks", 3) and "unsupported" not in kept["hops"][0]
    assert "; 3 spans of its pages judged: none taken;" in describe_step("answer_hop", {"hops": kept["hops"][:1]}, {})
    # a graph without the judge (Self-Ask) judges nothing
    plain, llm = cut_run({"Who directed Ronnie Rocket? = David Lynch"}, variant="self_ask", hop_support="spans")
    assert plain["hops"][0]["answer"] == "Mel Brooks" and "spans_judged" not in plain["hops"][0] and not llm.judge_calls


def test_spans_first_judges_the_spans_of_a_chains_first_hop_only():
    first, _ = cut_run({"Who directed Ronnie Rocket? = David Lynch", "Where was David Lynch born? = Missoula"}, hop_support="spans_first")
    assert (first["hops"][0]["answer"], first["hops"][0]["unsupported"], first["hops"][0]["spans_judged"]) == ("David Lynch", "Mel Brooks", 3)
    # the first hop believed, the second doubted: spans judges the second's spans, spans_first does not
    later, _ = cut_run({"Who directed Ronnie Rocket? = Mel Brooks"}, hop_support="spans")
    assert [h["question"] for h in later["hops"]] == ["Who directed Ronnie Rocket?", "Where was Mel Brooks born?"]
    assert "spans_judged" not in later["hops"][0] and later["hops"][1]["spans_judged"] >= 1
    kept, llm = cut_run({"Who directed Ronnie Rocket? = Mel Brooks"}, hop_support="spans_first")
    assert [h["answer"] for h in kept["hops"]] == ["Mel Brooks", "Brooklyn"] and kept["hops"][1]["support"] == 0.0
    assert not any("spans_judged" in h for h in kept["hops"])
    assert len([c for c in llm.judge_calls if "Question: Where was Mel Brooks born?" in c]) == 1  # its own answer alone


def test_the_spans_a_doubted_hop_judges_could_answer_it():
    from sunar.hop_support import MOST_JUDGED, answer_spans, escalating, judge_spans

    pages = [{"title": "Limehouse Blues", "text": "Limehouse Blues was written in 1922 by Philip Braham, with words by Douglas Furber."}]
    # not the question's own name, no bare date for a who, each span once
    assert answer_spans("Who composed Limehouse Blues?", pages) == ["Philip Braham", "Douglas Furber"]
    assert answer_spans("When was Limehouse Blues written?", pages) == ["Philip Braham", "Douglas Furber", "1922"]
    many = [{"title": "Names", "text": " ".join(f"Name{chr(65 + i // 26)}{chr(65 + i % 26)} met." for i in range(60))}]
    assert len(answer_spans("Who met?", many)) == MOST_JUDGED
    split = {"answer": "Mel Brooks", "candidates": [{"answer": "Mel Brooks", "share": 0.67}, {"answer": "David Lynch", "share": 0.33}]}
    assert escalating(split, 0.9, Configuration(hop_support="spans"))  # split samples count, as for careful

    class Judge:
        def __init__(self, yes):
            self.yes = yes

        def judge(self, messages, labels):
            said = str(messages[-1].content).rsplit("Proposed answer: ", 1)[1].split("\n")[0]
            return {"yes": 0.0, "no": -9.0} if said in self.yes else {"yes": -9.0, "no": 0.0}

    hop = {"question": "Who composed Limehouse Blues?", "answer": "Django Reinhardt", "support": 0.08}
    assert judge_spans(hop, pages, Judge({"Philip Braham"}))["answer"] == "Philip Braham"
    # the best-rated span holds the hop's own answer: nothing else is taken
    same = {**hop, "answer": "Philip Braham and Douglas Furber"}
    assert judge_spans(same, pages, Judge({"Philip Braham", "Douglas Furber"})) == {**same, "spans_judged": 2}
    # no span on the pages: the hop stays as it was
    assert judge_spans(hop, [{"title": "Limehouse Blues", "text": "a song."}], Judge(set())) == {**hop, "spans_judged": 0}
