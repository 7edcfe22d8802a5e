"""Which of S's hops one cut reading would mark, beside the triggers S has: a development run's recorded
hops retrieved again and read once more, cut short and reversed.

Usage::

    python -m benchmarks.bench_hop_triggers evals/results/RUN --variant VARIANT --index INDEX_DIR [--data DIR]
        [--llm embedded:qwen2.5-1.5b] [--questions N] [--out benchmarks/results/hop-triggers/results.json]

``hop_support=escalate_uncertain`` sends a larger model the hops the judge doubts or whose temperature
samples split; on S's dev 1-100 run that is 20 of 32 wrong first bridges, and almost none of the later
hops that read a wrong answer (``benchmarks/RESULTS.md``). On the reading benchmark, the pages cut to
their most relevant sentences and read in other orders split on every misread first step
(``benchmarks.bench_reading_sentences``): the product's ``hop_reading=sentences``, which with
``hop_samples=1`` reads one such order, reversed. This asks what that one reading would mark on the hops
S actually took. Each hop of the chain shown (its sub-question, answer, candidates and the judge's
P(yes), as recorded) is retrieved again as the variant retrieves it (NAR with the run's settings, no LLM
call), its top l pages cut (:func:`sunar.sentences.cut_to_sentences`) and read greedily reversed
(:func:`sunar.hop_support.read_from`), and the reading is clustered with the hop's answer by the
product's NLI: the hop is marked when they fall into two semantic sets that name something. Where they
do, the support judge also rates the cut reading's answer against the pages the hop read, as the hop's
own answer was rated: would the hop do better taking the cut answer when it is judged better supported?

A first hop is right when its answer holds the data's first step (or is held by it), a question when its
final answer holds the gold (cover-EM). Reported: for first hops, how many wrong and right bridges each
trigger marks, and their unions (what ``escalate_uncertain`` would send with the cut reading as its
split); for later hops after a right first bridge, the same by whether the question ended right; whether
the data's first bridge is on the first hop's pages at all; the cut reading's seconds; and, per set of
hops allowed to take it (:data:`POLICIES`), what taking a better-judged cut answer would change against
the data's step (a first hop's first step, a longer chain's last hop's gold answer: :func:`step_gold`). For
development runs only (dev 1-100). Resumable: a question already in ``--out`` is not read again. With
``--acting`` it prints the dev questions whose chain shown it would change (:func:`acting`), to run again
with and without ``hop_support=cut``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from benchmarks import add_chain_arguments, chains_of, data_dir, kept, resumed
from benchmarks.bench_focus import first_steps
from benchmarks.bench_nar_stop import nar_graph
from benchmarks.results_confidence import first_hop_right
from sunar.configuration import Configuration
from sunar.evals.run import variant_settings
from sunar.nar import top
from sunar.prompts.answer import answer_from
from sunar.prompts.support import LABELS, judged_better, p_yes, support_messages
from sunar.sentences import cut_to_sentences, in_other_orders
from sunar.signals import agrees, fits_kind, known
from sunar.state import evidence_of
from sunar.text import focus

#: The triggers compared: each marks a hop from its judge's P(yes), whether its samples split, and
#: whether the cut reading disagrees.
TRIGGERS: dict[str, Callable[[float | None, bool, bool], bool]] = {
    "the judge doubts it (P(yes) < 0.5)": lambda p, split, cut: p is not None and p < 0.5,
    "its samples split": lambda p, split, cut: split,
    "the cut reading disagrees": lambda p, split, cut: cut,
    "judge or samples (`escalate_uncertain` today)": lambda p, split, cut: (p is not None and p < 0.5) or split,
    "judge or cut reading": lambda p, split, cut: (p is not None and p < 0.5) or cut,
    "judge, samples or cut reading": lambda p, split, cut: (p is not None and p < 0.5) or split or cut,
}


def split_samples(hop: Mapping[str, Any]) -> bool:
    """Whether a recorded hop's answers fell into more than one semantic set that names something."""
    return len([c for c in hop.get("candidates") or [] if known(c["answer"])]) > 1


def hop_pages(graph: Any, res: Any, settings: Mapping[str, Any], question: str) -> list[dict[str, Any]]:
    """A sub-question's top l pages as the variant's NAR finds them (no LLM call)."""
    cfg = Configuration.resolve(dict(settings))
    state = graph.invoke({"question": question, "sub_question": question}, {"configurable": {"resources": res, **settings}})
    scored = state.get("scored") or {}
    return [dict(e) for e in evidence_of(res.index.documents(top(scored, cfg.evidence)), scored)]


def variant_resources(args: argparse.Namespace) -> tuple[Configuration, Any]:
    """What the run's ``--variant`` ran with (:func:`benchmarks.add_chain_arguments`): the run's recorded
    settings with the variant's switches, ``--llm`` and ``--index``; and its resources (the index, its
    scorer, the LLM and the NLI the settings name)."""
    from sunar.models.nli import make_nli
    from sunar.models.providers import make_llm
    from sunar.models.scorer import make_scorer
    from sunar.resources import Resources
    from sunar.stores.index import Index

    recorded = json.loads((args.run / "run.json").read_text())["configuration"]
    cfg = Configuration.resolve({**Configuration.known(recorded), **variant_settings(args.variant), "llm": args.llm, "index_dir": str(args.index)})
    index = Index(args.index)
    llm = make_llm(args.llm)
    return cfg, Resources(llm, make_scorer(cfg.scorer, index.embedder), make_nli(cfg.nli, llm), index)


