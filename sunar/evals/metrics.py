"""Answer and retrieval metrics.

Answers, against the gold answer and its aliases (best over them), after SQuAD normalisation:
- cover-EM: a normalised gold answer is contained in the normalised prediction (Self-Ask, SUNAR);
- word cover-EM: the same, as whole words ("American" does not cover "America"), reported beside
  cover-EM, which stays the paper's metric;
- EM: the normalised prediction equals a normalised gold answer;
- F1: token overlap F1 (SQuAD).

Retrieval of the gold supporting paragraphs by the ranked evidence a variant used: Recall@k and
nDCG@10, computed by trec_eval through ``ir_measures`` (binary relevance).

Comparing two variants on the same questions: a 0/1 metric's wins and losses, question by question,
with the exact two-sided sign test on the questions where they differ (McNemar's exact test), and a
Wilson 95% interval for a proportion; both by ``scipy.stats.binomtest``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import ir_measures
from ir_measures import R, nDCG

from sunar.text import normalize_answer

RECALL_KS = tuple(range(1, 11))


def cover_em(prediction: str, answers: Sequence[str]) -> float:
    pred = normalize_answer(prediction)
    return float(any(gold and gold in pred for gold in map(normalize_answer, answers)))


def word_cover_em(prediction: str, answers: Sequence[str]) -> float:
    """cover-EM on whole words: the gold answer's words occur in a row among the prediction's."""
    pred = f" {normalize_answer(prediction)} "
    return float(any(gold and f" {gold} " in pred for gold in map(normalize_answer, answers)))


def exact_match(prediction: str, answers: Sequence[str]) -> float:
    pred = normalize_answer(prediction)
    return float(bool(pred) and any(pred == normalize_answer(a) for a in answers))


def _f1(prediction: str, gold: str) -> float:
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    common = sum((Counter(pred) & Counter(ref)).values())
    if not pred or not ref or not common:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, answers: Sequence[str]) -> float:
    return max((_f1(prediction, a) for a in answers), default=0.0)


def answer_metrics(prediction: str, answers: Sequence[str]) -> dict[str, float]:
    return {
        "cover_em": cover_em(prediction, answers), "word_cover_em": word_cover_em(prediction, answers),
        "em": exact_match(prediction, answers), "f1": token_f1(prediction, answers),
    }


def retrieval_metrics(ranked_ids: Sequence[str], gold_ids: Iterable[str], ks: Sequence[int] = RECALL_KS) -> dict[str, float]:
    """Recall@k for each k and nDCG@10 of one ranked list against the gold paragraphs.
    Rank order is kept exactly (trec_eval breaks score ties by id, so scores are 1/rank)."""
    gold = sorted(set(gold_ids))
    if not gold:
        return {}
    qrels = [ir_measures.Qrel("q", doc, 1) for doc in gold]
    seen: set[str] = set()
    run = []
    for doc in ranked_ids:
        if doc not in seen:
            seen.add(doc)
            run.append(ir_measures.ScoredDoc("q", doc, 1.0 / (len(run) + 1)))
    measures = [R @ k for k in ks] + [nDCG @ 10]
    values = {str(m.measure): m.value for m in ir_measures.iter_calc(measures, qrels, run)}
    out = {f"recall@{k}": float(values.get(f"R@{k}", 0.0)) for k in ks}
    out["ndcg@10"] = float(values.get("nDCG@10", 0.0))
    return out


def proportion_ci(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of successes / n (0..1; (0, 1) when n is 0)."""
    if n <= 0:
        return (0.0, 1.0)
    from scipy.stats import binomtest  # here: scipy.stats takes 1.4 s to import, and most commands never test

    ci = binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return (float(ci.low), float(ci.high))


def paired_comparison(variant: Sequence[float], base: Sequence[float]) -> dict[str, float]:
    """A 0/1 metric of a variant against a baseline, question by question (same order): the
    questions only the variant gets right (wins), only the baseline gets right (losses), and the
    exact two-sided sign test p on those (1.0 when they never differ)."""
    if len(variant) != len(base):
        raise ValueError(f"paired lists differ in length: {len(variant)} and {len(base)}")
    wins = sum(1 for a, b in zip(variant, base, strict=True) if a > b)
    losses = sum(1 for a, b in zip(variant, base, strict=True) if a < b)
    from scipy.stats import binomtest

    p = float(binomtest(wins, wins + losses).pvalue) if wins + losses else 1.0
    return {"n": len(variant), "wins": wins, "losses": losses, "p": p}
