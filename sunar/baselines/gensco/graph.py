"""GenSco, one of the other systems beside SUNAR: greedy passage selection guided by a
step-by-step decomposition, as an explicit LangGraph state machine.

    ask -> pool -> propose --(sub-question)--> candidates --(some)--> select --> propose ...  (gensco)
                                                                 +--> stop_check --> propose ...
                                                                                    (gensco_stop)
    propose / candidates / stop_check --(halt)--> answer -> confidence -> respond

Variants:
  gensco       GenSco-max: stops on the generator's end keyword, a repeated sub-question, no
               candidate left, or the hop limit ``max_hops``
  gensco_stop  the same, and also when the scorer LLM's log-likelihood of the whole question given
               the decomposition so far stops improving

The generator is ``llm``; the scorer is ``likelihood_llm`` (default: the same model), which must
return log-likelihoods of a given text (``embedded:<name>``; Ollama cannot). GenSco's own settings
are :class:`~sunar.baselines.gensco.configuration.GenscoConfiguration`, the graph's context schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.graph import END, START, StateGraph

from sunar.baselines.gensco.configuration import GenscoConfiguration
from sunar.baselines.gensco.nodes import answer, candidates, pool, propose, select, stop_check
from sunar.baselines.gensco.state import GenScoState, PoolInput
from sunar.configuration import SUNAR_ONLY
from sunar.errors import SunarError
from sunar.nodes.ask import make_ask
from sunar.nodes.confidence import make_confidence
from sunar.nodes.respond import respond
from sunar.state import OutputState
from sunar.streaming import describe_common

#: variant -> whether the question's log-likelihood decides when to stop
VARIANTS: dict[str, bool] = {"gensco": False, "gensco_stop": True}
#: GenSco's own per-question fields, cleared when a new question starts on a thread.
FRESH = {"pool": [], "sub_question": "", "candidates": [], "question_loglik": [], "halt": ""}


def unless_halted(target: str) -> Callable[[dict[str, Any]], str]:
    """An edge to ``target``, or to the answer once a node has stopped the selection."""

    def route(state: dict[str, Any]) -> str:
        return "answer" if state.get("halt") else target

    route.__name__ = f"to_{target}_unless_halted"
    return route


def build_gensco(variant: str = "gensco", checkpointer: Any = None) -> Any:
    """Compile GenSco's graph for ``variant`` (see the module docstring)."""
    if variant not in VARIANTS:
        raise SunarError(f"unknown GenSco variant '{variant}'; choose one of: {', '.join(VARIANTS)}")
    by_likelihood = VARIANTS[variant]
    g = StateGraph(GenScoState, context_schema=GenscoConfiguration, input_schema=PoolInput, output_schema=OutputState)
    g.add_node("ask", make_ask(FRESH))
    g.add_node("pool", pool)
    g.add_node("propose", propose)
    g.add_node("candidates", candidates)
    g.add_node("select", select)
    g.add_node("answer", answer)
    g.add_node("confidence", make_confidence(variant, GenscoConfiguration, unread=SUNAR_ONLY))
    g.add_node("respond", respond)

    g.add_edge(START, "ask")
    g.add_edge("ask", "pool")
    g.add_edge("pool", "propose")
    g.add_conditional_edges("propose", unless_halted("candidates"), ["candidates", "answer"])
    g.add_conditional_edges("candidates", unless_halted("select"), ["select", "answer"])
    if by_likelihood:
        g.add_node("stop_check", stop_check)
        g.add_edge("select", "stop_check")
        g.add_conditional_edges("stop_check", unless_halted("propose"), ["propose", "answer"])
    else:
        g.add_edge("select", "propose")
    g.add_edge("answer", "confidence")
    g.add_edge("confidence", "respond")
    g.add_edge("respond", END)
    return g.compile(checkpointer=checkpointer, name=variant)


def describe_step(node: str, update: dict[str, Any], state: dict[str, Any]) -> str | None:
    """One line for a GenSco node's state update, as ``sunar ask --stream`` shows it."""
    if node == "propose":
        if update.get("sub_question"):
            return f"sub-question: {update['sub_question']}"
        return f"selection stopped ({update.get('halt') or 'done'})"
    if node == "pool" and "pool" in update:
        return f"{len(update['pool'])} passages in the pool"
    if node == "candidates" and update.get("candidates"):
        return f"{len(update['candidates'])} candidate passages: " + ", ".join(c["title"] for c in update["candidates"])
    if node == "select":
        hop = (update.get("hops") or [{}])[-1]
        chosen = (hop.get("evidence") or [{}])[0]
        return f"chose {chosen.get('title')!r} (log-likelihood {chosen.get('score', 0.0):.2f})"
    if node == "stop_check" and update.get("question_loglik"):
        verdict = "stopped: no gain" if update.get("halt") == "no_gain" else "goes on"
        return f"log P(question | decomposition) = {update['question_loglik'][-1]:.2f}; {verdict}"
    return describe_common(node, update)

