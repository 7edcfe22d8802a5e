"""Decomposition: the next sub-question sq_i, or the end of the decomposition. Self-Ask writes each
follow-up after the answers so far; the second decomposition of a weak answer (``replan_below``,
:mod:`sunar.replan`) plans the questions at once and fills them in with the answers as they come
(:mod:`sunar.prompts.plan`). What a follow-up does (repeats a
step, goes round the last answer, ends on a bridge) is told by the rules of :mod:`sunar.follow_ups`."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from sunar.compare import about_a_side, hop_budget, of_its_kind, unfinished
from sunar.configuration import Configuration
from sunar.follow_ups import (
    FAULTS,
    builds_on,
    fault,
    loops_on_answer,
    new_rest,
)
from sunar.prompts.demonstrations import Demonstration, load_pool, retrieve
from sunar.prompts.plan import NUDGE as PLAN_NUDGE
from sunar.prompts.plan import fill, parse_plan, plan_format, plan_messages
from sunar.prompts.self_ask import (
    COMPARE_NUDGE,
    FINAL,
    FOLLOW_UP_ONLY,
    NUDGE,
    REPEAT_NUDGE,
    SCHEMA,
    STOP,
    bridge_nudge,
    parse_self_ask,
    self_ask_messages,
)
from sunar.resources import resources
from sunar.signals import whole_chain
from sunar.text import content_words, normalize_answer
from sunar.usage import node

#: How a note ends when a chain that ended on its bridge found no next step.
STANDS = "no next step was found, so it stands"


def past_bridge(
    question: str, hops: list[dict[str, Any]], messages: list[Any], config: RunnableConfig, cfg: Configuration, asked: set[str], said: str
) -> tuple[str, str]:
    """(the next follow-up, a note) for a chain of one hop that ended on its bridge: the
    question with the hop's part replaced by its answer (:func:`sunar.follow_ups.remaining`: it keeps the question's
    own relation and context); where that part is not found, the model asked once for a follow-up
    about the bridge (:func:`sunar.prompts.self_ask.bridge_nudge`), taken if it names the bridge and
    is new; else no follow-up, and the end stands. ``said`` begins the note (why it goes on)."""
    answer = str(hops[0]["answer"])
    if rest := new_rest(question, hops, asked):
        return rest, f"{said}; asked instead what the question still asks: {rest!r}"
    nudge = HumanMessage(bridge_nudge(answer, hops[0]["question"]))
    reply = resources(config).llm.generate([*messages, nudge], temperature=0.0, max_tokens=cfg.max_tokens, stop=STOP, schema=cfg.reply_schema(FOLLOW_UP_ONLY))
    kind, text = parse_self_ask(str(reply.content))
    if kind == "follow_up" and normalize_answer(text) not in asked and builds_on(text, hops) and not loops_on_answer(text, hops, question):
        return text, f"{said}; asked for the next step, it asked {text!r}"
    return "", f"{said}; {STANDS}"


def demonstrations_for(question: str, cfg: Configuration) -> list[Demonstration]:
    """The worked decompositions shown before ``question`` (``demonstrations``, from ``demonstration_pool``):
    of the pool's questions of its kind (a chain, a comparison, an inference: :func:`sunar.compare.of_its_kind`)."""
    return retrieve(question, of_its_kind(question, load_pool(cfg.demonstration_pool)), cfg.demonstrations) if cfg.demonstrations else []


def going_on(state: dict[str, Any], config: RunnableConfig, cfg: Configuration) -> tuple[str, str]:
    """(the next follow-up, a note) for a chain of one hop that asked only part of the question, when
    the judge doubts the final answer it led to (``unfit_answer=go_on``): the step :func:`past_bridge`
    finds after Self-Ask's end; ("", "") for any other chain."""
    question, hops = state["question"], state.get("hops") or []
    if len(hops) != 1 or whole_chain(question, hops) != 0.0 or cfg.max_hops < 2:
        return "", ""
    demos = demonstrations_for(question, cfg)
    ended = str(state.get("draft_answer") or state.get("answer") or "")
    messages = [*self_ask_messages(question, [(hops[0]["question"], hops[0]["answer"])], demos), AIMessage(f"{FINAL} {ended}")]
    said = went_on_note(str(state.get("answer") or ""), str(hops[0]["question"]))
    return past_bridge(question, hops, messages, config, cfg, {normalize_answer(hops[0]["question"])}, said)


def went_on_note(doubted: str, asked: str) -> str:
    """How the note begins when the doubted final answer's chain of one hop (it asked only ``asked``) goes on."""
    return f"the final answer {doubted!r} does not answer the question, and its chain asked only {asked!r}"