def read_hop(hop: Mapping[str, Any], pages: Sequence[Mapping[str, Any]], res: Any, cfg: Configuration,
             disagree: Callable[[str, str, str], bool]) -> dict[str, Any]:
    """One recorded hop read again from its pages cut short, reversed: the reading, whether it disagrees
    with the hop's answer, and its seconds; where it disagrees, P(yes) that the pages the hop read state it
    (:func:`judge_cut`)."""
    from sunar.hop_support import read_from

    shortened = cut_to_sentences(hop["question"], list(pages), res.scorer.score, cfg.hop_sentences)
    start = time.perf_counter()
    reply = read_from(in_other_orders(shortened)[0], hop["question"], res.llm, cfg, {})
    seconds = time.perf_counter() - start
    cut = answer_from(str(reply.content), hop["question"], list(pages))
    row = {"question": hop["question"], "answer": hop["answer"], "cut": cut, "support": hop.get("support"),
           "split": split_samples(hop), "disagrees": disagree(hop["question"], str(hop["answer"]), cut), "seconds": round(seconds, 3)}
    return judge_cut(row, pages, res, cfg)


def differs(row: Mapping[str, Any]) -> bool:
    """Whether a hop's cut reading names something its answer does not hold, nor holds it, of a kind its
    sub-question asks for (the product's test before it judges another reading, :func:`sunar.signals.agrees`
    and :func:`sunar.signals.fits_kind`; the NLI may still find the two alike)."""
    return known(row["cut"]) and not agrees(row["cut"], str(row["answer"])) and fits_kind(str(row["question"]), row["cut"])


def taken(row: Mapping[str, Any]) -> bool:
    """Whether ``hop_support=cut`` takes a hop's cut reading: it :func:`differs` and the judge finds it better supported."""
    return differs(row) and judged_better(row.get("cut_support"), row["support"])


def judge_cut(row: dict[str, Any], pages: Sequence[Mapping[str, Any]], res: Any, cfg: Configuration) -> dict[str, Any]:
    """A hop's row with ``cut_support``: where the cut reading :func:`differs`, P(yes) from the support judge
    that the pages the hop read (the named ones, with ``focus_pages``) state it, as the hop's answer was judged."""
    if not differs(row) or "cut_support" in row:
        return row
    read = focus(row["question"], list(pages)) if cfg.focus_pages else list(pages)
    return {**row, "cut_support": p_yes(res.llm.judge(support_messages(row["question"], row["cut"], read), LABELS))}


def read_record(record: Mapping[str, Any], first: str, find: Callable[[str], list[dict[str, Any]]],
                read: Callable[[Mapping[str, Any], Sequence[Mapping[str, Any]]], dict[str, Any]]) -> dict[str, Any]:
    """A record's hops of the chain shown, each read again; whether its first hop found the data's first
    bridge and whether that bridge is on the first hop's pages (a page's title, or in a page's text)."""
    path = record.get("reasoning_path") or []
    hops, bridge = [], {}
    for i, hop in enumerate(path):
        pages = find(hop["question"])
        hops.append(read(hop, pages))
        if i == 0:
            bridge = {"a title": any(agrees(p["title"], first) for p in pages), "in a text": any(first.lower() in p["text"].lower() for p in pages)}
    return {"question": record["question"], "right": bool(record["metrics"]["cover_em"]), "first_step": first, "golds": list(record["gold"]),
            "first_right": first_hop_right(dict(record), {record["id"]: first}), "bridge_on_pages": bridge, "hops": hops}


def marked(rows: Sequence[Mapping[str, Any]], hops: Callable[[Mapping[str, Any]], list[tuple[Mapping[str, Any], bool]]]) -> dict[str, Any]:
    """Per trigger, how many of the hops ``hops`` picks out of each row (each with its label) it marks,
    labelled wrong and right."""
    picked = [(h, ok) for r in rows for h, ok in hops(r)]
    out: dict[str, Any] = {"hops": len(picked), "wrong": sum(not ok for _, ok in picked)}
    for name, flags in TRIGGERS.items():
        hit = [ok for h, ok in picked if flags(h["support"], h["split"], h["disagrees"])]
        out[name] = {"wrong": sum(not ok for ok in hit), "right": sum(hit)}
    return out


#: Which hops may take their cut reading's answer: every hop, or those S's own triggers mark (the judge
#: doubts it or its samples split), each on all hops or first hops only.
POLICIES: dict[str, Callable[[int, Mapping[str, Any]], bool]] = {
    "every hop": lambda i, h: True,
    "a doubted or split hop": lambda i, h: h["split"] or (h["support"] is not None and h["support"] < 0.5),
    "a first hop": lambda i, h: i == 0,
    "a doubted or split first hop": lambda i, h: i == 0 and (h["split"] or (h["support"] is not None and h["support"] < 0.5)),
}


