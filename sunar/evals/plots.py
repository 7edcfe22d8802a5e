"""The plots of an evaluation run's report (matplotlib, written beside report.md):

accuracy.png     the answer metrics per dataset and variant, cover-EM with its Wilson 95% interval
recall.png       Recall@k of the gold paragraphs
cost.png         seconds and LLM calls per question
calibration.png  risk-coverage curves: accuracy of the answered against the share answered
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sunar.evals import calibration
from sunar.evals.metrics import RECALL_KS

#: The answer metrics plotted, with their titles.
ANSWER_TITLES = {"cover_em": "cover-EM (95% Wilson CI)", "word_cover_em": "word cover-EM", "em": "EM", "f1": "F1"}


def _save(fig: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot(metrics: dict[str, dict[str, Any]], out: Path) -> list[Path]:
    """accuracy.png, recall.png and cost.png from a run's metrics (:func:`sunar.evals.report.aggregate`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = [d for d in metrics if d != "all"] or ["all"]
    variants = list(metrics["all"])
    width = 0.8 / max(1, len(variants))
    paths = []

    fig, axes = plt.subplots(1, len(ANSWER_TITLES), figsize=(4 * len(ANSWER_TITLES), 3.5), squeeze=False)
    for ax, (key, title) in zip(axes[0], ANSWER_TITLES.items(), strict=True):
        for i, v in enumerate(variants):
            values = [metrics[d].get(v, {}).get(key, 0.0) for d in datasets]
            yerr = None
            if key == "cover_em":  # a proportion: its Wilson 95% interval as error bars
                intervals = [metrics[d].get(v, {}).get("cover_em_ci95", [y, y]) for d, y in zip(datasets, values, strict=True)]
                yerr = [[y - lo for y, (lo, _) in zip(values, intervals, strict=True)], [hi - y for y, (_, hi) in zip(values, intervals, strict=True)]]
            ax.bar([x + i * width for x in range(len(datasets))], values, width, label=v, yerr=yerr, capsize=2)
        ax.set_xticks([x + width * (len(variants) - 1) / 2 for x in range(len(datasets))], datasets)
        ax.set_title(title)
        ax.set_ylim(0, 1)
    axes[0][0].legend(fontsize=8)
    paths.append(_save(fig, out / "accuracy.png"))

    fig, axes = plt.subplots(1, len(datasets), figsize=(4.5 * len(datasets), 3.5), squeeze=False)
    for ax, d in zip(axes[0], datasets, strict=True):
        for v in variants:
            if v in metrics[d]:
                ax.plot(RECALL_KS, [metrics[d][v][f"recall@{k}"] for k in RECALL_KS], marker="o", label=v)
        ax.set_title(f"{d}: Recall@k of the gold paragraphs")
        ax.set_xlabel("k")
        ax.set_ylim(0, 1)
    axes[0][0].legend(fontsize=8)
    paths.append(_save(fig, out / "recall.png"))

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.5))
    bottom = [0.0] * len(variants)
    for key, label in (("llm", "LLM"), ("nli", "yes/no judgements"), ("scoring", "retrieval + scoring"), ("rest", "rest")):
        values = [metrics["all"][v]["seconds"][key] for v in variants]
        left.bar(variants, values, bottom=bottom, label=label)
        bottom = [b + x for b, x in zip(bottom, values, strict=True)]
    left.set_title("seconds per question")
    left.legend(fontsize=8)
    right.bar(variants, [metrics["all"][v]["llm_calls"] for v in variants])
    right.set_title("LLM calls per question")
    for ax in (left, right):
        ax.tick_params(axis="x", labelrotation=20)
    paths.append(_save(fig, out / "cost.png"))
    return paths


def plot_calibration(records: Sequence[dict[str, Any]], out: Path) -> Path:
    """Accuracy of the answered questions against the share answered, answering the most confident
    first: one curve per variant (its confidence, and its cross-validated combined signals)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for v in dict.fromkeys(r["variant"] for r in records):
        rows = [r for r in records if r["variant"] == v and not r.get("error")]
        correct = [calibration.right(r) for r in rows]
        if not rows:
            continue
        xs, ys = zip(*calibration.risk_coverage([float(r.get("confidence") or 0.0) for r in rows], correct), strict=True)
        line = ax.plot(xs, ys, label=f"{v}: confidence")[0]
        if all(r.get("signals") for r in rows):
            xs, ys = zip(*calibration.risk_coverage(calibration.cross_validated(rows, correct).tolist(), correct), strict=True)
            ax.plot(xs, ys, linestyle="--", color=line.get_color(), label=f"{v}: combined signals (CV)")
    ax.set_xlabel("share of questions answered (most confident first)")
    ax.set_ylabel("accuracy of the answered (cover-EM)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7)
    return _save(fig, out / "calibration.png")