@node("decompose")
def decompose(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """Ask the LLM for the next Self-Ask step (or the plan's, :func:`planned`) and decide,
    deliberately, every way it can go wrong: hop limit, repeated follow-up, a follow-up that has left
    the chain, broken format, or a final answer before any retrieval."""
    cfg = Configuration.from_runnable_config(config)
    question, hops = state["question"], state.get("hops") or []
    if len(hops) >= (limit := hop_budget(question, cfg.max_hops)):
        return {"sub_question": "", "notes": [f"hop limit ({limit}) reached; answering from the evidence so far"]}
    demos = demonstrations_for(question, cfg)
    if state.get("replanned") == "pending":  # the check asked for a second, planned decomposition (replan_below)
        return {**planned(state, config, cfg, demos), "replanned": "planning"}
    if state.get("replanned") == "planning":
        return planned(state, config, cfg, demos)
    path = [(h["question"], h["answer"]) for h in hops]
    llm, messages = resources(config).llm, self_ask_messages(question, path, demos)
    schema = cfg.reply_schema(SCHEMA)
    reply = str(llm.generate(messages, temperature=0.0, max_tokens=cfg.max_tokens, stop=STOP, schema=schema).content)
    kind, text = parse_self_ask(reply)
    notes: list[str] = []
    asked = {normalize_answer(h["question"]) for h in hops}
    if problem := fault(kind, text, question, hops, asked):
        # Small models often echo the question, skip its hidden name, or ask again what was
        # answered: ask once more. A first follow-up sharing no word with the question copied the nudge.
        nudge = REPEAT_NUDGE if problem == "repeat" else NUDGE
        messages = [*messages, AIMessage(reply), HumanMessage(nudge)]
        retry = str(llm.generate(messages, temperature=0.0, max_tokens=cfg.max_tokens, stop=STOP, schema=schema).content)
        again, retried = parse_self_ask(retry)
        on_topic = bool(hops) or again != "follow_up" or bool(content_words(retried) & content_words(question))
        if again != "invalid" and on_topic and not fault(again, retried, question, hops, asked):
            kind, text = again, retried
            notes = [f"Self-Ask {FAULTS[problem]}; asked again and it gave a new step"]
        elif problem == "echo":
            notes = ["Self-Ask repeated the question; it is used as the first sub-question"]
        elif problem == "described":
            notes = [f"Self-Ask {FAULTS[problem]}; asked again, no better step, so it is kept"]
    if kind == "follow_up":
        if normalize_answer(text) in asked:
            return {"sub_question": "", "notes": [f"Self-Ask repeated a follow-up ({text!r}); decomposition stopped"]}
        if cfg.end_loops and loops_on_answer(text, hops, question):
            note = f"Self-Ask's follow-up {text!r} goes round the last answer; it is taken as the final answer"
            return {"sub_question": "", "draft_answer": hops[-1]["answer"], "notes": [*notes, note]}
        if 0 < cfg.chain_check_after <= len(hops) and not builds_on(text, hops) and not about_a_side(question, text):
            note = f"Self-Ask's follow-up {text!r} names none of the {len(hops)} answers found; decomposition stopped"
            return {"sub_question": "", "notes": [*notes, note]}
        return {"sub_question": text, "notes": notes}
    if not hops:
        # Nothing retrieved yet: retrieve for the question itself rather than answer unsupported.
        note = "Self-Ask answered without a follow-up" if kind == "final" else f"Self-Ask output broke the format ({text[:80]!r})"
        return {"sub_question": question, "notes": [f"{note}; the question itself is used as the only sub-question"]}
    if kind == "final" and unfinished(question, hops, limit):
        # small models compare by shortcut: before both sides' values are found, ask once for the next step
        nudge = [*messages, AIMessage(reply), HumanMessage(COMPARE_NUDGE)]
        again, step = parse_self_ask(str(llm.generate(nudge, temperature=0.0, max_tokens=cfg.max_tokens, stop=STOP, schema=cfg.reply_schema(FOLLOW_UP_ONLY)).content))
        if again == "follow_up" and normalize_answer(step) not in asked:
            return {"sub_question": step, "notes": [*notes, f"Self-Ask answered before both sides' values were found; asked for the next step, it asked {step!r}"]}
    if kind == "final":
        return {"sub_question": "", "draft_answer": text, "notes": notes}
    return {"sub_question": "", "notes": [f"Self-Ask output broke the format ({text[:80]!r}); decomposition stopped"]}


def ask_plan(question: str, demos: list[Demonstration], cfg: Configuration, config: RunnableConfig) -> tuple[list[str], list[str], str]:
    """(the planned questions, notes, the first reply). A plan whose first question repeats the
    question or describes a person without asking who is asked for once more, as Self-Ask's first
    step is; the new plan is taken unless it has the same fault or its first question shares no
    word with the question (it copied a worked example)."""
    llm, messages = resources(config).llm, plan_messages(question, demos)
    call = {"temperature": 0.0, "max_tokens": cfg.max_tokens, "config": config, "schema": cfg.reply_schema(plan_format(limit := hop_budget(question, cfg.max_hops)))}
    reply = str(llm.generate(messages, **call).content)
    plan = parse_plan(reply, limit)
    if not plan or not fault("follow_up", plan[0], question, [], set()):  # Self-Ask's first-step faults
        return plan, [], reply
    again = parse_plan(str(llm.generate([*messages, AIMessage(reply), HumanMessage(PLAN_NUDGE)], **call).content), limit)
    better = bool(again) and not fault("follow_up", again[0], question, [], set()) and bool(content_words(again[0]) & content_words(question))
    said = "a new plan" if better else "no better plan, so it is kept"
    return (again if better else plan), [f"the plan began with the question itself or a person it describes; asked again, {said}"], reply


def planned(state: dict[str, Any], config: RunnableConfig, cfg: Configuration, demos: list[Demonstration]) -> dict[str, Any]:
    """The plan's next question, filled in with the answers so far. The plan is asked for first,
    once per question: every chain follows it with its own answers."""
    question, hops = state["question"], state.get("hops") or []
    plan, update = list(state.get("plan") or []), {}
    if not plan and not hops:
        plan, notes, reply = ask_plan(question, demos, cfg, config)
        if not plan:
            note = f"the plan broke the format ({reply[:80]!r}); the question itself is used as the only sub-question"
            return {"plan": [question], "sub_question": question, "notes": [note]}
        update = {"plan": plan, **({"notes": notes} if notes else {})}
    if len(hops) >= len(plan):
        return {"sub_question": "", **update}
    return {"sub_question": fill(plan[len(hops)], [str(h["answer"]) for h in hops]), **update}
