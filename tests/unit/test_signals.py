"""The signals of trust kept beside each answer, on hand-made states."""

import math

import pytest

from sunar.signals import (
    agrees,
    chain_broken,
    fits_kind,
    from_trace,
    hop_agreement,
    semantic_entropy,
    signals,
    whole_chain,
)


def test_semantic_entropy_of_the_sets():
    assert semantic_entropy([[0, 1, 2, 3]]) == 0.0
    assert semantic_entropy([[0, 1], [2, 3]]) == pytest.approx(math.log(2))
    assert semantic_entropy([[0], [1], [2], [3]]) == pytest.approx(math.log(4))
    assert semantic_entropy([]) == 0.0


def test_agrees_is_containment_of_normalised_words_either_way():
    assert agrees("Missoula, Montana", "Missoula") and agrees("Missoula", "born in Missoula, Montana")
    assert not agrees("Helena", "Missoula") and not agrees("", "Missoula") and not agrees("Miss", "Missoula")


@pytest.mark.parametrize(("question", "answer", "fits"), [
    ("Where did William Thomas Beckford die?", "21 June 1770", False),  # a date for a place
    ("Where was he born?", "June 21, 1770", False), ("Who founded it?", "in 1770", False), ("whom did she marry?", "1801.", False),
    ("Where was he born?", "Bath", True), ("When did he die?", "21 June 1770", True),  # a date for a when
    ("Where is it?", "Route 66", True), ("Who wrote it?", "Louis XIV", True), ("Who sang it?", "Maroon 5", True),
    ("Which year did it open?", "1770", True), ("Where is the White House?", "1600 Pennsylvania Avenue", True),
])
def test_a_bare_date_answers_no_where_or_who_question(question, answer, fits):
    assert fits_kind(question, answer) is fits


def test_the_weakest_hop_decides_the_chain():
    strong = {"batches": [{"answers": ["a", "a", "a"], "sets": [[0, 1, 2]]}]}
    weak = {"batches": [{"answers": ["a", "b", "c"], "sets": [[0], [1], [2]]}, {"answers": ["x", "x", "y"], "sets": [[0, 1], [2]]}]}
    assert hop_agreement([strong, weak]) == pytest.approx(2 / 3)  # the weak hop's best batch
    assert hop_agreement([{"batches": [{"ids": ["d1"], "scores": [1.0]}]}]) is None  # no ASU


def test_a_chain_that_stalls_is_broken():
    moving = [{"question": "Who directed Ronnie Rocket?", "answer": "David Lynch"}, {"question": "Where was David Lynch born?", "answer": "Missoula"}]
    assert chain_broken(moving) == 0.0 and chain_broken([]) is None
    assert chain_broken([moving[0], {"question": "Who is David Lynch?", "answer": "David Lynch"}]) == 1.0
    described = [moving[0], {"question": "Who is David Lynch?", "answer": "David Lynch, the director"}]
    assert chain_broken(described) == 0.0  # a new content word ("director") is an answer, however weak
    repeat = [{"question": "Which county borders Bancroft's?", "answer": "Logan County"}, {"question": "Which county borders it?", "answer": "Logan County"}]
    assert chain_broken(repeat) == 1.0


def test_a_chain_of_one_hop_that_asked_part_of_the_question_is_not_whole():
    question = "Who is the spouse of the director of film Barefoot in the Park?"
    bridge = {"question": "Who directed Barefoot in the Park?", "answer": "Gene Saks"}
    assert whole_chain(question, [bridge]) == 0.0  # it ended on the bridge
    assert whole_chain(question, [bridge, {"question": "Who is the spouse of Gene Saks?", "answer": "Bea Arthur"}]) == 1.0
    assert whole_chain(question, [{"question": "Who is the spouse of the director of film Barefoot In The Park?", "answer": "Bea Arthur"}]) == 1.0
    assert whole_chain(question, []) is None


def test_signals_a_stored_answer_predates_are_read_from_its_trace():
    record = {"question": "Who is the spouse of the director of film Barefoot in the Park?", "signals": {"agreement": 1.0},
              "reasoning_path": [{"question": "Who directed Barefoot in the Park?", "answer": "Gene Saks"}]}
    assert from_trace(record) == {"agreement": 1.0, "whole_chain": 0.0}
    assert from_trace({**record, "signals": {"whole_chain": 1.0}}) == {"whole_chain": 1.0}  # recorded: kept
    assert from_trace({"signals": {"agreement": 0.5}}) == {"agreement": 0.5}  # no trace (a graph without a chain)


def test_signals_of_a_final_state():
    state = {
        "answer": "Missoula, Montana",
        "draft_answer": "Helena",
        "hops": [{"question": "q1", "answer": "David Lynch", "batches": []}, {"question": "q2", "answer": "Missoula", "batches": []}],
        "evidence": [{"id": "d1", "text": "Lynch was born in Missoula, Montana.", "score": 0.9}, {"id": "d2", "text": "x", "score": 0.5}],
        "notes": ["MER gave no usable final answer; asked again for the short answer"],
    }
    got = signals(state, ["Missoula", "Helena", "Missoula"], [[0, 1, 3], [2]], 2 / 3)
    assert got["agreement"] == 2 / 3 and got["sets"] == 2 and got["semantic_entropy"] == pytest.approx(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)), abs=1e-6)
    assert got["evidence_top"] == 0.9 and got["evidence_margin"] == pytest.approx(0.4)
    assert got["answer_in_evidence"] == 1.0 and got["chain_agrees"] == 0.0  # Self-Ask's own answer was Helena
    assert got["fallback"] == 1.0 and got["unknown"] == 0.0 and got["hops"] == 2 and got["hop_agreement"] is None
    assert got["chain_broken"] == 0.0 and got["whole_chain"] == 1.0  # two hops
    empty = signals({"answer": "unknown", "hops": [], "evidence": []}, [], [[0]], 0.0)
    assert empty["unknown"] == 1.0 and empty["evidence_top"] is None and empty["chain_agrees"] is None and empty["answer_in_evidence"] == 0.0
    assert empty["whole_chain"] is None
