"""The oracle-plan benchmark (benchmarks/bench_oracle_plan.py): the data's decomposition as a plan, and both
graphs' answers with it summed and compared."""

from benchmarks.bench_oracle_plan import VARIANTS, asked, gold_plan, summary


def test_the_datas_steps_become_a_plan_with_references_to_earlier_answers():
    musique = {"decomposition": [{"question": "Now You See Him, Now You Don't >> cast member"}, {"question": "#1 is a character in which film?"}]}
    assert gold_plan(musique) == ["Who is the cast member of Now You See Him, Now You Don't?", "#1 is a character in which film?"]
    wiki = {"evidence_triples": [["Ronnie Rocket", "director", "David Lynch"], ["David Lynch", "place of birth", "Missoula"]]}
    assert gold_plan(wiki) == ["Who is the director of Ronnie Rocket?", "Where was #1 born?"]
    assert asked("country of citizenship", "#1") == "What is the nationality of #1?"
    assert asked("record label", " Thriller ") == "What is the record label of Thriller?"  # any other relation


def test_the_summary_counts_each_graph_by_dataset_and_compares_them_question_by_question():
    def rec(qid, variant, dataset, right, exact, seconds):
        return {"id": qid, "variant": variant, "dataset": dataset, "metrics": {"cover_em": float(right), "em": float(exact)}, "time": {"total": seconds}}

    sa, s = VARIANTS
    records = [rec("a", sa, "musique", 0, 0, 10.0), rec("a", s, "musique", 1, 1, 30.0),
               rec("b", sa, "2wiki", 1, 0, 10.0), rec("b", s, "2wiki", 1, 1, 10.0),
               {"id": "c", "variant": s, "error": "model down"}]  # an error is left out
    got = summary(records)
    assert got["questions"] == 2 and got["S"]["cover-EM"] == {"all": 2.0, "musique": 1.0, "2wiki": 1.0}
    assert got["Self-Ask"]["EM"]["all"] == 0.0 and got["S against Self-Ask, EM"]["wins"] == 2
    assert got["S against Self-Ask, cover-EM"]["wins"] == 1 and got["time ratio"] == 2.0


def test_the_table_sets_both_graphs_own_answers_beside_their_answers_with_the_datas_plan(tmp_path):
    import json

    from benchmarks.results_stored import oracle_plan_table

    sa, s = VARIANTS
    records = [{"id": q, "variant": v, "dataset": "2wiki", "metrics": {"cover_em": float(right), "em": float(right)}, "time": {"total": t}}
               for q, v, right, t in (("a", sa, 1, 10.0), ("a", s, 1, 20.0), ("b", sa, 0, 10.0), ("b", s, 1, 20.0))]
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"questions": ["a", "b"], "summary": summary(records)}))

    def own(right):  # each graph's own records, one question more than the benchmark asked
        return [{"id": q, "metrics": {"cover_em": float(x), "em": 0.0}} for q, x in zip(("a", "b", "z"), right, strict=True)]

    lines = oracle_plan_table(path, {"Self-Ask": own((0, 0, 1)), "S": own((1, 0, 1))}).splitlines()
    assert lines[0] == "| 2 questions | Self-Ask | S | S right / wrong where Self-Ask was not (sign test p) |"
    assert lines[2] == "| their own decomposition (the headline's answers): cover-EM | 0 | 1 | 1 / 0 (p = 1.00) |"
    assert lines[4] == "| the data's decomposition: cover-EM | 1 | 2 | 1 / 0 (p = 1.00) |"
    assert lines[-1] == "| the data's decomposition: recorded s / question | 10.0 | 20.0 | 2.0x |"
