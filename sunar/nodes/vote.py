"""The final answer chosen, not just read (``final_vote``): the final step's answer and each chain's
answer are pooled into semantic sets by bidirectional entailment, each weighing its chain's
probability (the final step's, the chain it read); the set with the most weight wins. The final
step's answer stands when it is in that set, or on a tie; otherwise the set's heaviest answer
replaces it: where the final step departs from the chain it read, the other chains decide.

With ``final_from_hop``, a final answer that does not agree with the last hop's answer gives way to
it when the chain went past its bridge and the last hop's pages state that answer (``hop_support``
P(yes) >= 0.5): MER read the whole path and still named something else ("Abraham" where the last
hop read "Keturah")."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.models.nli import semantic_sets
from sunar.resources import resources
from sunar.signals import agrees, known, whole_chain
from sunar.usage import node


def tally(answers: list[str], weights: list[float], sets: list[list[int]]) -> str:
    """The winning answer: the heaviest set's (answers[0] when that set holds it), else its heaviest member."""
    voted = [s for s in sets if known(answers[s[0]])]
    if not voted:
        return answers[0]
    best = max(voted, key=lambda s: (sum(weights[i] for i in s), 0 in s, -s[0]))
    return answers[0] if 0 in best else answers[max(best, key=lambda i: (weights[i], -i))]


def supported_hop(state: dict[str, Any]) -> str | None:
    """The last hop's answer where it should replace the final one (``final_from_hop``), else None."""
    hops = state.get("hops") or []
    last = hops[-1] if hops else {}
    if not known(str(last.get("answer") or "")) or (last.get("support") or 0.0) < 0.5 or not whole_chain(state["question"], hops):
        return None
    return None if agrees(state["answer"], last["answer"]) else last["answer"]


@node("vote")
def vote(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    cfg = Configuration.from_runnable_config(config)
    update = chain_vote(state, config) if cfg.final_vote else {}
    answer = update.get("answer", state["answer"])
    hop = supported_hop({**state, "answer": answer}) if cfg.final_from_hop else None
    if hop is None:
        return update
    note = f"the last hop's answer {hop!r}, which its pages state, replaced the final step's {answer!r}"
    return {"answer": hop, "acted": "hop_supported", "notes": [*update.get("notes", []), note]}


def chain_vote(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """The chains' vote with the final step's answer (none with fewer than two finished chains). The
    final step read the chosen chain, so its answer weighs that chain's probability: it cannot outvote
    its own chain's conclusion alone (one vote against every chain's sum could never lose)."""
    chains = [c for c in state.get("chains") or [] if c["status"] == "done"]
    if len(chains) < 2:
        return {}
    answers = [state["answer"], *(c["answer"] for c in chains)]
    weights = [float(state.get("weight", 1.0)), *(c["weight"] for c in chains)]  # the chosen chain's, as next_chain set it
    winner = tally(answers, weights, semantic_sets(state["question"], answers, resources(config).nli))
    if winner == state["answer"]:
        return {}
    return {"answer": winner, "acted": "outvoted", "notes": [f"the chains outvoted the final step's answer {state['answer']!r}"]}
