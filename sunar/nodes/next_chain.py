"""The end of one chain of reasoning: it is kept as done, and the most probable chain still waiting
(branched off an uncertain hop) is followed next; when none waits, the chain the final step reads
is chosen. A chain's score is its probability, times how well its answer is supported: an answer
that names nothing counts for nothing, one its last hop's evidence does not contain for half."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.signals import agrees, known
from sunar.state import Chain
from sunar.usage import node


def chain_answer(hops: list[dict[str, Any]], draft_answer: str) -> str:
    """What a chain concluded: Self-Ask's own final answer, else its last hop's answer."""
    return draft_answer or (hops[-1]["answer"] if hops else "")


def support(chain: Chain) -> float:
    """1 when the chain's answer is in its last hop's evidence, 0.5 when not, 0 when it names nothing."""
    if not known(chain["answer"]):
        return 0.0
    evidence = chain["hops"][-1]["evidence"] if chain["hops"] else []
    return 1.0 if any(agrees(chain["answer"], e["text"]) or agrees(chain["answer"], e["title"]) for e in evidence) else 0.5


def choose(chains: list[Chain]) -> int:
    """The index of the chain with the best score (probability times support); the first on ties."""
    return max(range(len(chains)), key=lambda i: (chains[i]["weight"] * support(chains[i]), -i))


@node("next_chain")
def next_chain(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    hops, draft = state.get("hops") or [], state.get("draft_answer") or ""
    done = Chain(hops=hops, draft_answer=draft, weight=float(state.get("weight", 1.0)), status="done", answer=chain_answer(hops, draft))
    chains = [*(state.get("chains") or []), done]
    waiting = [i for i, c in enumerate(chains) if c["status"] == "open"]
    if waiting:
        follow = chains.pop(max(waiting, key=lambda i: (chains[i]["weight"], -i)))
        return {"chains": chains, "hops": follow["hops"], "draft_answer": "", "weight": follow["weight"], "sub_question": ""}
    best = choose(chains)
    if len(chains) == 1:
        return {"chains": chains, "chosen": best}
    chosen = chains[best]
    return {"chains": chains, "chosen": best, "hops": chosen["hops"], "draft_answer": chosen["draft_answer"], "weight": chosen["weight"]}
