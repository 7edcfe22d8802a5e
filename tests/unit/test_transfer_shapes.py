"""benchmarks/transfer_shapes.py on made-up answers of two datasets and two shapes: the floors, the
levels a part is answered at, the report left out by dataset and shape, and its table."""

import json

import numpy as np

from benchmarks import transfer_shapes as ts


def answer(i, rng):
    """Odd answers: open chains of musique, 40% right; even ones: comparisons of 2wiki answered by a side, 90% right."""
    comparing = i % 2 == 0
    question = f"Who was born later, Ann Lee{i} or Bo Day{i}?" if comparing else f"Where was the director of film Film{i} born?"
    right = rng.random() < (0.9 if comparing else 0.4)
    support = round(float(0.4 + 0.3 * right + 0.3 * rng.random()), 3)
    return {"id": f"q{i}", "dataset": "2wiki" if comparing else "musique", "variant": "sunar", "question": question,
            "answer": f"Ann Lee{i}" if comparing else "Paris", "metrics": {"cover_em": float(right)},
            "signals": {"chain_support": support, "hop_support": support, "answer_fits": support, "whole_chain": 1.0, "named_pages": 1.0,
                        "hops": 3 if comparing else 2}}


def rows(n=160, seed=0):
    rng = np.random.default_rng(seed)
    return ts.with_floors([answer(i, rng) for i in range(n)])


def test_rows_get_their_shape_and_floor():
    found = rows(4)
    assert [(r["shape"], r["floor"]) for r in found] == [("comparison", 0.5), ("chain", 0.0)] * 2


def test_a_level_answers_at_or_above_its_threshold_and_holds_only_when_it_answers_some_at_most_alpha_wrong():
    p, y = np.array([0.9, 0.8, 0.4]), np.array([1.0, 0.0, 1.0])
    assert ts.answered(p, y, np.full(3, 0.8), 0.3) == {"coverage": 2 / 3, "risk": 0.5, "held": False}
    assert ts.answered(p, y, np.full(3, 0.85), 0.3) == {"coverage": 1 / 3, "risk": 0.0, "held": True}
    assert ts.answered(p, y, np.full(3, np.inf), 0.3) == {"coverage": 0.0, "risk": None, "held": False}


def test_ece_noise_falls_with_more_answers():
    assert ts.ece_noise(np.full(1000, 0.5)) < ts.ece_noise(np.full(10, 0.5))


def test_left_out_by_dataset_and_shape_with_the_floor_closer_to_the_left_out_base_rate(tmp_path):
    candidates = [("chain_support no floor", ("chain_support",), False), ("chain_support floor", ("chain_support",), True)]
    report = ts.transfer(rows(), ["dataset", "shape"], candidates=candidates, minimum=20)
    shapes = report["kinds"]["shape"]
    assert set(shapes) == {"shipped way", "chain_support no floor", "chain_support floor"}
    assert set(shapes["chain_support floor"]) == {"chain", "comparison"}
    # comparisons left out, fitted on chains alone: the floor lifts their probability toward their 90%
    floor, plain = shapes["chain_support floor"]["comparison"], shapes["chain_support no floor"]["comparison"]
    assert floor["mean_probability"] >= 0.5 and floor["mean_probability"] > plain["mean_probability"] + 0.1
    assert floor["ece"] < plain["ece"]
    # a shape left out has no labelled answers of its own: its per-shape level promises nothing, so answers none
    assert floor["per_shape"]["coverage"] == 0.0 and not floor["per_shape"]["held"]
    assert floor["pooled"]["level"] is not None and "error" not in floor
    table = ts.markdown(report)
    assert "### Leave one dataset out" in table and "### Leave one shape out" in table and "| shipped way | comparison |" in table
    out = tmp_path / "r.json"
    out.write_text(json.dumps(report, default=float))
    assert json.loads(out.read_text())["kinds"]["shape"]["chain_support floor"]["chain"]["n"] == 80


def test_a_shipped_file_as_the_product_reads_it_lifts_only_the_two_way_answers(tmp_path, capsys):
    found = rows()
    for r in found:
        r["type"] = "comparison" if r["shape"] == "comparison" else "compositional"
    calibration = {"features": ["chain_support"], "model": {"mean": [0.5], "scale": [0.2], "intercept": -0.5, "coef": [1.0]}, "threshold": 0.7}
    report = ts.as_shipped(found, calibration)
    comparing, chains = report["parts"]["comparison"], report["parts"]["compositional"]
    assert chains["above the floor"] == chains["without the floor"]  # open questions: floor 0, nothing moves
    assert comparing["above the floor"]["mean_probability"] == 0.5 + 0.5 * comparing["without the floor"]["mean_probability"]
    assert comparing["above the floor"]["ece"] < comparing["without the floor"]["ece"]  # 90% right: nearer above the floor
    assert comparing["above the floor"]["coverage"] >= comparing["without the floor"]["coverage"]
    assert report["parts"]["all"]["above the floor"]["n"] == 160 and report["level"] == 0.7
    table = ts.as_shipped_markdown(report)
    assert "| comparison | above the floor | 80 |" in table and table.count("\n| ") == 8


def test_a_collection_is_the_questions_file_a_run_read_and_can_be_left_out(tmp_path, capsys):
    found = rows(120)
    runs = []
    for name, part in (("dev.jsonl", found[:80]), ("dev2.jsonl", found[80:])):
        run = tmp_path / name.removesuffix(".jsonl")
        run.mkdir()
        (run / "run.json").write_text(json.dumps({"questions": {"file": name, "sha256": "x"}}))
        (run / "predictions.jsonl").write_text("".join(json.dumps({k: v for k, v in r.items() if k not in ("shape", "floor")}) + "\n" for r in part))
        runs += ["--run", str(run)]
    out = tmp_path / "c.json"
    assert ts.main([*runs, "--variant", "sunar", "--parts", "collection", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    left_out = report["kinds"]["collection"]["chain_support equal floor"]
    assert {k: v["n"] for k, v in left_out.items()} == {"dev": 80, "dev2": 40}
    assert "### Leave one collection out" in capsys.readouterr().out
    bare = tmp_path / "bare"
    bare.mkdir()
    assert ts.tc.collection(bare) == "(none)"
