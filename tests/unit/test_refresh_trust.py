"""Refreshing committed predictions' trust: today's matching calibration applied to the stored
signals, null where none matches, every other field kept."""

import gzip
import json

from benchmarks.refresh_trust import refresh
from sunar import trust

SHIPPED = trust.read(trust.SHIPPED / "self_ask-embedded-qwen2.5-1.5b.json")
SIGNALS = {"agreement": 1.0, "semantic_entropy": 0.0, "sets": 1, "chain_agrees": 1.0, "hops": 2}


def record(variant, qid="q1", **fields):
    return {"id": qid, "variant": variant, "question": "Q?", "answer": "A", "signals": SIGNALS, "trust": 0.99, "abstained": True, "metrics": {"em": 1.0}, **fields}


def test_today_s_calibration_or_none_and_nothing_else_changes(tmp_path):
    meta = {"configuration": SHIPPED["configuration"], "corpus": SHIPPED["corpus"]}
    (tmp_path / "run.json").write_text(json.dumps(meta))
    records = [record("self_ask"), record("self_ask+focus_pages=false"), {"id": "q2", "variant": "self_ask", "error": "boom"}, record("self_ask+hop_samples=5")]
    (tmp_path / "predictions.jsonl.gz").write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in records).encode()))

    def no_model():
        raise AssertionError("no calibration here has a probe")

    counts = refresh(tmp_path, no_model)
    after = [json.loads(line) for line in gzip.decompress((tmp_path / "predictions.jsonl.gz").read_bytes()).decode().splitlines()]
    expected = trust.judge(SIGNALS, SHIPPED)
    assert after[0] == {**records[0], "trust": expected["trust"], "abstained": expected["abstained"]} and after[0]["trust"] != 0.99
    assert after[1] == {**records[1], "trust": None, "abstained": False}  # focus_pages=false: fitted with true
    assert after[2] == records[2]
    assert after[3]["trust"] == expected["trust"]  # hop samples: a field Self-Ask never reads
    assert counts == {("self_ask", "calibrated", "changed"): 1, ("self_ask+focus_pages=false", "none matches", "changed"): 1,
                      ("self_ask+hop_samples=5", "calibrated", "changed"): 1}
    assert not (tmp_path / "predictions.jsonl").exists()  # a run that kept only the compressed copy still does


def test_a_run_kept_plain_stays_plain_and_one_without_a_corpus_fingerprint_is_calibrated_all_the_same(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"configuration": SHIPPED["configuration"], "corpus": "corpus.jsonl"}))  # an early run
    (tmp_path / "predictions.jsonl").write_text(json.dumps(record("self_ask")) + "\n")

    def no_model():
        raise AssertionError("nothing here has a probe")

    assert refresh(tmp_path, no_model) == {("self_ask", "calibrated", "changed"): 1}  # keyed to graph, model and settings
    assert json.loads((tmp_path / "predictions.jsonl").read_text())["trust"] == trust.judge(SIGNALS, SHIPPED)["trust"]
    assert not (tmp_path / "predictions.jsonl.gz").exists()
