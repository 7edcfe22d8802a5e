"""The SUNAR graphs: Algorithm 1 of the paper as an explicit LangGraph state machine.

    ask -> decompose --(follow-up sq_i)--> retrieve -> select_batch -> sample_answers -> cluster
             ^                                            ^              -> rescore -> update
             |                                            +-(|R+| < c, C ∪ N not empty, not stalled)
             +------------------------------ answer_hop <---------------(otherwise)
    decompose --(done)--> gather -> mer (or conclude) -> confidence -> respond

Variants share the nodes and differ in structure:
  sunar         everything
  sunar_no_asu  no answer sampling / clustering / rescoring (select_batch -> update)
  sunar_r       NAR only: no ASU and no MER (Self-Ask's own final answer)
  self_ask      first stage + scorer re-ranking per sub-question: no neighbour graph, no ASU, no MER
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from sunar.config import Configuration
from sunar.nodes.answer_hop import answer_hop
from sunar.nodes.ask import ask
from sunar.nodes.cluster import cluster
from sunar.nodes.conclude import conclude
from sunar.nodes.confidence import confidence
from sunar.nodes.decompose import decompose
from sunar.nodes.gather import gather
from sunar.nodes.mer import mer
from sunar.nodes.rescore import rescore
from sunar.nodes.respond import respond
from sunar.nodes.retrieve import retrieve
from sunar.nodes.sample_answers import sample_answers
from sunar.nodes.select_batch import nar_goes_on, select_batch
from sunar.nodes.update import make_update
from sunar.state import InputState, OutputState, SunarState


@dataclass(frozen=True)
class Variant:
    asu: bool  # answer sampling + NLI clustering + rescoring
    mer: bool  # Meta Evidence Reasoner
    graph: bool  # neighbour graph (NAR); off: first-stage re-ranking only


VARIANTS: dict[str, Variant] = {
    "sunar": Variant(asu=True, mer=True, graph=True),
    "sunar_no_asu": Variant(asu=False, mer=True, graph=True),
    "sunar_r": Variant(asu=False, mer=False, graph=True),
    "self_ask": Variant(asu=False, mer=False, graph=False),
}


def after_decompose(state: dict[str, Any]) -> str:
    return "retrieve" if state.get("sub_question") else "gather"


def after_retrieve(state: dict[str, Any], config: RunnableConfig) -> str:
    cfg = Configuration.from_runnable_config(config)
    return "select_batch" if nar_goes_on(state, cfg) else "answer_hop"


#: The other systems of the source papers, built from their own nodes (sunar.graph.gensco,
#: sunar.graph.ra_isf) on the same stores, models and configuration.
OTHER_GRAPHS: dict[str, str] = {
    "gensco": "sunar.graph.gensco:build_gensco",
    "gensco_stop": "sunar.graph.gensco:build_gensco",
    "ra_isf": "sunar.graph.ra_isf:build_ra_isf",
}
#: Every graph a user can pick with --variant / --variants.
GRAPH_NAMES: tuple[str, ...] = (*VARIANTS, *OTHER_GRAPHS)


def build_graph(variant: str = "sunar", checkpointer: Any = None) -> Any:
    """Compile the named graph: a SUNAR variant (see the module docstring) or another system."""
    if variant in OTHER_GRAPHS:
        import importlib

        module, _, builder = OTHER_GRAPHS[variant].partition(":")
        return getattr(importlib.import_module(module), builder)(variant, checkpointer=checkpointer)
    v = VARIANTS[variant]
    g = StateGraph(SunarState, context_schema=Configuration, input_schema=InputState, output_schema=OutputState)
    g.add_node("ask", ask)
    g.add_node("decompose", decompose)
    g.add_node("retrieve", retrieve)
    g.add_node("select_batch", select_batch)
    g.add_node("update", make_update(use_graph=v.graph))
    g.add_node("answer_hop", answer_hop)
    g.add_node("gather", gather)
    g.add_node("final", mer if v.mer else conclude)
    g.add_node("confidence", confidence)
    g.add_node("respond", respond)

    g.add_edge(START, "ask")
    g.add_edge("ask", "decompose")
    g.add_conditional_edges("decompose", after_decompose, ["retrieve", "gather"])
    g.add_conditional_edges("retrieve", after_retrieve, ["select_batch", "answer_hop"])
    if v.asu:
        g.add_node("sample_answers", sample_answers)
        g.add_node("cluster", cluster)
        g.add_node("rescore", rescore)
        g.add_edge("select_batch", "sample_answers")
        g.add_edge("sample_answers", "cluster")
        g.add_edge("cluster", "rescore")
        g.add_edge("rescore", "update")
    else:
        g.add_edge("select_batch", "update")
    g.add_conditional_edges("update", after_retrieve, ["select_batch", "answer_hop"])  # NAR loop
    g.add_edge("answer_hop", "decompose")  # next sub-question
    g.add_edge("gather", "final")
    g.add_edge("final", "confidence")
    g.add_edge("confidence", "respond")
    g.add_edge("respond", END)
    return g.compile(checkpointer=checkpointer, name=variant)


# Named graphs for langgraph.json / LangGraph Studio.
sunar = build_graph("sunar")
sunar_no_asu = build_graph("sunar_no_asu")
sunar_r = build_graph("sunar_r")
self_ask = build_graph("self_ask")
