"""Whether the product stands behind an answer: the signals of :mod:`sunar.signals` combined into
one number, the probability that the answer is right, by a calibration fitted on labelled runs (``sunar calibrate``).

A calibration file records what it was fitted on (the graph, the LLM, the settings that change answers, the
corpus); it is used where the first three match, on any corpus (:func:`choose`; :func:`describe` says where it
was fitted). It holds the combination (standardised signals, equal weights or one fitted per signal, by an
L2-regularised logistic regression), the map to a probability (the logistic, or isotonic where that held out
better), optionally a probe on the LLM's hidden state (:mod:`sunar.evals.probe`), and the ``min_trust`` levels
(:mod:`sunar.evals.selective`: with a promise, and without).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from sunar.errors import SunarError

#: Every signal of trust an eval report rates, each oriented so that higher means more trust.
FEATURES: tuple[str, ...] = (
    "agreement", "semantic_entropy", "sets", "hop_agreement", "hop_support", "answer_fits", "chain_support", "evidence_top", "evidence_margin",
    "answer_in_evidence", "chain_agrees", "chain_broken", "whole_chain", "named_pages", "unknown", "fallback", "answer_logprob", "probe", "shape_prior",
)
#: The signals combined by default: those whose AUROC alone was at least 0.55 on the paper's sunar's answers
#: to dev 1-100; the others were near chance or inverted there (benchmarks/RESULTS.md).
COMBINED: tuple[str, ...] = ("agreement", "semantic_entropy", "sets", "chain_agrees")
#: The cpu profile's S's signals: those whose probability held best on a dataset it was not fitted on (benchmarks/results/transfer/).
TRANSFER: tuple[str, ...] = ("chain_support", "hop_support", "answer_fits", "whole_chain", "named_pages")
#: Recorded signals ``sunar calibrate --with`` adds (the probe and the shape prior have flags of their own).
EXTRA_SIGNALS = tuple(f for f in FEATURES if f not in (*COMBINED, "probe", "shape_prior"))
#: Signals where a higher value means less trust (negated).
DISTRUST = frozenset({"semantic_entropy", "sets", "chain_broken", "unknown", "fallback"})
#: What a signal that pulls the score down says to a user.
REASONS = {
    "agreement": "the sampled answers disagree with it",
    "semantic_entropy": "the sampled answers mean different things",
    "sets": "the sampled answers mean different things",
    "hop_agreement": "a hop's sampled answers disagree",
    "hop_support": "a hop's pages do not state its answer",
    "answer_fits": "it may not be what the question asks for",
    "chain_support": "a step of the reasoning is doubtful",
    "evidence_top": "the best evidence is a weak match for the question",
    "evidence_margin": "no piece of evidence stands out",
    "answer_in_evidence": "the answer is not in the cited evidence",
    "chain_agrees": "the reasoning chain's own answer differs",
    "chain_broken": "a hop only repeated its question or an earlier answer",
    "whole_chain": "the reasoning stopped after one step that asked only part of the question",
    "named_pages": "a step did not find the page of what it asks about",
    "unknown": "no answer was found",
    "fallback": "the final reasoning broke its format",
    "answer_logprob": "the model finds the answer unlikely given its evidence",
    "probe": "the model's own hidden state reads like its wrong answers",
    "shape_prior": "questions shaped like this one were mostly answered wrong",
}
#: Configuration fields that do not change which answer is given (where models and indexes are
#: served or cached, how trust is shown); a calibration must match every other field.
NOT_ANSWERS = frozenset({"profile", "openai_base_url", "chroma_url", "index_dir", "llm_cache", "calibration", "min_trust"})


def changes_answers(name: str) -> bool:
    """Whether the configuration field ``name`` can change a graph's answers (the values compared
    are those of the graph's own configuration class, so another graph's fields never count)."""
    return name not in NOT_ANSWERS


#: Shipped calibrations (fitted on the shared multi-hop dev data), by file name.
SHIPPED = Path(__file__).parent / "data" / "calibration"


def oriented(name: str, value: Any) -> float | None:
    """A signal's value with higher meaning more trust (None stays None)."""
    if value is None:
        return None
    return -float(value) if name in DISTRUST else float(value)


def signal_matrix(records: Any, features: Any = FEATURES) -> np.ndarray:
    """Records (each with ``signals``) x features, oriented; a missing signal is NaN."""
    return np.array(
        [[np.nan if (v := oriented(f, (r.get("signals") or {}).get(f))) is None else v for f in features] for r in records], dtype=float
    ).reshape(len(records), len(features))


def _standardised(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, scale, z): each feature's mean and spread, and the features standardised with a
    missing value at the feature's mean (z = 0)."""
    seen = ~np.isnan(x)
    mean = np.array([x[seen[:, j], j].mean() if seen[:, j].any() else 0.0 for j in range(x.shape[1])])
    filled = np.where(seen, x, mean)
    scale = filled.std(axis=0)
    scale[scale == 0] = 1.0
    return mean, scale, (filled - mean) / scale


