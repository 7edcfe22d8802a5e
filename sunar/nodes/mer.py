"""MER, the Meta Evidence Reasoner: one LLM call with the original question, the whole reasoning
path and the gathered evidence; a rationale after "[Answer]:", the answer after "[Final Answer]:"."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar import prompts
from sunar.config import Configuration
from sunar.nodes.text import clean_answer
from sunar.runtime import node, resources

_FINAL = re.compile(r"\[?final answer\]?\s*:", re.IGNORECASE)
_RATIONALE = re.compile(r"^\s*\[?answer\]?\s*:\s*", re.IGNORECASE)


def parse_mer(text: str) -> tuple[str, str, bool]:
    """(rationale, answer, well_formed). Without "[Final Answer]:" the last line is the answer."""
    parts = _FINAL.split(str(text), maxsplit=1)
    if len(parts) == 2:
        return _RATIONALE.sub("", parts[0]).strip(), clean_answer(parts[1]), True
    lines = [ln for ln in str(text).splitlines() if ln.strip()]
    if not lines:
        return "", clean_answer(""), False
    return _RATIONALE.sub("", " ".join(lines[:-1])).strip(), clean_answer(_RATIONALE.sub("", lines[-1])), False


@node("mer")
def mer(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    cfg = Configuration.from_runnable_config(config)
    path = [(h["question"], h["answer"]) for h in state.get("hops") or []]
    reply = resources(config).llm.generate(
        prompts.mer_messages(state["question"], path, state.get("evidence") or []),
        temperature=0.0,
        max_tokens=cfg.max_tokens,
        config=config,
    )
    rationale, answer, well_formed = parse_mer(str(reply.content))
    notes = [] if well_formed else ["MER reply had no '[Final Answer]:'; its last line was taken as the answer"]
    return {"answer": answer, "rationale": rationale, "notes": notes}
