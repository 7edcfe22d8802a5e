"""Retrieve-then-read (``rag``), the plain baseline both other papers measure against: GenSco's
"ranker + FS" (a ranking of the question's pool, the top passages to the same reader) and RA-ISF's
RAG (retrieve for the question, read once).

    ask -> pool -> rank -> answer -> confidence -> respond

The pool is GenSco's (the given ``pool_ids``, else the first stage of the question, ``gensco_pool``
deep) and so is the reader, so ``rag`` against ``gensco`` isolates GenSco's passage selection. Its
settings are GenSco's pool's (:class:`~sunar.baselines.gensco.configuration.PoolConfiguration`).
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from sunar.baselines.gensco import graph as gensco_graph
from sunar.baselines.gensco.configuration import PoolConfiguration
from sunar.baselines.gensco.nodes import answer, pool
from sunar.baselines.gensco.state import PoolInput, PoolState
from sunar.baselines.rag.nodes import rank
from sunar.configuration import SUNAR_ONLY
from sunar.nodes.ask import make_ask
from sunar.nodes.confidence import make_confidence
from sunar.nodes.respond import respond
from sunar.state import OutputState


def build_rag(variant: str = "rag", checkpointer: Any = None) -> Any:
    g = StateGraph(PoolState, context_schema=PoolConfiguration, input_schema=PoolInput, output_schema=OutputState)
    g.add_sequence([
        ("ask", make_ask({"pool": []})), ("pool", pool), ("rank", rank), ("answer", answer), ("confidence", make_confidence(variant, PoolConfiguration, unread=SUNAR_ONLY)), ("respond", respond),
    ])
    g.add_edge(START, "ask")
    g.add_edge("respond", END)
    return g.compile(checkpointer=checkpointer, name=variant)


def describe_step(node: str, update: dict[str, Any], state: dict[str, Any]) -> str | None:
    """One line for a node's state update, as ``sunar ask --stream`` shows it (the pool and the
    nodes every graph ends with as GenSco says them)."""
    if node == "rank":
        return "read: " + ", ".join(e["title"] for e in update.get("evidence") or []) if update.get("evidence") else "no passage to read"
    return gensco_graph.describe_step(node, update, state)
