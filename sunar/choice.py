"""The chance floor of an answer: how often it would be right if it were picked blind among the
options its question names.

A question that asks which of two named things ("Who was born later, A or B?") or whether two are
the same ("Are A and B from the same country?") is answered right half the time by a coin, when the
answer is one of its options (a side as the question writes it, or yes/no); an open question
(a chain, an inference over family relations) has no such floor. Comparisons were 95% right and
chains 49% on the labelled answers (benchmarks/results/transfer/): a probability fitted on chains and
read on comparisons is off by that base rate, most of which the floor explains. So the probability
can be read as ``floor + (1 - floor) * q`` (:func:`floored`), where ``q`` is the probability that the
values the answer was decided on are right, from the same signals on every shape.

The floor needs only the question and the final answer, so the product computes it at answer time as
a benchmark computes it from a stored prediction.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sunar.compare import comparison
from sunar.signals import agrees
from sunar.text import normalize_answer

#: The floor of an answer that is one of the two options its question names.
TWO_WAY = 0.5
#: What the confidence's basis adds when an answer is read above its floor.
FLOOR_SAID = "; one of the two options the question names, so at least 50%"


def floor(question: str, answer: str) -> float:
    """:data:`TWO_WAY` when ``question`` compares two named things and ``answer`` is one of them (exactly
    one side, in cover-EM's sense) or, for a "the same" question, yes or no; 0.0 otherwise."""
    c = comparison(question)
    if c is None:
        return 0.0
    if c.asks == "same":
        return TWO_WAY if normalize_answer(answer) in ("yes", "no") else 0.0
    return TWO_WAY if sum(agrees(answer, side) for side in c.sides) == 1 else 0.0


def floored(q: Any, floors: Any) -> np.ndarray:
    """The probability of answers whose decided values are right with probability ``q``, each above its floor."""
    f = np.asarray(floors, dtype=float)
    return f + (1 - f) * np.asarray(q, dtype=float)
