"""One line per (question, variant): the record of an answer, and the predictions file it goes to.

A record holds the answer, its confidence and signals, the evidence in rank order, what the
question cost (calls, tokens, where the time went) and its metrics; a pair that ended in an error
is recorded with it (:func:`error_record`). ``sunar eval`` appends a record as each pair finishes,
so the file is read leniently (:func:`read_predictions`), repaired before appending
(:func:`end_cleanly`), and read back as the latest record per pair (:func:`latest`).
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import shutil
from collections.abc import Sequence
from itertools import zip_longest
from pathlib import Path
from typing import Any

from sunar.evals.data import Question
from sunar.evals.metrics import answer_metrics, retrieval_metrics
from sunar.result import result_record

log = logging.getLogger("sunar")

#: Nodes whose time is retrieval and scorer (cross-encoder) time: SUNAR's NAR batches and MER's
#: evidence, GenSco's candidate pre-ranking, RA-ISF's retrieval (each also reads the first stage).
SCORING_NODES = ("select_batch", "gather", "candidates", "retrieve")


def ranked_evidence(out: dict[str, Any]) -> list[str]:
    """Evidence ids in rank order: the final evidence (re-scored against the question), then the
    rest of every sub-question's evidence, taken in turn from each hop."""
    ids = [e["id"] for e in out.get("evidence") or []]
    per_hop = [[e["id"] for e in hop.get("evidence") or []] for hop in out.get("hops") or []]
    for row in zip_longest(*per_hop):
        ids += [i for i in row if i is not None]
    return list(dict.fromkeys(ids))


def time_breakdown(usage: dict[str, Any], wall: float) -> dict[str, float]:
    """Where the wall time of a question went, as computed (LLM calls read from the cache count
    with the seconds they took when they were made)."""
    seconds = usage.get("seconds") or {}
    cached = float(usage.get("cached_seconds", 0.0))
    total = wall + cached
    llm, nli = float(usage.get("llm_seconds", 0.0)), float(usage.get("nli_seconds", 0.0))
    scoring = float(sum(seconds.get(n, 0.0) for n in SCORING_NODES))
    return {"total": total, "llm": llm, "nli": nli, "scoring": scoring, "rest": max(0.0, total - llm - nli - scoring)}


def prediction(q: Question, variant: str, out: dict[str, Any], wall: float) -> dict[str, Any]:
    record = result_record(out, variant)
    usage, answer, ranked = record["usage"], record["answer"], ranked_evidence(out)
    return {
        "id": q.id,
        "dataset": q.dataset,
        "type": q.type,
        "variant": variant,
        "question": q.question,
        "gold": q.answers,
        "answer": answer,
        "confidence": record["confidence"],
        "signals": record["signals"],
        "trust": record["trust"],
        "abstained": record["abstained"],
        "reasoning_path": record["reasoning_path"],
        **({"plan": record["plan"]} if record["plan"] else {}),
        **({"rationale": record["rationale"]} if record["rationale"] else {}),
        **({"chains": record["chains"], "chosen": record["chosen"]} if len(record["chains"]) > 1 else {}),
        "evidence_ids": ranked,
        "supporting_ids": q.supporting_ids,
        "notes": record["notes"],
        "llm_calls": usage.get("llm_calls", 0),
        "judge_calls": usage.get("judge_calls", 0),
        "loglik_calls": usage.get("loglik_calls", 0),
        "cached_calls": usage.get("cached_calls", 0),
        "prompt_tokens": usage.get("prompt_tokens", 0),
        "generated_tokens": usage.get("generated_tokens", 0),
        "parse_fallbacks": usage.get("parse_fallbacks", 0),
        "wall_seconds": wall,
        "time": time_breakdown(usage, wall),
        "node_seconds": usage.get("seconds") or {},
        "metrics": {**answer_metrics(answer, q.answers), **retrieval_metrics(ranked, q.supporting_ids)},
    }


def read_predictions(path: Path) -> list[dict[str, Any]]:
    """Records of a predictions file. A damaged line (cut short by a killed run, or garbage) is
    reported with its number and skipped; the lines after it are read as usual. The file is not
    changed (a run repairs its end with :func:`end_cleanly` before appending). Without the file,
    its compressed copy (``predictions.jsonl.gz``, what a repository keeps) is read."""
    packed = path.with_name(path.name + ".gz")
    if not path.exists() and not packed.exists():
        return []
    records = []
    with open(path, "rb") if path.exists() else gzip.open(packed, "rb") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            if not isinstance(record, dict) or not isinstance(record.get("id"), str | int) or not isinstance(record.get("variant"), str):
                log.warning("%s line %d is damaged; skipped (%r)", path, number, line[:60])
                continue
            records.append(record)
    return records


def unpack(path: Path) -> None:
    """Before resuming a run whose predictions are kept only compressed (a fresh clone of a
    repository that keeps ``predictions.jsonl.gz``): its working copy, unpacked beside it."""
    packed = path.with_name(path.name + ".gz")
    if not path.exists() and packed.exists():
        with gzip.open(packed, "rb") as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst)


def end_cleanly(path: Path) -> None:
    """Before appending to a predictions file: a last line without its newline is a record cut
    short by a killed run, and is removed (its answer is computed again; nothing follows it); a
    whole record that only lacks the newline gets it."""
    data = path.read_bytes() if path.exists() else b""
    if not data or data.endswith(b"\n"):
        return
    start = data.rfind(b"\n") + 1
    try:
        json.loads(data[start:])
        whole = True
    except ValueError:
        whole = False
    with open(path, "r+b") as f:
        if whole:
            f.seek(0, os.SEEK_END)
            f.write(b"\n")
        else:
            log.warning("%s line %d was cut short by a stopped run; removed (it is answered again)", path, data.count(b"\n") + 1)
            f.truncate(start)


def error_record(q: Question, variant: str, error: str) -> dict[str, Any]:
    return {"id": q.id, "dataset": q.dataset, "type": q.type, "variant": variant, "question": q.question, "gold": q.answers, "error": error}


def latest(records: Sequence[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """The record per (question, variant): an answer wins over an error, a later one over earlier."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r in records:
        key = (r["id"], r["variant"])
        if not r.get("error") or key not in out or out[key].get("error"):
            out[key] = r
    return out
