"""``sunar calibrate``: a calibration file from one or more evaluation runs' answers, and a
calibration file checked on another run's answers (see :mod:`sunar.evals.calibration` for the fit
and :mod:`sunar.trust` for its use)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sunar.errors import SunarError
from sunar.evals.calibration import check_calibration, fit_calibration, selected
from sunar.evals.predictions import latest, read_predictions
from sunar.evals.run import variant_graph, variant_settings
from sunar.signals import with_trace_signals
from sunar.trust import COMBINED, read


def _run_answers(run: str | Path, variant: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A run's settings (run.json) and its answers of ``variant``, in the order they were given, each
    with the signals its trace gives where the run predates them (:func:`sunar.signals.with_trace_signals`)."""
    folder = Path(run)
    settings_file = folder / "run.json"
    if not settings_file.is_file():
        raise SunarError(f"{folder} holds no evaluation run (no run.json); run: sunar eval ... --out {folder}")
    settings = json.loads(settings_file.read_text())
    return settings, with_trace_signals(r for r in latest(read_predictions(folder / "predictions.jsonl")).values() if r["variant"] == variant)


def _runs(runs: str | Path | Sequence[str | Path]) -> list[Path]:
    return [Path(runs)] if isinstance(runs, str | Path) else [Path(r) for r in runs]


def _levels(alpha: float, delta: float) -> None:
    if not 0 < alpha < 1 or not 0 < delta < 1:
        raise SunarError(f"alpha and delta must be between 0 and 1 (got {alpha}, {delta})")


def calibrate_run(
    runs: str | Path | Sequence[str | Path], variant: str, alpha: float, delta: float = 0.1, weights: str = "equal", probe: bool = False,
    shapes: bool = False, signals: Sequence[str] = (), select: float | None = None, only: bool = False,
) -> dict[str, Any]:
    """A calibration file's content from the answers of ``variant`` in one or more evaluation runs
    (pooled, each question once: the first run that answered it counts): the graph, LLM,
    settings and data it was fitted for (from the runs' run.json, which must agree on model and
    corpus), the questions it was fitted on, and
    :func:`~sunar.evals.calibration.fit_calibration`. With ``probe``, a probe on the LLM's hidden
    state is trained on every graph's answers in the runs and joins the combined signals; with
    ``shapes``, the prior of questions shaped alike (:mod:`sunar.shape_prior`) joins them; so do
    the recorded ``signals`` named. With ``select``, the signals combined are those whose AUROC alone
    on these answers is at least ``select`` (:func:`~sunar.evals.calibration.selected`), not the four;
    with ``only``, just the ``signals`` named."""
    _levels(alpha, delta)
    folders = _runs(runs)
    settings, records, everything, seen = [], [], [], set()
    for folder in folders:
        run_settings, answers = _run_answers(folder, variant)
        settings.append(run_settings)
        records += [r for r in answers if str(r["id"]) not in seen]
        seen |= {str(r["id"]) for r in answers}
        everything += list(latest(read_predictions(folder / "predictions.jsonl")).values()) if probe else []
    llm = (settings[0].get("configuration") or {}).get("llm")
    for folder, other in zip(folders[1:], settings[1:], strict=True):
        if (other.get("configuration") or {}).get("llm") != llm or other.get("corpus") != settings[0].get("corpus"):
            raise SunarError(f"{folder} was run with another LLM or corpus than {folders[0]}; calibrate on runs of one model and corpus")
    extra: dict[str, Any] = {}
    if probe:
        from sunar.evals.probe import probe_signals, reader

        extra["probe"], extra["probe_training"] = probe_signals(reader(str(llm)), everything, records)
    return calibration_of(records, settings, [f.name for f in folders], variant, alpha, delta, weights, shapes=shapes, signals=signals,
                          select=select, only=only, extra=extra)


def calibration_of(
    records: Sequence[dict[str, Any]], settings: Sequence[dict[str, Any]], runs: Sequence[str], variant: str, alpha: float, delta: float = 0.1,
    weights: str = "equal", shapes: bool = False, signals: Sequence[str] = (), select: float | None = None, only: bool = False,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A calibration file's content from answers of ``variant`` (``records``, each question once)
    taken from ``runs`` (their names; ``settings``, their run.json, the first giving the model,
    corpus and settings): :func:`calibrate_run` without reading the runs, for answers gathered
    otherwise (``benchmarks/refit_calibrations.py``: a run's answers with later fixes' reruns)."""
    _levels(alpha, delta)
    first = settings[0]
    try:
        base = () if only else COMBINED if select is None else selected(records, select)
        features = tuple(dict.fromkeys((*base, *signals, *(("probe",) if extra and "probe" in extra else ()))))
        if not features:
            raise ValueError("--only combines the signals --with names: name one" if only else f"no recorded signal has AUROC >= {select} alone; lower --select")
        fitted = fit_calibration(records, alpha, delta, weights, features=features, shapes=shapes)
    except ValueError as exc:
        raise SunarError(f"{', '.join(runs)}, variant {variant}: {exc}") from None
    configuration = {**(first.get("configuration") or {}), **variant_settings(variant)}
    questions = list({json.dumps(s.get("questions"), sort_keys=True): s.get("questions") for s in settings}.values())
    return {
        "graph": variant_graph(variant),
        "llm": (first.get("configuration") or {}).get("llm"),
        "variant": variant,
        "questions": questions[0] if len(questions) == 1 else questions,
        "corpus": first.get("corpus"),
        "configuration": configuration,
        "runs": list(runs),
        "promise": (
            f"at trust >= threshold, among the answers given at most {alpha:.0%} wrong (cover-EM) with probability "
            f"{1 - delta:.0%}, for questions exchangeable with the ones it was fitted on (same corpus, model and kind of question)"
        ),
        **fitted,
        **(extra or {}),
    }


def check_run(calibration_file: str | Path, run: str | Path, variant: str) -> dict[str, Any]:
    """A calibration file (from :func:`calibrate_run`) on the answers of ``variant`` in another
    run: how its trust ranks them and what its threshold answers. Answers to questions it was
    fitted on are left out (they would flatter it)."""
    settings, records = _run_answers(run, variant)
    calibration = read(calibration_file)
    llm = (settings.get("configuration") or {}).get("llm")
    if calibration.get("llm") != llm:
        raise SunarError(f"{calibration_file} was fitted for {calibration.get('llm')}, not {llm}; fit one for this model with: sunar calibrate")
    fitted_on = {str(i) for i in calibration.get("ids") or ()}
    unseen = [r for r in records if str(r["id"]) not in fitted_on]
    if records and not unseen:
        raise SunarError(f"{calibration_file} was fitted on every answer of {variant} in {run}; check it on a run it never saw")
    if calibration.get("probe") and unseen:
        from sunar.evals.probe import add_probe, reader

        add_probe(reader(str(llm)), calibration["probe"], unseen)
    try:
        checked = check_calibration(calibration, unseen)
    except ValueError as exc:
        raise SunarError(f"{run}, variant {variant}: {exc}") from None
    return {"left_out": len(records) - len(unseen), **checked}
