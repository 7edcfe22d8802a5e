"""``sunar calibrate``: a calibration file from an evaluation run's answers (see
:mod:`sunar.evals.calibration` for the fit and :mod:`sunar.trust` for its use)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sunar.errors import SunarError
from sunar.evals.calibration import fit_calibration
from sunar.evals.run import latest, read_predictions, variant_settings


def calibrate_run(run: str | Path, variant: str, alpha: float, delta: float = 0.1, weights: str = "equal") -> dict[str, Any]:
    """A calibration file's content from an evaluation run's answers of ``variant``: the LLM and the
    data it was fitted for (from the run's run.json), and :func:`~sunar.evals.calibration.fit_calibration`."""
    folder = Path(run)
    settings_file = folder / "run.json"
    if not settings_file.is_file():
        raise SunarError(f"{folder} holds no evaluation run (no run.json); run: sunar eval ... --out {folder}")
    if not 0 < alpha < 1 or not 0 < delta < 1:
        raise SunarError(f"alpha and delta must be between 0 and 1 (got {alpha}, {delta})")
    settings = json.loads(settings_file.read_text())
    records = [r for r in latest(read_predictions(folder / "predictions.jsonl")).values() if r["variant"] == variant]
    try:
        fitted = fit_calibration(records, alpha, delta, weights)
    except ValueError as exc:
        raise SunarError(f"{folder}, variant {variant}: {exc}") from None
    configuration = {**(settings.get("configuration") or {}), **variant_settings(variant)}
    return {
        "llm": configuration.get("llm"),
        "variant": variant,
        "questions": settings.get("questions"),
        "corpus": settings.get("corpus"),
        "configuration": configuration,
        "promise": (
            f"among the answers given, at most {alpha:.0%} wrong (cover-EM) with probability {1 - delta:.0%}, for questions "
            "exchangeable with the ones it was fitted on (same corpus, model and kind of question)"
        ),
        **fitted,
    }
