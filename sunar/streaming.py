"""Watching a graph run in the terminal (``sunar ask --stream``): one line per node as it
finishes, from the graph's own ``describe_step``, and the final answer's tokens as they come."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def describe_common(node: str, update: dict[str, Any]) -> str | None:
    """The lines of the nodes every graph ends with."""
    if node == "gather":
        return f"evidence for the final answer: {len(update.get('evidence') or [])} documents"
    if node in ("final", "answer", "finish") and "answer" in update:
        return f"final answer: {update.get('answer')}"
    if node == "confidence":
        if update.get("trust") is None:
            shown = f"sampled answers agreeing: {update.get('confidence', 0):.0%} ({update.get('confidence_basis', 'not calibrated')})"
        else:
            shown = f"confidence: {update['trust']:.0%} that the answer is right ({update.get('confidence_basis', 'calibrated')})"
        fits = (update.get("signals") or {}).get("answer_fits")
        shown += f"; it answers the question: p = {fits:.2f}" if fits is not None else ""
        return shown + (f"; I don't know, a best guess: {update.get('why')}" if update.get("abstained") else "")
    return None


def to_stderr(text: str) -> None:
    print(text, end="", file=sys.stderr, flush=True)


def stream_steps(
    graph: Any, payload: dict[str, Any] | None, config: dict[str, Any], describe: Callable[[str, dict[str, Any], dict[str, Any]], str | None],
    tokens_from: str | None = None, emit: Callable[[str], None] = to_stderr, **kwargs: Any
) -> dict[str, Any]:
    """Run the graph showing each step as it happens (``describe`` gets the node, its update and
    the state before it), and the tokens of the ``tokens_from`` node (the graph's final answer) as
    they are generated; return the final state. ``emit`` shows the text (default: on stderr); a
    step's line starts a new line after tokens."""
    out: dict[str, Any] = {}
    in_tokens = False
    for mode, item in graph.stream(payload, config, stream_mode=["updates", "messages", "values"], **kwargs):
        if mode == "values":
            out = item
        elif mode == "messages":
            chunk, meta = item
            if tokens_from and meta.get("langgraph_node") == tokens_from and isinstance(chunk.content, str) and chunk.content:
                emit(("" if in_tokens else f"[{meta['langgraph_node']}] ") + chunk.content)
                in_tokens = True
        else:
            for node, update in item.items():
                line = describe(node, update or {}, out)
                if line:
                    emit(("\n" if in_tokens else "") + f"[{node}] {line}\n")
                    in_tokens = False
    return out
