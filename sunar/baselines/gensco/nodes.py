"""GenSco's nodes: greedy passage selection guided by a step-by-step decomposition.

    pool        the question's fixed candidate pool, once: the passages the caller gives
                (``pool_ids``: a dataset's own pool, as in the paper), else the first stage of
                the question, ``gensco_pool`` deep (the paper's setting over a whole corpus)
    propose     the generator writes the next sub-question, or the end keyword
    candidates  the pool's passages not chosen yet; more than ``gensco_candidates`` are pre-ranked
                by the scorer against the sub-question and the top ones kept
    select      the scorer LLM's log-likelihood of the sub-question given the chosen passages plus
                each candidate; the best candidate joins the selection
    stop_check  (gensco_stop) the scorer's log-likelihood of the whole question given the
                decomposition so far; a step that does not raise it is undone and selection stops
    answer      one generator call answers from the selected passage sequence

A node that ends the selection sets ``halt`` (with a note when it is a fall-back rather than the
generator's own end keyword); the graph's edges read it.
"""

from __future__ import annotations

import math
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from sunar.baselines.gensco import prompts
from sunar.baselines.gensco.configuration import GenscoConfiguration, PoolConfiguration
from sunar.baselines.gensco.prompts import ANSWER_SCHEMA, SCHEMA, parse_next, read_final
from sunar.configuration import Configuration
from sunar.prompts.answer import UNKNOWN, short_call
from sunar.resources import resources
from sunar.state import Batch, Evidence, Hop
from sunar.stores.corpus import Document
from sunar.text import normalize_answer
from sunar.usage import node


def steps_of(hops: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(sub-question, title, text) of every step: each hop holds the one passage chosen for it."""
    return [(h["question"], h["evidence"][0]["title"], h["evidence"][0]["text"]) for h in hops]


@node("propose")
def propose(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """The next sub-question from the generator, or the end of the selection: hop limit, the end
    keyword, a repeated sub-question or a broken reply. Before any passage is chosen, the end
    keyword and a broken reply fall back to the question itself, so something is retrieved."""
    cfg = Configuration.from_runnable_config(config)
    question, hops = state["question"], state.get("hops") or []
    if len(hops) >= cfg.max_hops:
        note = f"hop limit ({cfg.max_hops}) reached; answering from the {len(hops)} passage(s) selected"
        return {"sub_question": "", "halt": "hop_limit", "notes": [note]}
    reply = resources(config).llm.generate(
        prompts.next_messages(question, steps_of(hops)), temperature=0.0, stop=["\nPassage"], config=config,
        **short_call(cfg, SCHEMA, prompts.STEP_TOKENS),
    )
    kind, text = parse_next(str(reply.content))
    if kind == "sub_question":
        if normalize_answer(text) in {normalize_answer(h["question"]) for h in hops}:
            return {"sub_question": "", "halt": "repeat", "notes": [f"GenSco repeated a sub-question ({text!r}); selection stopped"]}
        return {"sub_question": text, "halt": ""}
    if not hops:
        why = "GenSco said it had enough before any passage" if kind == "enough" else f"GenSco's generator broke the format ({text[:80]!r})"
        return {"sub_question": question, "halt": "", "notes": [f"{why}; the question itself is used as the first sub-question"]}
    if kind == "enough":
        return {"sub_question": "", "halt": "enough"}
    return {"sub_question": "", "halt": "format", "notes": [f"GenSco's generator broke the format ({text[:80]!r}); selection stopped"]}


def best_passages(res: Any, query: str, passages: list[Evidence], k: int) -> list[Evidence]:
    """The ``k`` passages the scorer ranks highest for ``query``, with its scores (ties keep their order)."""
    scores = res.scorer.score(query, [Document(id=p["id"], title=p["title"], text=p["text"]) for p in passages])
    ranked = sorted(zip(passages, scores, strict=True), key=lambda pair: -pair[1])[:k]
    return [Evidence(**{**p, "score": float(s)}) for p, s in ranked]


@node("pool")
def pool(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """The question's candidate pool, fixed for the whole selection: the given ``pool_ids`` (in
    their order; ids the index lacks are noted and dropped), else the first stage of the question,
    ``gensco_pool`` deep. The given ids are used up, so a later question on the thread starts anew."""
    cfg = PoolConfiguration.from_runnable_config(config)
    res = resources(config)
    given = [str(i) for i in state.get("pool_ids") or []]
    if given:
        ids, source = list(dict.fromkeys(given)), "the given pool"
    else:
        ids, source = [doc_id for doc_id, _ in res.index.first_stage(state["question"], cfg.gensco_pool, cfg.first_stage)], "the first stage"
    docs = res.index.documents(ids)
    notes = [f"{len(ids) - len(docs)} of {len(ids)} passages of {source} are missing from the index"] if len(docs) < len(ids) else []
    if not docs:
        notes.append(f"{source} holds no passage for the question; answering without passages")
    found = [Evidence(id=d.id, title=d.title, text=d.text, score=0.0) for d in docs]
    return {"pool": found, "pool_ids": [], "notes": notes}


@node("candidates")
def candidates(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """The candidates of the step: the pool's passages not chosen yet. When there are more than
    ``gensco_candidates``, the project's scorer (the one NAR uses) pre-ranks them against the
    sub-question and the top ones are kept, so the costly log-likelihood passes go to the passages
    most likely to answer; otherwise all of them, in the pool's order, as in the paper."""
    cfg = GenscoConfiguration.from_runnable_config(config)
    chosen = {e["id"] for e in state.get("evidence") or []}
    left = [p for p in state.get("pool") or [] if p["id"] not in chosen]
    if not left:
        why = "is empty" if not state.get("pool") else "holds no passage that is not selected already"
        return {"candidates": [], "halt": "no_candidates", "notes": [f"the pool {why}; selection stopped"]}
    if len(left) <= cfg.gensco_candidates:
        return {"candidates": left, "halt": ""}
    return {"candidates": best_passages(resources(config), state["sub_question"], left, max(1, cfg.gensco_candidates)), "halt": ""}


