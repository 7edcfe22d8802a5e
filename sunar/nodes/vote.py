"""The final answer chosen, not just read: the final step's answer (one vote: it read the whole
path and the evidence) and each chain's answer (its probability) are pooled into semantic sets by
bidirectional entailment; the set with the most weight wins. The final step's answer stands when it
is in that set; otherwise the set's heaviest answer replaces it."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.models.nli import semantic_sets
from sunar.resources import resources
from sunar.signals import known
from sunar.usage import node

#: The weight of the final step's (MER's) own answer; a chain's weight is at most 1.
FINAL_VOTE = 1.0


def tally(answers: list[str], weights: list[float], sets: list[list[int]]) -> str:
    """The winning answer: the heaviest set's (answers[0] when that set holds it), else its heaviest member."""
    voted = [s for s in sets if known(answers[s[0]])]
    if not voted:
        return answers[0]
    best = max(voted, key=lambda s: (sum(weights[i] for i in s), 0 in s, -s[0]))
    return answers[0] if 0 in best else answers[max(best, key=lambda i: (weights[i], -i))]


@node("vote")
def vote(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    chains = [c for c in state.get("chains") or [] if c["status"] == "done"]
    if len(chains) < 2:
        return {}
    answers = [state["answer"], *(c["answer"] for c in chains)]
    weights = [FINAL_VOTE, *(c["weight"] for c in chains)]
    winner = tally(answers, weights, semantic_sets(state["question"], answers, resources(config).nli))
    if winner == state["answer"]:
        return {}
    return {"answer": winner, "notes": [f"the chains outvoted the final step's answer {state['answer']!r}"]}
