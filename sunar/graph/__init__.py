"""The SUNAR graphs: Algorithm 1 of the paper as an explicit LangGraph state machine.

    ask -> decompose --(follow-up sq_i)--> retrieve -> [NAR loop] -> answer_hop -> decompose ...
    decompose --(done)--> next_chain --(a chain branched off an uncertain hop waits)--> decompose ...
    next_chain --(none waits: the best chain chosen)--> gather -> compare --(a comparison decided in code)--> check
    compare --(not decided)--> mer (or conclude) -> shorten -> check -> confidence -> respond
    check --(the answer does not answer the question, its chain of one hop goes on: unfit_answer)--> retrieve
    check --(its weakest link is weak, once: replan_below)--> decompose, planned at once; the check keeps the stronger answer

    NAR loop (one sub-question; sunar.nar holds its rules):
        select_batch -> sample_answers -> cluster -> rescore -> update --(goes on)--> select_batch
                     (ASU: answer sampling, semantic sets, rescoring)         --(ends)--> answer_hop
        select_batch -> update, when the batch is outranked (it cannot reach the evidence) or
                        ``asu_batches`` is off

    answer_hop samples the hop's own answers (``hop_samples``); when they fall into several semantic
    sets, the others wait in ``chains`` (``branch_width``, ``max_chains``). It judges whether the hop's
    pages state the answer it follows, and reads a doubted hop once more (``hop_support``,
    :mod:`sunar.hop_support`). ``shorten`` cleans the final answer up by rule (:mod:`sunar.nodes.shorten`).
    ``check`` judges whether it answers the whole question (``hop_support``); a doubted answer gives way
    to another the graph found, or its chain goes on (``unfit_answer``), and a weak one is tried again
    with a planned decomposition (``replan_below``, :mod:`sunar.replan`).

Variants share the nodes and differ in structure:
  sunar         everything
  sunar_no_asu  no answer sampling / clustering / rescoring, no judge (select_batch -> update)
  sunar_r       NAR only: no ASU, no judge and no MER (Self-Ask's own final answer)
  self_ask      first stage + scorer re-ranking per sub-question: no neighbour graph, no ASU, no judge, no MER

Every graph a user can pick (these and the baselines of :mod:`sunar.baselines`) is in
:data:`GRAPHS`; :func:`build_graph` compiles one by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from sunar.baselines.gensco import graph as gensco_graph
from sunar.baselines.ra_isf import graph as ra_isf_graph
from sunar.baselines.rag import graph as rag_graph
from sunar.compare import COMPARED, comparison, shape
from sunar.configuration import ASU_FIELDS, MER_FIELDS, SUNAR_ONLY, Configuration
from sunar.errors import SunarError
from sunar.nar import nar_goes_on, outranked
from sunar.nodes.answer_hop import make_answer_hop
from sunar.nodes.ask import make_ask
from sunar.nodes.check import make_check
from sunar.nodes.cluster import cluster
from sunar.nodes.compare import compare
from sunar.nodes.conclude import conclude
from sunar.nodes.confidence import make_confidence
from sunar.nodes.decompose import STANDS, decompose
from sunar.nodes.gather import gather
from sunar.nodes.mer import mer
from sunar.nodes.next_chain import next_chain
from sunar.nodes.rescore import rescore
from sunar.nodes.respond import respond
from sunar.nodes.retrieve import retrieve
from sunar.nodes.sample_answers import sample_answers
from sunar.nodes.select_batch import select_batch
from sunar.nodes.shorten import shorten
from sunar.nodes.update import make_update
from sunar.state import InputState, OutputState, SunarState
from sunar.streaming import describe_common


@dataclass(frozen=True)
class Variant:
    asu: bool  # answer sampling + NLI clustering + rescoring
    mer: bool  # Meta Evidence Reasoner
    graph: bool  # neighbour graph (NAR); off: first-stage re-ranking only

    def unread(self) -> frozenset[str]:
        """The configuration fields this variant's structure never reads (so they cannot change its answers)."""
        return (frozenset() if self.asu else ASU_FIELDS) | (frozenset() if self.mer else MER_FIELDS)


VARIANTS: dict[str, Variant] = {
    "sunar": Variant(asu=True, mer=True, graph=True),
    "sunar_no_asu": Variant(asu=False, mer=True, graph=True),
    "sunar_r": Variant(asu=False, mer=False, graph=True),
    "self_ask": Variant(asu=False, mer=False, graph=False),
}

#: SUNAR's own per-question fields, cleared when a new question starts on a thread.
FRESH = {"sub_question": "", "plan": [], "draft_answer": "", "batches": [], "chains": [], "weight": 1.0, "chosen": None, "judged": {},
         "went_on": False, "replanned": "", "first_try": {}, "compared": {}}


def after_decompose(state: dict[str, Any]) -> str:
    return "retrieve" if state.get("sub_question") else "next_chain"


def after_chain(state: dict[str, Any]) -> str:
    """The next chain's next step, or the final step once a chain is chosen."""
    return "decompose" if state.get("chosen") is None else "gather"


