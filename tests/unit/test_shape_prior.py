"""The shape prior: how often questions shaped like this one were answered right, from a
calibration's labelled questions, never from a question's own label."""

import json

from fakes import MemoryIndex, TableScorer, docs, resources, scripted_llm, self_ask_script
from sunar import shape_prior, trust
from sunar.cli import main
from sunar.evals import calibration as cal
from sunar.graph import build_graph
from sunar.prompts.demonstrations import shape

# two kinds of question: one the model gets right 9 times in 10, one 1 time in 10; the samples agree on both alike
EASY = "Where was the director of film {} born?"
HARD = "Which team that the brother of {} played for won the cup in the year the bridge opened?"
NAMES = ["Ronnie Rocket", "Dune", "Eraserhead", "Blue Velvet", "Lost Highway", "Twin Peaks", "Inland Empire", "The Straight Story",
         "Mulholland Drive", "Wild at Heart"]


def answers(n=40):
    rows = []
    for i in range(n):
        easy = i % 2 == 0
        question = (EASY if easy else HARD).format(NAMES[i % len(NAMES)] + f" {i}")
        right = float(i % 20 != 0) if easy else float(i % 20 == 1)
        rows.append({"id": f"q{i}", "dataset": "2wiki", "question": question, "metrics": {"cover_em": right},
                     "signals": {"agreement": 1.0, "semantic_entropy": 0.0, "sets": 1, "chain_agrees": 1.0}})
    return rows


def test_a_prior_is_the_similarity_weighted_share_of_right_answers_among_the_most_alike():
    easy, hard = shape(EASY.format("Dune")), shape(HARD.format("Dune"))
    assert easy == shape(EASY.format("Mulholland Drive (2001 film)"))  # names and titles are not the shape
    assert shape_prior.similarity(easy, easy) == 1.0 and shape_prior.similarity(easy, hard) < 0.2
    labelled = [(easy, 1.0), (easy, 1.0), (hard, 0.0), (hard, 0.0)]
    assert shape_prior.prior(easy, labelled, k=2) == 1.0 and shape_prior.prior(hard, labelled, k=2) == 0.0
    assert 0.5 < shape_prior.prior(easy, labelled, k=4) < 1.0  # the unlike ones count, with a small weight
    assert shape_prior.prior(easy, [], k=2) is None


def test_a_fitted_question_never_sees_its_own_label():
    questions = [EASY.format("A"), EASY.format("B"), HARD.format("C")]
    # each easy one is decided by the other easy one, not by itself; the hard one's nearest is the first easy one
    assert shape_prior.leave_one_out(questions, [1.0, 0.0, 1.0], k=1) == [0.0, 1.0, 1.0]


def test_a_calibration_with_the_shape_prior_ranks_the_kinds_of_question_the_other_signals_cannot():
    rows = answers()
    plain = cal.fit_calibration(rows, alpha=0.3)
    shaped = cal.fit_calibration(rows, alpha=0.3, shapes=True)
    assert plain["auroc_held_out"] < 0.6  # every answer's samples agree: nothing to rank by
    assert shaped["features"][-1] == "shape_prior" and shaped["auroc_held_out"] > 0.75
    assert len(shaped["shapes"]) == 40 and shaped["shape_k"] == shape_prior.K
    assert not {"ronnie", "rocket", "dune", "0", "1"} & {w for s in shaped["shapes"] for w in s["shape"]}  # a shape keeps no names or numbers
    # scored on new questions from the kept shapes: the easy kind trusted, the hard kind not
    fresh = [{**r, "id": "new" + r["id"], "question": r["question"].replace(" born", "  born")} for r in answers(20)]
    checked = cal.check_calibration(shaped, fresh)
    assert checked["auroc"] > 0.85
    easy, hard = checked["scores"][0], checked["scores"][1]
    assert easy > 0.6 > 0.4 > hard


def test_the_graph_reads_the_prior_of_its_question_from_the_calibration(tmp_path):
    fitted = cal.fit_calibration(answers(), alpha=0.3, shapes=True)
    path = tmp_path / "cal.json"
    path.write_text(json.dumps({**fitted, "graph": "sunar", "llm": "scripted:scripted", "corpus": {"file": "c", "sha256": "fp"},
                                "configuration": {"llm": "scripted:scripted", "samples": 2}}))

    def ask(question):
        llm = scripted_llm(self_ask_script(["So the final answer is: Helena"]), lambda q, i: "Helena")
        index = MemoryIndex(docs(("d1", "T", "x")), default_ranking=[("d1", 1.0)], manifest={"corpus_fingerprint": "fp"})
        res = resources(llm, TableScorer({"d1": 1.0}), index)
        return build_graph("sunar").invoke({"question": question}, {"configurable": {"resources": res, "samples": 2, "calibration": str(path)}})

    easy, hard = ask(EASY.format("Ronnie Rocket")), ask(HARD.format("Selena"))
    assert easy["signals"]["shape_prior"] > 0.7 > 0.3 > hard["signals"]["shape_prior"]
    assert easy["trust"] > 0.6 > 0.4 > hard["trust"]
    assert "questions shaped like this one were mostly answered wrong" in hard["why"] and not easy["why"]


def test_sunar_calibrate_keeps_the_shapes_when_asked(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"questions": {"file": "q.jsonl"}, "corpus": {"file": "c.jsonl"},
                                              "configuration": {"llm": "embedded:qwen2.5-1.5b"}, "variants": ["sunar"]}))
    (run / "predictions.jsonl").write_text("".join(json.dumps({**r, "variant": "sunar"}) + "\n" for r in answers()))
    assert main(["calibrate", "--run", str(run), "--out", str(tmp_path / "plain.json")]) == 0
    assert main(["calibrate", "--run", str(run), "--shape-prior", "--out", str(tmp_path / "shaped.json")]) == 0
    plain, shaped = (trust.read(tmp_path / f"{name}.json") for name in ("plain", "shaped"))
    assert "shapes" not in plain and "shape_prior" not in plain["features"]
    assert shaped["features"][-1] == "shape_prior" and len(shaped["shapes"]) == 40


def test_refreshing_committed_predictions_reads_the_prior_of_each_question():
    from benchmarks.refresh_trust import verdict

    fitted = cal.fit_calibration(answers(), alpha=0.3, shapes=True)
    signals = {"agreement": 1.0, "semantic_entropy": 0.0, "sets": 1, "chain_agrees": 1.0}

    def no_model():
        raise AssertionError("no probe here")

    easy = verdict({"question": EASY.format("Dune"), "answer": "A", "signals": signals}, fitted, no_model)
    hard = verdict({"question": HARD.format("Dune"), "answer": "A", "signals": signals}, fitted, no_model)
    assert easy["trust"] > 0.6 > 0.4 > hard["trust"]
