"""Citations a user can check: the reply cites first the pages its reasoning used (each hop's page
and the final step's), marked as such, then the rest of the evidence; Open WebUI's sources follow
the same order and marking (sunar.citations, sunar.nodes.respond, sunar.server.openai_runs)."""

from fakes import MemoryIndex, TableScorer, docs, judging, resources, scripted_llm, self_ask_script, whole_state
from sunar.citations import cited, holds, hop_pages, used_pages, used_words
from sunar.graph import build_graph
from sunar.result import result_record
from sunar.server.openai_runs import sources_of

QUESTION = "Where was the director of Ronnie Rocket born?"
DIRECTOR, BIRTHPLACE = "Who directed Ronnie Rocket?", "Where was David Lynch born?"
STEPS = [f"Follow up: {DIRECTOR}", f"Follow up: {BIRTHPLACE}", "So the final answer is: Missoula"]
# two famous directors the scorer ranks above every page the reasoning reads
CORPUS = docs(
    ("rr", "Ronnie Rocket", "Ronnie Rocket is an unfinished film by David Lynch, with a part for Mel Brooks."),
    ("dl", "David Lynch", "David Lynch was born in Missoula, Montana, on January 20, 1946."),
    ("mb", "Mel Brooks", "Mel Brooks was born in Brooklyn."),
    ("fc", "Francis Ford Coppola", "Francis Ford Coppola is an American film director."),
    ("ah", "Alfred Hitchcock", "Alfred Hitchcock was an English film director."),
)
RANKINGS = {DIRECTOR: [("fc", 3.0), ("ah", 2.9), ("rr", 2.8)], BIRTHPLACE: [("fc", 3.0), ("ah", 2.9), ("dl", 2.8)]}
SCORES = {"fc": 0.95, "ah": 0.93, "rr": 0.9, "dl": 0.8, "mb": 0.7}


def run(variant="sunar", birthplace="Missoula", final="Missoula", **config):
    """The graph on the question, its hops answered "David Lynch" and ``birthplace``, MER's answer ``final``."""
    steps = [*STEPS[:2], f"So the final answer is: {final}"]
    llm = scripted_llm(self_ask_script(steps), judging({DIRECTOR: "David Lynch", BIRTHPLACE: birthplace}, [final], {final}))
    res = resources(llm, TableScorer(SCORES), MemoryIndex(CORPUS, RANKINGS))
    cfg = {"resources": res, "batch_size": 3, "budget": 3, "samples": 2, "evidence": 4, "calibration": "off", **config}
    return whole_state(build_graph(variant), {"question": QUESTION}, {"configurable": cfg})


def evidence_lines(out):
    return out["messages"][-1].content.split("Evidence:\n", 1)[1].splitlines()


def page(i, title, text="", score=0.0):
    return {"id": i, "title": title, "text": text, "score": score}


def test_the_reply_cites_the_hops_pages_first_and_marked_not_the_top_scored_directors():
    out = run()
    assert out["answer"] == "Missoula"
    assert [e["id"] for e in out["evidence"]] == ["fc", "ah", "rr", "dl"]  # the scorer's order: the directors first
    assert evidence_lines(out) == [
        "[1] Ronnie Rocket (rr) — used by step 1",
        "[2] David Lynch (dl) — used by step 2 and the final answer",
        "[3] Francis Ford Coppola (fc)",
        "[4] Alfred Hitchcock (ah)",
    ]
    assert [(c["id"], c["used"], c["steps"], c["final"]) for c in out["cited"]] == [
        ("rr", True, [1], False), ("dl", True, [2], True), ("fc", False, [], False), ("ah", False, [], False),
    ]
    # each page once, with the final evidence's record (its score against the question)
    assert [c["score"] for c in out["cited"]] == [0.9, 0.8, 0.95, 0.93] and out["cited"][0]["text"] == CORPUS["rr"].text
    # ``sunar ask --json`` tells the same, without the texts
    assert [(c["id"], c["used"], c["steps"], c["final"]) for c in result_record(out, "sunar")["cited"]][:2] == [("rr", True, [1], False), ("dl", True, [2], True)]
    assert out["evidence"] and out["reasoning_path"] == [{"question": DIRECTOR, "answer": "David Lynch"}, {"question": BIRTHPLACE, "answer": "Missoula"}]


def test_a_hops_page_the_final_evidence_left_out_is_cited_all_the_same():
    out = run(evidence=3)  # MER reads the top 3 against the question: the David Lynch page is not among them
    assert [e["id"] for e in out["evidence"]] == ["fc", "ah", "rr"]
    assert [(c["id"], c["steps"], c["final"], c["score"]) for c in out["cited"][:2]] == [("rr", [1], False, 0.9), ("dl", [2], False, 0.8)]
    assert [c["id"] for c in out["cited"]] == ["rr", "dl", "fc", "ah"]


