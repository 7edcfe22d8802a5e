"""The span-judge benchmark (benchmarks/bench_span_judge.py): a doubted first hop's pages' spans, each judged
as its answer, and the best-rated taken where it beats the hop's own answer."""

from benchmarks.bench_span_judge import MARGINS, chosen, flagged, rated_spans, summary
from sunar.configuration import Configuration


class Judge:
    """Says yes (with ``p``) to the answers of ``yes``, no to the others."""

    def __init__(self, yes):
        self.yes, self.asked = yes, []

    def judge(self, messages, labels):
        said = str(messages[-1].content).rsplit("Proposed answer: ", 1)[1].split("\n")[0]
        self.asked.append(said)
        return {"yes": 0.0, "no": -1.0} if said in self.yes else {"yes": -2.0, "no": 0.0}


PAGES = [{"title": "Limehouse Blues", "text": "Limehouse Blues was written by Philip Braham and recorded by Django Reinhardt."},
         {"title": "Django Reinhardt", "text": "Django Reinhardt was a guitarist."}]
HOP = {"question": "Who composed Limehouse Blues?", "answer": "Django Reinhardt", "support": 0.08}


def test_a_hop_is_flagged_by_a_doubting_judge_or_split_samples():
    assert flagged(HOP) and not flagged({**HOP, "support": 0.9})
    assert flagged({**HOP, "support": 0.9, "candidates": [{"answer": "Django Reinhardt"}, {"answer": "Philip Braham"}]})
    assert not flagged({**HOP, "support": 0.9, "candidates": [{"answer": "Django Reinhardt"}, {"answer": "unknown"}]})


def test_the_spans_of_the_pages_the_hop_read_are_rated_best_first():
    judge = Judge({"Philip Braham"})
    row = rated_spans(HOP, PAGES, judge, Configuration(focus_pages=True))
    assert row["pages"] == ["Limehouse Blues"]  # focus_pages: the page the sub-question names
    assert judge.asked == ["Philip Braham", "Django Reinhardt"]  # not the question's own name
    assert [s for s, _ in row["spans"]] == ["Philip Braham", "Django Reinhardt"] and row["spans"][0][1] > 0.7
    unfocused = rated_spans(HOP, PAGES, Judge(set()), Configuration(focus_pages=False))
    assert unfocused["pages"] == ["Limehouse Blues", "Django Reinhardt"]


def test_the_best_span_is_taken_when_it_beats_the_hops_answer_by_the_margin_and_the_summary_counts_it():
    row = {**rated_spans(HOP, PAGES, Judge({"Philip Braham"}), Configuration(focus_pages=True)), "gold": "Philip Braham"}
    assert chosen(row, 0.0) == "Philip Braham" and chosen(row, 0.99) == "Django Reinhardt"
    assert chosen({**row, "spans": []}, 0.0) == "Django Reinhardt"
    same = {**row, "answer": "Philip Braham and Douglas Furber"}  # the best span is a piece of the answer: kept
    assert chosen(same, 0.0) == "Philip Braham and Douglas Furber"
    right = {**row, "answer": "Philip Braham", "support": 0.9, "flagged": False}
    got = summary([row, right])
    assert (got["hops"], got["flagged"], got["the first step among the spans"], got["the first step the best-judged span"]) == (2, 1, 2, 2)
    first = got[f"flagged hops, margin {MARGINS[0]}"]
    assert (first["right before"], first["right after"], first["wins"], first["losses"]) == (0.0, 1.0, 1, 0)
    assert got[f"all hops read, margin {MARGINS[0]}"]["right after"] == 2.0
