"""The pages a reply cites: first those its reasoning used, marked, then the rest of the evidence.

A page is *used* by a step when the step's answer was read from it:

- a hop of the reasoning path (``hops``, the chosen chain's) used the pages it read its answer
  from (``read``, with ``focus_pages``, when it read fewer than all its pages); else its
  top-scored page that holds its answer (:func:`holds`: the answer's words are in the page's title
  or text); else, no page holding it, its top-scored page. A hop that found no answer ("unknown")
  used no page.
- the final step (MER's, or the answer step's of a graph without MER) used the top-scored page
  of the final evidence (``evidence``) that holds the final answer, if one does.

The used pages come first, each once, in path order (step 1's, step 2's, ..., the final step's),
then the rest of ``evidence`` in its own order. A used page the final evidence left out (a hop's
page the re-ranking against the question dropped) is cited all the same, with the hop's record.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sunar.signals import contains, known
from sunar.state import Cited


def holds(page: dict[str, Any], answer: str) -> bool:
    """Whether the page states ``answer``: its normalised words are in the page's title or text."""
    return any(contains(str(page.get(k) or ""), answer) for k in ("title", "text"))


def best_holding(pages: Sequence[dict[str, Any]], answer: str) -> dict[str, Any] | None:
    """The top-scored page holding ``answer`` (the first on ties), or None."""
    holding = [p for p in pages if holds(p, answer)]
    return max(holding, key=lambda p: float(p.get("score") or 0.0)) if holding else None


def hop_pages(hop: dict[str, Any]) -> list[dict[str, Any]]:
    """The pages a hop read its answer from (the rule of the module docstring)."""
    pages = hop.get("evidence") or []
    if not pages or not known(str(hop.get("answer") or "")):
        return []
    if hop.get("read"):
        return [p for p in pages if p["id"] in hop["read"]]
    return [best_holding(pages, str(hop["answer"])) or max(pages, key=lambda p: float(p.get("score") or 0.0))]


def used_pages(state: dict[str, Any]) -> list[tuple[dict[str, Any], list[int], bool]]:
    """The pages the reasoning used, each once, in path order: (page, the 1-based steps of the
    reasoning path that used it, whether the final step did). A page in the final evidence is given
    as that evidence has it (its score against the question)."""
    final = {e["id"]: e for e in state.get("evidence") or []}
    used: dict[str, tuple[dict[str, Any], list[int], bool]] = {}
    for step, hop in enumerate(state.get("hops") or [], 1):
        for page in hop_pages(hop):
            steps = used.setdefault(page["id"], (final.get(page["id"], page), [], False))[1]
            if step not in steps:
                steps.append(step)
    answer = str(state.get("answer") or "")
    page = best_holding(list(final.values()), answer) if known(answer) else None
    if page is not None:
        record, steps, _ = used.get(page["id"], (page, [], False))
        used[page["id"]] = (record, steps, True)
    return list(used.values())


def cited(state: dict[str, Any]) -> list[Cited]:
    """The pages the reply cites, in the order of its ``[n]`` list: the used pages first, marked
    (``used``, ``steps``, ``final``), then the rest of the final evidence, no page twice."""
    out = [
        Cited(id=p["id"], title=p["title"], text=p["text"], score=float(p.get("score") or 0.0), used=True, steps=steps, final=final)
        for p, steps, final in used_pages(state)
    ]
    seen = {c["id"] for c in out}
    rest = [e for e in state.get("evidence") or [] if e["id"] not in seen]
    return out + [Cited(id=e["id"], title=e["title"], text=e["text"], score=e["score"], used=False, steps=[], final=False) for e in rest]


def used_words(page: Cited) -> str:
    """How a cited page was used, in words ("used by step 2 and the final answer"); "" when not used."""
    steps = [str(s) for s in page.get("steps") or []]
    parts = []
    if steps:
        parts.append(("step " if len(steps) == 1 else "steps ") + (steps[0] if len(steps) == 1 else ", ".join(steps[:-1]) + " and " + steps[-1]))
    if page.get("final"):
        parts.append("the final answer")
    return "used by " + " and ".join(parts) if parts else ""