def _newton(z: np.ndarray, y: np.ndarray, l2: float, iterations: int = 50) -> np.ndarray:
    """Weights [intercept, *coef] of an L2-regularised logistic regression on z, by Newton's method."""
    z = np.hstack([np.ones((len(z), 1)), z])
    w = np.zeros(z.shape[1])
    penalty = np.diag([0.0] + [l2] * (z.shape[1] - 1))
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-z @ w))
        step = np.linalg.solve(z.T @ (z * (p * (1 - p))[:, None]) + penalty + 1e-9 * np.eye(len(w)), z.T @ (p - y) + penalty @ w)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> dict[str, Any]:
    """An L2-regularised logistic regression on standardised features, a weight per feature; the
    model as plain lists, for a JSON file."""
    mean, scale, z = _standardised(x)
    w = _newton(z, y, l2)
    return {"mean": mean.tolist(), "scale": scale.tolist(), "intercept": float(w[0]), "coef": w[1:].tolist()}


def fit_equal_weights(x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> dict[str, Any]:
    """One weight for all the standardised signals (each oriented so that higher means more
    trust): their mean, turned into a probability by a logistic fit of two numbers. With tens of
    labelled answers, weights fitted per signal follow noise and can turn a signal against its
    sense; equal weights cannot (and a slope below 0 is cut to 0: no signal then counts). The same
    model format as :func:`fit_logistic`."""
    mean, scale, z = _standardised(x)
    w = _newton(z.mean(axis=1, keepdims=True), y, l2)
    if w[1] <= 0:  # the signals point the wrong way on these answers: the base rate alone
        w = np.array([_newton(np.zeros((len(y), 0)), y, l2)[0], 0.0])
    return {"mean": mean.tolist(), "scale": scale.tolist(), "intercept": float(w[0]), "coef": [float(w[1]) / x.shape[1]] * x.shape[1]}


#: How a combination's weights are found: one per signal, or equal for all (the default).
WEIGHTS = {"fitted": fit_logistic, "equal": fit_equal_weights}


def contributions(model: dict[str, Any], x: np.ndarray) -> np.ndarray:
    """Each feature's pull on the log-odds (rows x features)."""
    mean, scale = np.asarray(model["mean"]), np.asarray(model["scale"])
    return (np.where(np.isnan(x), mean, x) - mean) / scale * np.asarray(model["coef"])


def predict(model: dict[str, Any], x: np.ndarray) -> np.ndarray:
    """The probability that each answer is right under a :func:`fit_logistic` model."""
    return 1 / (1 + np.exp(-(model["intercept"] + contributions(model, x).sum(axis=1))))


def read(path: str | Path) -> dict[str, Any]:
    """A calibration file, checked (a one-line error that says what to do when it is not one)."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise SunarError(f"calibration file not found: {path}; fit one with: sunar calibrate --run DIR --out {path}")
    return {**_read(str(path), path.stat().st_mtime), "path": str(path)}


@functools.lru_cache(maxsize=16)
def _read(path: str, modified: float) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
        data["threshold"] = float(data["threshold"])
        if len(data["features"]) != len(data["model"]["coef"]):
            raise ValueError("features and coefficients differ in number")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SunarError(f"{path} is not a calibration file ({exc}); fit one with: sunar calibrate --run DIR") from None
    return data


def candidates(spec: str) -> list[dict[str, Any]]:
    """The calibrations ``spec`` allows: none ("" or "off"), every shipped one ("auto"), or the file it names."""
    if spec in ("", "off"):
        return []
    if spec == "auto":
        return [read(path) for path in sorted(SHIPPED.glob("*.json"))] if SHIPPED.is_dir() else []
    return [read(spec)]


def graph_of(calibration: dict[str, Any]) -> str:
    """The graph a calibration was fitted for (its variant's name before any ``+field=value``)."""
    return str(calibration.get("graph") or calibration.get("variant") or "").partition("+")[0]


#: How a run's recorded settings read as every configuration field (a field the run did not record,
#: as a newer switch, at its default): :meth:`sunar.configuration.Configuration.as_recorded`.
Resolver = Callable[[dict[str, Any]], dict[str, Any]]


def mismatch(calibration: dict[str, Any], graph: str, values: dict[str, Any], resolve: Resolver) -> str:
    """Why ``calibration`` does not apply to a run of ``graph`` with these configuration values ("" when it
    applies), in words a chat user can read: no file path. A calibration is keyed to the graph, the LLM and
    the settings that change answers; the corpus it was fitted on is said beside the probability
    (:func:`describe`), not required."""
    if graph_of(calibration) != graph:
        return f"the calibration was fitted for the {graph_of(calibration)} graph"
    if calibration.get("llm") != values.get("llm"):
        return f"the calibration was fitted for {calibration.get('llm')}, not {values.get('llm')}"
    expected = resolve(calibration.get("configuration") or {})
    changed = [k for k in values if changes_answers(k) and k != "llm" and k in expected and expected[k] != values[k]]
    if changed:
        said = ", ".join(f"{k}={values[k]} (fitted with {expected[k]})" for k in changed[:3])
        return f"the calibration was fitted with other settings: {said}"
    return ""


def choose(spec: str, graph: str, values: dict[str, Any], resolve: Resolver) -> tuple[dict[str, Any] | None, str]:
    """(the calibration to use, "") or (None, why none applies, in a few words)."""
    if spec in ("", "off"):
        return None, "calibration is off"
    reasons = []
    for calibration in candidates(spec):
        reason = mismatch(calibration, graph, values, resolve)
        if not reason:
            return calibration, ""
        reasons.append((graph_of(calibration) == graph and calibration.get("llm") == values.get("llm"), reason))
    close = [reason for same, reason in reasons if same]  # one fitted for this graph and LLM is named first
    if close:
        return None, close[0]
    if spec != "auto":
        return None, reasons[0][1]
    return None, f"none is shipped for the {graph} graph with {values.get('llm')}"


def own_settings(calibration: dict[str, Any], profile: dict[str, Any]) -> list[str]:
    """The ``field=value`` switches of its variant that its profile does not set (``hop_support=judge``)."""
    return [p for p in str(calibration.get("variant") or "").split("+")[1:] if str(profile.get(p.partition("=")[0], "")).lower() != p.partition("=")[2].lower()]


def describe(calibration: dict[str, Any], corpus: str | None = None) -> str:
    """What a calibration was fitted on, in a few words, and whether that was this corpus (its fingerprint
    ``corpus``; None: not known)."""
    n = len(calibration.get("ids") or ()) or calibration.get("n")
    questions = (calibration.get("questions") or {}).get("file")
    said = f"fitted on {n} labelled answers of {graph_of(calibration)} with {calibration.get('llm')}" + (f" ({questions})" if questions else "")
    if corpus is None or corpus != (calibration.get("corpus") or {}).get("sha256"):
        return f"{said}, not on this corpus"
    return said


def probability(calibration: dict[str, Any], x: np.ndarray) -> np.ndarray:
    """The calibrated probability that each answer is right: the combination's logistic score,
    mapped by the calibration's isotonic fit when it has one."""
    p = predict(calibration["model"], x)
    mapping = calibration.get("mapping") or {"kind": "platt"}
    if mapping["kind"] == "isotonic":
        p = np.interp(p, mapping["x"], mapping["y"])
    return p


def judge(signals: dict[str, Any], calibration: dict[str, Any], min_trust: float = 0.0, floor: float = 0.0) -> dict[str, Any]:
    """The probability that the answer is right, read above its chance ``floor`` (:mod:`sunar.choice`),
    whether it is below ``min_trust`` (then the product says it does not know and gives the answer only
    as its best guess) and, when below one half or withheld, what pulls it down most (in words)."""
    features, model = tuple(calibration["features"]), calibration["model"]
    x = signal_matrix([{"signals": signals}], features)
    pulls = contributions(model, x)[0]
    trust = floor + (1 - floor) * float(probability(calibration, x)[0])  # choice.floored
    abstained = trust < min_trust
    if trust >= 0.5 and not abstained:
        return {"trust": round(trust, 4), "abstained": False, "why": ""}
    # the two strongest pulls down, each reason once (entropy and sets say the same thing); a
    # signal is named only when it is itself on the side of distrust (below its usual value): a
    # fit may weigh one against its sense, and "the samples disagree" must not be said when they agree
    low = np.nan_to_num(x[0] - np.asarray(model["mean"]), nan=0.0) < 0
    reasons = dict.fromkeys(REASONS.get(features[i], features[i]) for i in np.argsort(pulls) if pulls[i] < 0 and low[i])
    weak = "answers like this one are mostly wrong on the questions it was calibrated on" if trust < 0.5 else ""  # the level alone withholds it
    why = "; ".join(list(reasons)[:2]) or weak
    return {"trust": round(trust, 4), "abstained": abstained, "why": why}


def held_signals(calibration: dict[str, Any], llm: Callable[[], Any], question: str, answer: str) -> dict[str, float | None]:
    """The signals a calibration supplies itself, where its features use them: its probe on the
    LLM's hidden state (``llm`` is called only then) and its prior of questions shaped alike."""
    from sunar import shape_prior

    found: dict[str, float | None] = {}
    if "probe" in calibration["features"]:
        found["probe"] = probe_signal(calibration, llm(), question, answer)
    if "shape_prior" in calibration["features"]:
        found["shape_prior"] = shape_prior.signal(calibration, question)
    return found


def probe_text(question: str, answer: str) -> str:
    return f"Question: {question}\nAnswer: {answer}"  # what the probe reads the hidden state on


def probe_signal(calibration: dict[str, Any], llm: Any, question: str, answer: str) -> float | None:
    """The calibration's probe on the LLM's hidden state for this answer: the probability it gives
    that the answer is right (None without a probe, or for a model that hides its states)."""
    from sunar.errors import ModelUnavailable

    probe = calibration.get("probe")
    if not probe:
        return None
    try:
        state = np.asarray([llm.hidden_state(probe_text(question, answer))], dtype=float)
    except ModelUnavailable:
        return None
    return round(float(predict(probe, state)[0]), 6)
