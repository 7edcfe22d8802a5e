"""MER, the Meta Evidence Reasoner: one LLM call with the original question, the whole reasoning
path and the gathered evidence; a rationale after "[Answer]:", the answer after "[Final Answer]:"."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from sunar import prompts
from sunar.config import Configuration
from sunar.nodes.text import UNKNOWN, clean_answer
from sunar.runtime import node, resources

_FINAL = re.compile(r"\[final answer\]\s*:?|final answer\s*:", re.IGNORECASE)
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
    llm = resources(config).llm
    messages = prompts.mer_messages(state["question"], path, state.get("evidence") or [])
    reply = str(llm.generate(messages, temperature=0.0, max_tokens=cfg.max_tokens, config=config).content)
    rationale, answer, well_formed = parse_mer(reply)
    if well_formed and answer != UNKNOWN:
        return {"answer": answer, "rationale": rationale}
    # No usable final answer (cut off by the token limit, the format forgotten, or nothing after
    # the marker while the rationale has one): ask for it once.
    follow_up = HumanMessage(prompts.MER_FINAL_ONLY.format(question=state["question"]))
    again = str(llm.generate([*messages, AIMessage(reply), follow_up], temperature=0.0, max_tokens=32, config=config).content)
    retried = parse_mer(again)[1] if _FINAL.search(again) else clean_answer(again.strip().splitlines()[0] if again.strip() else "")
    answer = retried if retried != UNKNOWN else answer
    rationale = rationale if well_formed else _RATIONALE.sub("", reply).strip()
    return {"answer": answer, "rationale": rationale, "notes": ["MER gave no usable final answer; asked again for the short answer"]}