def after_check(state: dict[str, Any]) -> str:
    """The confidence step, the chain's next step when the check sent it on (``unfit_answer``), or a
    second, planned decomposition of the question (``replan_below``)."""
    if state.get("sub_question"):
        return "retrieve"
    return "decompose" if state.get("replanned") == "pending" else "confidence"


def after_compare(state: dict[str, Any]) -> str:
    """The check, when the comparison was decided in code; else the final step."""
    return "check" if state.get("compared") else "final"


def nar_edge(state: dict[str, Any], config: RunnableConfig) -> str:
    """Algorithm 1's loop: another batch, or the sub-question's answer."""
    return "select_batch" if nar_goes_on(state, Configuration.from_runnable_config(config)) else "answer_hop"


def asu_edge(state: dict[str, Any], config: RunnableConfig) -> str:
    """ASU for the batch, unless it is off or the batch is outranked already (:func:`sunar.nar.outranked`)."""
    cfg = Configuration.from_runnable_config(config)
    return "update" if not cfg.asu_batches or outranked(state, cfg) else "sample_answers"


def build_sunar(variant: str = "sunar", checkpointer: Any = None) -> Any:
    """Compile a SUNAR variant (see the module docstring)."""
    v = VARIANTS[variant]
    g = StateGraph(SunarState, context_schema=Configuration, input_schema=InputState, output_schema=OutputState)
    g.add_node("ask", make_ask(FRESH))
    g.add_node("decompose", decompose)
    g.add_node("retrieve", retrieve)
    g.add_node("answer_hop", make_answer_hop(sampling=v.asu))
    g.add_node("next_chain", next_chain)
    g.add_node("gather", gather)
    g.add_node("compare", compare)
    g.add_node("final", mer if v.mer else conclude)
    g.add_node("shorten", shorten)
    g.add_node("check", make_check(judging=v.asu))
    g.add_node("confidence", make_confidence(variant, unread=v.unread()))
    g.add_node("respond", respond)

    g.add_edge(START, "ask")
    g.add_edge("ask", "decompose")
    g.add_conditional_edges("decompose", after_decompose, ["retrieve", "next_chain"])
    g.add_conditional_edges("next_chain", after_chain, ["decompose", "gather"])

    # --- the NAR loop for one sub-question ------------------------------------------------
    g.add_node("select_batch", select_batch)
    g.add_node("update", make_update(use_graph=v.graph))
    g.add_conditional_edges("retrieve", nar_edge, ["select_batch", "answer_hop"])
    if v.asu:
        g.add_node("sample_answers", sample_answers)
        g.add_node("cluster", cluster)
        g.add_node("rescore", rescore)
        g.add_conditional_edges("select_batch", asu_edge, ["sample_answers", "update"])
        g.add_edge("sample_answers", "cluster")
        g.add_edge("cluster", "rescore")
        g.add_edge("rescore", "update")
    else:
        g.add_edge("select_batch", "update")
    g.add_conditional_edges("update", nar_edge, ["select_batch", "answer_hop"])
    # ---------------------------------------------------------------------------------------

    g.add_edge("answer_hop", "decompose")  # the next sub-question
    g.add_edge("gather", "compare")
    g.add_conditional_edges("compare", after_compare, ["check", "final"])
    g.add_edge("final", "shorten")
    g.add_edge("shorten", "check")
    g.add_conditional_edges("check", after_check, ["retrieve", "decompose", "confidence"])
    g.add_edge("confidence", "respond")
    g.add_edge("respond", END)
    return g.compile(checkpointer=checkpointer, name=variant)