def test_open_webui_sources_follow_the_replys_order_and_marking():
    out = run()
    sources = sources_of(out)
    assert [s["metadata"][0]["source"] for s in sources] == [c["id"] for c in out["cited"]] == ["rr", "dl", "fc", "ah"]
    assert [s["metadata"][0]["name"] for s in sources] == [
        "Ronnie Rocket — used by step 1", "David Lynch — used by step 2 and the final answer", "Francis Ford Coppola", "Alfred Hitchcock",
    ]
    assert [s["metadata"][0]["used"] for s in sources] == [True, True, False, False]
    first = sources[0]
    assert first["source"] == {"id": "rr", "name": "Ronnie Rocket — used by step 1"} and first["document"] == [CORPUS["rr"].text]
    assert first["metadata"][0]["score"] == 0.9 and first["distances"] == [0.9]
    # a state without ``cited`` (written before it was) is cited by the same rule
    assert sources_of({k: v for k, v in out.items() if k != "cited"}) == sources


def test_a_hop_that_read_named_pages_cites_those():
    out = run(focus_pages=True)  # each sub-question names a page of its evidence: the hop reads it alone
    assert [h.get("read") for h in out["hops"]] == [["rr"], ["dl"]]
    assert [(c["id"], c["steps"]) for c in out["cited"] if c["used"]] == [("rr", [1]), ("dl", [2])]
    hop = {"question": "Who?", "answer": "Someone", "read": ["b", "c"],
           "evidence": [page("a", "A", "Someone", 0.9), page("b", "B", "", 0.5), page("c", "C", "", 0.4)]}
    assert [p["id"] for p in hop_pages(hop)] == ["b", "c"]  # what it read, even where another page names the answer


def test_an_answer_no_page_holds_cites_the_hops_top_page_and_marks_no_final_page():
    out = run(birthplace="Helena", final="Helena")
    assert out["answer"] == "Helena"
    assert evidence_lines(out)[:3] == [
        "[1] Ronnie Rocket (rr) — used by step 1",
        "[2] Francis Ford Coppola (fc) — used by step 2",  # the hop's top page: no page says Helena
        "[3] Alfred Hitchcock (ah)",
    ]
    assert not any(c["final"] for c in out["cited"])


def test_self_ask_without_mer_cites_its_hops_and_its_answers_page():
    out = run(variant="self_ask")
    assert out["answer"] == "Missoula"
    assert evidence_lines(out)[:2] == ["[1] Ronnie Rocket (rr) — used by step 1", "[2] David Lynch (dl) — used by step 2 and the final answer"]
    assert [s["metadata"][0]["used"] for s in sources_of(out)] == [True, True, False, False]


def test_the_rule_on_hand_made_states():
    rr, dl, mt = page("rr", "Ronnie Rocket", "a film by David Lynch", 0.5), page("dl", "David Lynch", "born in Missoula, Montana", 0.4), page("mt", "Montana", "a state", 0.9)
    hops = [{"question": "Who?", "answer": "David Lynch", "evidence": [rr, dl]}, {"question": "Where?", "answer": "Missoula", "evidence": [mt, dl]}]
    # hop 1: the top-scored page holding the answer (the title counts); hop 2's David Lynch page holds the final answer too
    assert [(p["id"], steps, final) for p, steps, final in used_pages({"hops": hops, "evidence": [mt, rr, dl], "answer": "Missoula, Montana"})] == [
        ("rr", [1], False), ("dl", [2], True),
    ]
    # a page only the final step used; a page two steps used; a hop that found nothing cites nothing
    twice = [hops[0], {"question": "Who else?", "answer": "David Lynch", "evidence": [mt, rr, dl]}]
    assert [(p["id"], s, f) for p, s, f in used_pages({"hops": twice, "evidence": [mt], "answer": "Montana"})] == [("rr", [1, 2], False), ("mt", [], True)]
    assert used_pages({"hops": [{"question": "Who?", "answer": "unknown", "evidence": [rr]}], "evidence": [rr], "answer": "unknown"}) == []
    # no hops (the RAG baseline): the answer's page alone; no page twice, the rest in the evidence's order
    state = {"evidence": [mt, rr, dl], "answer": "Missoula"}
    assert [(c["id"], c["used"]) for c in cited(state)] == [("dl", True), ("mt", False), ("rr", False)]
    assert holds(dl, "missoula") and not holds(dl, "Miss") and not holds(rr, "unknown")
    assert used_words({"steps": [1, 2, 3], "final": True}) == "used by steps 1, 2 and 3 and the final answer"
    assert used_words({"steps": [], "final": False}) == ""
