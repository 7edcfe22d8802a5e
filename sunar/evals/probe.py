"""A probe of trust on the LLM's own hidden state: a logistic regression on the last-layer state
at the last token of "Question: ... Answer: ..." (:func:`sunar.trust.probe_text`) that reads
whether the model's answer is right, as semantic-entropy probes do for larger models.

It is trained on labelled answers of evaluation runs (every graph's answers to the same
questions: the hidden state depends on the question and the answer, not on the graph that found
it), grouped by question so that no question is on both sides of a fold. The states are read
once per text and kept in a call cache (``SUNAR_HOME/hidden-states.sqlite``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sunar.evals.calibration import right
from sunar.models.llm import LLM
from sunar.paths import sunar_home
from sunar.text import normalize_answer
from sunar.trust import predict, probe_text

#: L2 strengths tried for the probe, chosen by grouped cross-validation on its training answers.
STRENGTHS = (0.01, 0.1, 1.0, 10.0)
FOLDS = 5


def reader(spec: str) -> LLM:
    """The LLM ``spec`` with its hidden states kept in the shared call cache."""
    from sunar.models.llm_cache import CallCache
    from sunar.models.providers import make_llm
    from sunar.models.recorded import RecordedLLM

    return RecordedLLM(make_llm(spec), CallCache(sunar_home() / "hidden-states.sqlite"))


def hidden_states(llm: LLM, records: Sequence[dict[str, Any]]) -> np.ndarray:
    """records x hidden size: the state of each record's question and answer."""
    return np.array([llm.hidden_state(probe_text(str(r["question"]), str(r["answer"]))) for r in records], dtype=float)


def pair(record: dict[str, Any]) -> tuple[str, str]:
    """A record's question and normalised answer: what the probe reads, whichever graph gave it."""
    return str(record["id"]), normalize_answer(str(record.get("answer") or ""))


def examples(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The distinct (question, answer) pairs among labelled answers, each once (the first label)."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for r in records:
        if r.get("error") or not r.get("question"):
            continue
        seen.setdefault(pair(r), r)
    return list(seen.values())


def set_probe(records: Sequence[dict[str, Any]], values: Sequence[float | None]) -> None:
    """Each record's ``probe`` signal (kept beside its other signals)."""
    for r, value in zip(records, values, strict=True):
        r["signals"] = {**(r.get("signals") or {}), "probe": None if value is None else round(float(value), 6)}


def add_probe(llm: LLM, probe: dict[str, Any], records: Sequence[dict[str, Any]]) -> None:
    """A fitted probe's signal on records of questions it was not trained on."""
    if records:
        set_probe(records, predict(probe, hidden_states(llm, records)))


def _fit(x: np.ndarray, y: np.ndarray, strength: float) -> dict[str, Any]:
    """A standardised L2 logistic regression, as plain lists in :func:`sunar.trust.predict`'s format."""
    from sklearn.linear_model import LogisticRegression

    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    fitted = LogisticRegression(C=1.0 / strength, max_iter=2000).fit((x - mean) / scale, y)
    return {"mean": mean.tolist(), "scale": scale.tolist(), "intercept": float(fitted.intercept_[0]), "coef": fitted.coef_[0].tolist()}


def _folds(groups: Sequence[str]) -> np.ndarray:
    """A fold per question (all answers of one question in one fold), dealt in order of first appearance."""
    order = {g: i % FOLDS for i, g in enumerate(dict.fromkeys(groups))}
    return np.array([order[g] for g in groups])


def out_of_fold(x: np.ndarray, y: np.ndarray, groups: Sequence[str], strength: float) -> np.ndarray:
    """Each answer's probe score from a probe fitted on the other questions' answers."""
    fold, out = _folds(groups), np.full(len(y), float(y.mean()) if len(y) else 0.5)
    for k in range(FOLDS):
        train = fold != k
        if (fold == k).any() and len(set(y[train])) == 2:
            out[fold == k] = predict(_fit(x[train], y[train], strength), x[fold == k])
    return out


def fit_probe(x: np.ndarray, y: np.ndarray, groups: Sequence[str]) -> tuple[dict[str, Any], dict[str, float]]:
    """The probe fitted on every answer with the L2 strength whose out-of-fold AUROC was best,
    and each strength's out-of-fold AUROC."""
    from sunar.evals.calibration import auroc

    tried = {s: auroc(out_of_fold(x, y, groups, s), y) or 0.5 for s in STRENGTHS}
    best = max(tried, key=lambda s: tried[s])
    return {**_fit(x, y, best), "strength": best}, {str(s): round(a, 4) for s, a in tried.items()}


def probe_signals(llm: LLM, train: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A probe trained on the labelled answers ``train``, and its ``probe`` signal added to each of
    ``rows`` (rows whose question is among the training answers get the out-of-fold score, never
    an in-sample one). Returns (the probe, how it was chosen)."""
    pairs = examples(train)
    x, y = hidden_states(llm, pairs), np.array([right(r) for r in pairs])
    groups = [str(r["id"]) for r in pairs]
    probe, tried = fit_probe(x, y, groups)
    oof = out_of_fold(x, y, groups, probe["strength"])
    by_pair = {pair(r): float(v) for r, v in zip(pairs, oof, strict=True)}
    trained_on = set(groups)
    seen = [r for r in rows if str(r["id"]) in trained_on]
    set_probe(seen, [by_pair.get(pair(r)) for r in seen])
    add_probe(llm, probe, [r for r in rows if str(r["id"]) not in trained_on])
    return probe, {"answers": len(pairs), "questions": len(trained_on), "auroc_by_strength": tried}