def step_gold(row: Mapping[str, Any], i: int) -> list[str] | None:
    """What a chain's i-th hop should answer: the data's first step for the first hop, the gold answers for
    the last hop of a longer chain; None for a hop between (no step of the data to hold it to)."""
    if i == 0:
        return [row["first_step"]]
    return list(row.get("golds") or []) if i == len(row["hops"]) - 1 else None


def switches(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per policy (:data:`POLICIES`): of the hops whose cut reading :func:`differs` and is judged better supported
    than the hop's answer (P(yes) above the hop's: ``hop_support=cut``'s rule), how many would take a right
    answer for a wrong one, a wrong for a right one, or neither, against the hop's step (:func:`step_gold`)."""
    out = {}
    for name, may in POLICIES.items():
        counts = {"read": 0, "taken": 0, "right for wrong": 0, "wrong for right": 0, "neither right": 0, "both right": 0, "no step": 0}
        for r in rows:
            for i, h in enumerate(r["hops"]):
                if not may(i, h):
                    continue
                counts["read"] += 1
                if not taken(h):
                    continue
                counts["taken"] += 1
                gold = step_gold(r, i)
                if gold is None:
                    counts["no step"] += 1
                    continue
                was, now = any(agrees(str(h["answer"]), g) for g in gold), any(agrees(h["cut"], g) for g in gold)
                counts[{(False, True): "right for wrong", (True, False): "wrong for right", (False, False): "neither right", (True, True): "both right"}[(was, now)]] += 1
        out[name] = counts
    return out


def summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """First hops labelled by the data's first step; later hops after a right first bridge labelled by
    the question's answer; where the first bridge is; the cut reading's median seconds."""
    judged = [r for r in rows if r["first_right"] is not None and r["hops"]]
    wrong_first = [r for r in judged if not r["first_right"]]
    return {
        "questions": len(rows),
        "first hops (labelled by the first step)": marked(judged, lambda r: [(r["hops"][0], bool(r["first_right"]))]),
        "later hops after a right first bridge (labelled by the answer)": marked([r for r in judged if r["first_right"]], lambda r: [(h, r["right"]) for h in r["hops"][1:]]),
        "wrong first bridges: the first step on their pages": {k: sum(bool(r["bridge_on_pages"].get(k)) for r in wrong_first) for k in ("a title", "in a text")},
        "wrong first bridges: the cut reading holds the first step": sum(agrees(r["hops"][0]["cut"], r["first_step"]) for r in wrong_first),
        "median seconds of a cut reading": statistics.median([h["seconds"] for r in rows for h in r["hops"]] or [0.0]),
        "the cut reading taken where it is judged better supported": switches(rows),
    }


def acting(rows: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The ids of the questions ``hop_support=cut`` acts on in the chain shown: a hop whose cut reading
    :func:`differs` and is judged better supported (a chain not shown is not looked at)."""
    return [i for i, r in rows.items() if any(taken(h) for h in r["hops"])]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_chain_arguments(p, "benchmarks/results/hop-triggers/results.json", "hops are read again")
    p.add_argument("--questions", type=int, default=None, help="the run's first N records only (default: all)")
    p.add_argument("--acting", action="store_true", help="print the dev questions (JSON lines) whose chain shown in --out the cut reading acts on, and stop")
    args = p.parse_args(argv)
    if args.acting:
        ids = set(acting(json.loads(args.out.read_text())["rows"]))
        lines = (data_dir(args.data) / "dev.jsonl").read_text(encoding="utf-8").splitlines()
        print("\n".join(line for line in lines if line.strip() and json.loads(line)["id"] in ids))
        return
    gold = first_steps(data_dir(args.data) / "dev.jsonl")
    records = chains_of(args.run, args.variant)[: args.questions]
    from sunar.models.nli import semantic_sets

    cfg, res = variant_resources(args)
    graph = nar_graph()

    def disagree(question: str, answer: str, cut: str) -> bool:
        sets = semantic_sets(question, [answer, cut], res.nli)
        return len([s for s in sets if known([answer, cut][s[0]])]) > 1

    done = resumed(args)
    for record in records:
        if record["id"] in done["rows"]:
            continue
        done["rows"][record["id"]] = read_record(record, gold[record["id"]], lambda q: hop_pages(graph, res, cfg.values(), q),
                                                 lambda hop, pages: read_hop(hop, pages, res, cfg, disagree))
        kept(done, args.out, summary)
    for record in records:  # rows read before the cut readings were judged, and their gold answers
        row = done["rows"][record["id"]]
        if "golds" not in row or any(differs(h) and "cut_support" not in h for h in row["hops"]):
            row["golds"] = list(record["gold"])
            row["hops"] = [judge_cut(h, hop_pages(graph, res, cfg.values(), h["question"]) if differs(h) else [], res, cfg) for h in row["hops"]]
            kept(done, args.out, summary)
    print(json.dumps(done.get("summary"), indent=1))


if __name__ == "__main__":
    main()