def describe_step(node: str, update: dict[str, Any], state: dict[str, Any]) -> str | None:
    """One line for a SUNAR node's state update, as ``sunar ask --stream`` shows it."""
    batch = update.get("batch") or {}
    if node == "decompose":
        planned = "plan: " + " | ".join(update["plan"]) + "; " if update.get("plan") else ""
        if not state.get("hops") and (c := comparison(str(state.get("question") or ""))) is not None:
            planned = f"a comparison of {c.a!r} and {c.b!r} ({COMPARED[c.asks]}), decided in code on what each side's hops find; " + planned
        elif not state.get("hops") and shape(str(state.get("question") or "")) == "inference":
            planned = "an inference over family relations, asked one relation at a time; " + planned
        if update.get("sub_question"):
            return f"{planned}follow-up: {update['sub_question']}"
        return f"decomposition done{': ' + update['draft_answer'] if update.get('draft_answer') else ''}"
    if node == "retrieve":
        return f"first stage: {len(update.get('ranking') or [])} documents"
    if node == "select_batch":
        scores = ", ".join(f"{x:.2f}" for x in batch.get("scores") or [])
        return f"batch from {batch.get('source')}: {len(batch.get('ids') or [])} documents scored [{scores}]"
    if node == "sample_answers":
        return f"sampled answers: {batch.get('answers')}"
    if node == "cluster":
        return f"semantic sets: s = {len(batch.get('sets') or [])}"
    if node == "rescore":
        return "rescored: [" + ", ".join(f"{x:.2f}" for x in batch.get("rescored") or []) + "]"
    if node == "answer_hop":
        hop = (update.get("hops") or [{}])[-1]
        evidence = hop.get("evidence") or []
        if hop.get("read"):  # focus_pages: read from the pages the sub-question names
            titles = [e["title"] for e in evidence if e["id"] in hop["read"]]
            line = f"intermediate answer: {hop.get('answer')} (from {len(titles)} of {len(evidence)} documents, the pages it names: {', '.join(titles)})"
        else:
            line = f"intermediate answer: {hop.get('answer')} (from {len(evidence)} documents)"
        if hop.get("candidates"):
            sampled = f" of {len(hop['samples'])} answers" if hop.get("samples") else ""
            line += f"; candidates{sampled}: " + ", ".join(f"{c['answer']} ({c['share']:.0%})" for c in hop["candidates"])
        if "cut_read" in hop:  # hop_support=cut_uncertain
            line += f"; read again cut short: {hop['cut_read']!r} " + (f"taken for {hop['unsupported']!r}" if hop.get("unsupported") else "not taken")
        if hop.get("escalated"):
            kept = "kept" if hop["escalated"] == hop.get("answer") else f"replaced by {hop.get('answer')!r}"
            line += f"; read again by the larger model: {hop['escalated']!r} {kept}"
        if hop.get("support") is not None:
            line += f"; its pages state it: p = {hop['support']:.2f}"
        return line
    if node == "next_chain":
        chains = update.get("chains") or []
        if update.get("chosen") is None:
            return f"next chain: the one that took {(update.get('hops') or [{}])[-1].get('answer')!r} (p = {update.get('weight', 0):.2f})"
        if len(chains) > 1:
            return f"{len(chains)} chains: " + "; ".join(f"{c['answer']} (p = {c['weight']:.2f})" for c in chains) + f"; chose {update['chosen'] + 1}"
        return None
    if node == "check" and update.get("acted") == "went_on":
        return f"the answer does not answer the question; its chain goes on: {update['sub_question']}"
    if node == "check" and update.get("acted") == "chose":
        return f"the answer does not answer the question; another found does: {update['answer']}"
    if node == "check" and update.get("acted") == "escalated":
        return f"the answer does not answer the question; read again by the larger model: {update.get('answer', 'kept')}"
    if node == "check" and update.get("replanned") == "pending":
        return f"the answer's weakest link is weak: the question is decomposed again, planned at once (first answer: {update['first_try'].get('answer')})"
    if node == "check" and update.get("replanned") == "done":
        return "of the two decompositions' answers, " + ("the planned one is kept" if update.get("acted") == "replanned" else f"the first is kept: {update.get('answer')}")
    if node == "check" and update.get("acted") == "stands":
        return f"the answer does not answer the question; {STANDS}"
    if node == "compare" and update.get("compared"):
        return (update.get("notes") or [""])[0]
    if node == "shorten" and update.get("answer"):  # what each rule did, in its note
        return f"answer now {update['answer']}: {'; '.join(update.get('notes') or [])}"
    return describe_common(node, update)


@dataclass(frozen=True)
class GraphKind:
    build: Callable[..., Any]
    describe: Callable[[str, dict[str, Any], dict[str, Any]], str | None]
    answer_node: str | None  # the node whose LLM tokens are the final answer (streamed live)
    pooled: bool = False  # takes a question's own candidate passages (input ``pool_ids``)


#: Every graph a user can pick with --variant / --variants, in Studio, or in the eval harness.
GRAPHS: dict[str, GraphKind] = {
    **{name: GraphKind(build_sunar, describe_step, "final") for name in VARIANTS},
    **{name: GraphKind(gensco_graph.build_gensco, gensco_graph.describe_step, "answer", pooled=True) for name in gensco_graph.VARIANTS},
    "ra_isf": GraphKind(ra_isf_graph.build_ra_isf, ra_isf_graph.describe_step, None),
    "rag": GraphKind(rag_graph.build_rag, rag_graph.describe_step, "answer", pooled=True),
}
GRAPH_NAMES: tuple[str, ...] = tuple(GRAPHS)


def unread_fields(name: str) -> frozenset[str]:
    """The configuration fields the named graph never reads: they cannot change its answers, so its
    calibration does not compare them (a baseline never reads SUNAR's own)."""
    return VARIANTS[name].unread() if name in VARIANTS else SUNAR_ONLY


def check_graph(name: str) -> str:
    if name not in GRAPHS:
        raise SunarError(f"unknown variant '{name}'; choose one of: {', '.join(GRAPH_NAMES)}")
    return name


def build_graph(name: str = "sunar", checkpointer: Any = None) -> Any:
    """Compile the named graph: a SUNAR variant or a baseline."""
    return GRAPHS[check_graph(name)].build(name, checkpointer=checkpointer)