@node("select")
def select(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """Score every candidate by the scorer LLM's log-likelihood of the sub-question given the
    chosen passages plus the candidate, and keep the best (ties: the better pre-ranked one)."""
    scorer = resources(config).likelihood
    sub_question, chosen = state["sub_question"], state.get("evidence") or []
    pool = state.get("candidates") or []
    if not pool:
        raise RuntimeError("select called without candidates")  # the edge guards this
    logliks = [scorer.loglik(prompts.score_messages([*chosen, c]), sub_question) for c in pool]
    usable = [v if math.isfinite(v) else -math.inf for v in logliks]  # NaN never wins
    best = max(range(len(pool)), key=lambda i: (usable[i], -i))
    pick = Evidence(**{**pool[best], "score": float(usable[best])})
    record = Batch(source="ranking", ids=[c["id"] for c in pool], scores=[float(v) for v in usable])
    hop = Hop(question=sub_question, answer=f"passage: {pick['title']}", evidence=[pick], batches=[record])
    return {"hops": [*(state.get("hops") or []), hop], "evidence": [*chosen, pick], "candidates": []}


@node("stop_check")
def stop_check(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """gensco_stop's criterion: log P(question | sub-questions and passages so far) from the scorer
    LLM. The first step sets the baseline; a later step that does not raise it is undone (its
    passage leaves the selection) and the selection stops."""
    hops, history = state.get("hops") or [], state.get("question_loglik") or []
    value = resources(config).likelihood.loglik(prompts.question_messages(steps_of(hops)), state["question"])
    if history and not value > history[-1]:  # NaN counts as no improvement
        undone = hops[-1]
        note = (
            f"the question's log-likelihood stopped improving ({value:.2f} <= {history[-1]:.2f}) with "
            f"{undone['question']!r}; that step was undone and selection stopped"
        )
        return {
            "hops": hops[:-1], "evidence": (state.get("evidence") or [])[:-1], "question_loglik": [*history, value],
            "halt": "no_gain", "notes": [note],
        }
    return {"question_loglik": [*history, value], "halt": ""}


@node("answer")
def answer(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """One generator call on the question and the selected passages in order. An empty reply is
    asked once more for the short answer; still empty, the answer is 'unknown'."""
    cfg = Configuration.from_runnable_config(config)
    llm = resources(config).llm
    messages = prompts.answer_messages(state["question"], state.get("evidence") or [])
    call = short_call(cfg, ANSWER_SCHEMA)
    reply = str(llm.generate(messages, temperature=0.0, config=config, **call).content)
    if found := read_final(reply):
        return {"answer": found}
    again = [*messages, AIMessage(reply), HumanMessage(prompts.ANSWER_AGAIN)]
    retry = str(llm.generate(again, temperature=0.0, config=config, **call).content)
    if found := read_final(retry):
        return {"answer": found, "notes": ["GenSco's final answer was empty; asked again for the short answer"]}
    return {"answer": UNKNOWN, "notes": ["GenSco's final answer was empty twice; the answer is unknown"]}
