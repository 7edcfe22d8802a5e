"""The oracle-bridge benchmark (benchmarks/bench_oracle_bridge.py): the data's first step put in place of a
first hop S marks, and what S then answered, against S."""

from benchmarks.bench_oracle_bridge import ORACLE, Oracle, rows_of, summary

GOLD = {"q1": "David Lynch", "q2": "Mercia"}
IDS = {"Where was the director of film Ronnie Rocket born?": "q1", "When was Lady Godiva's birthplace abolished?": "q2"}


def test_the_oracle_puts_the_questions_first_step_in_a_marked_hops_place_unless_the_hop_agrees():
    oracle = Oracle(GOLD, IDS)
    seen = []

    class Graph:
        def invoke(self, given, config=None):
            seen.append(oracle.current)
            return oracle.judge_spans({"question": "Who directed Ronnie Rocket?", "answer": "Mel Brooks", "support": 0.1}, [], None)

    hop = oracle.watching(Graph()).invoke({"question": "Where was the director of film Ronnie Rocket born?"}, {})
    assert seen == ["q1"] and (hop["answer"], hop["unsupported"], hop["support"]) == ("David Lynch", "Mel Brooks", 1.0)
    agreed = {"question": "Who directed Ronnie Rocket?", "answer": "Lynch", "support": 0.3}
    assert oracle.judge_spans(agreed, [], None) == agreed  # the hop already holds the bridge: left as it was


def record(qid, variant, answer, hops, right):
    return {"id": qid, "variant": variant, "question": next(q for q, i in IDS.items() if i == qid), "gold": ["x"], "answer": answer,
            "reasoning_path": hops, "metrics": {"cover_em": float(right), "em": float(right)}}


def pairs():
    """S and the oracle on two questions: on q1 the oracle's bridge led to the right answer; on q2 its chain ended on it."""
    return [
        record("q1", "sunar", "Brooklyn", [{"answer": "Mel Brooks"}, {"answer": "Brooklyn"}], False),
        record("q1", ORACLE, "Missoula", [{"answer": "David Lynch", "unsupported": "Mel Brooks"}, {"answer": "Missoula"}], True),
        record("q2", "sunar", "1817", [{"answer": "1817"}], False),
        record("q2", ORACLE, "Mercia", [{"answer": "Mercia", "unsupported": "1817"}], False),  # one hop: ended on the bridge
    ]


def test_rows_pair_s_with_the_oracle_and_the_summary_counts_where_the_bridge_went():
    rows = rows_of(pairs(), GOLD)
    assert [(r["id"], r["oracle acted"], r["oracle hops"], r["first step"]) for r in rows] == [("q1", True, 2, "David Lynch"), ("q2", True, 1, "Mercia")]
    got = summary(rows)
    assert got["first bridges put in place"] == 2 and (got["cover-EM"]["S"], got["cover-EM"]["oracle"], got["cover-EM"]["wins"]) == (0, 1, 1)
    assert got["where the oracle acted"] == {"ended right": 1, "the chain asked on from the bridge": 1, "of those, ended right": 1,
                                             "the chain ended after the first hop": 1}


def test_the_table_gives_both_scores_and_where_the_bridges_went(tmp_path):
    import json

    from benchmarks.results_stored import oracle_bridge_table

    path = tmp_path / "results.json"
    path.write_text(json.dumps({"summary": summary(rows_of(pairs(), GOLD))}))
    lines = oracle_bridge_table(path).splitlines()
    assert lines[2] == "| cover-EM | 0 / 1 | 1 / 0 (p = 1.00) |"
    assert lines[-2:] == ["| of those, the chain asked on from the bridge (ended right) | 1 (1) | - |", "| of those, the chain ended after its first hop | 1 | - |"]
