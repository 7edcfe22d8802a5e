"""Markdown tables of outputs that keep no per-question records: a benchmark's ``results.json`` (its
raw rows) or ``output.txt``, and the ``metrics.json`` and ``run.json`` of runs from before the
predictions were committed. Read, not recomputed from answers; every figure still comes from a
committed file."""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Sequence
from pathlib import Path

from benchmarks.bench_scale import build_seconds, other_graph
from benchmarks.results_render import fmt, table, versus
from benchmarks.results_runs import Records, mean
from sunar.evals.metrics import paired_comparison


def probe_table(path: Path, graph: str = "`sunar`", scored_on: str = "dev 101-200") -> str:
    """A calibration with its probe on the LLM's hidden state (``sunar calibrate --probe``; the
    states need the model, so its check is stored: ``results.json``), fitted on ``graph``'s
    answers to dev 1-100 and scored on ``scored_on``."""
    data = json.loads(path.read_text())
    fitted, checked = data["fitted"], data["checked"]
    tried = fitted["probe_training"]["auroc_by_strength"]
    low, high = checked["auroc_95"]
    rows = [
        ["probe trained on (dev 1-100, every graph's distinct answers)", f"{fitted['probe_training']['answers']} answers to {fitted['probe_training']['questions']} questions"],
        ["probe alone, out of fold on those answers (best L2 strength)", fmt(max(tried.values()))],
        [f"signals + probe, cross-fitted on {graph}'s dev 1-100 answers", f"{fitted['mapping']['kind']}; {fmt(fitted['auroc_held_out'])}"],
        [f"**scored on {scored_on}: AUROC [95% bootstrap]**", f"**{fmt(checked['auroc'])} [{fmt(low)}, {fmt(high)}]**"],
        ["ECE of the probability shown", fmt(checked["ece"])],
        ["accuracy of the most trusted 25 / 50%", f"{fmt(checked['accuracy_at']['0.25'])} / {fmt(checked['accuracy_at']['0.5'])}"],
        ["answered at the trust level for at most 30% wrong", "none (no level kept it on dev 1-100)" if not checked["answered"] else f"{checked['answered']}"],
    ]
    return table([f"{graph} with the probe", ""], rows)


def rescoring_table(runs: Sequence[Path], variant: str = "sunar") -> str:
    """``variant`` in runs that differ in ``rescoring`` (their ``run.json`` configuration; unset is
    the paper's), from their own ``metrics.json``."""
    rows = []
    for run in runs:
        m = json.loads((run / "metrics.json").read_text())["all"][variant]
        rescoring = json.loads((run / "run.json").read_text())["configuration"].get("rescoring", "paper")
        rows.append([f"`{run.name}`", f"`{rescoring}`", m["n"], round(m["cover_em"] * m["n"]), fmt(m["em"], 3), fmt(m["recall@10"], 3),
                     fmt(m.get("llm_calls"), 1), fmt(m["seconds"]["total"], 0)])
    return table(["run", "`rescoring`", "n", f"`{variant}` right (cover-EM)", "EM", "R@10", "LLM calls", "recorded s / q"], rows)


def first_stage_table(path: Path) -> str:
    """First-stage recall of the gold paragraphs per query set and retriever (``bench_index``'s
    ``output.txt``): R@10 / R@100, and the milliseconds per query."""
    found: dict[str, dict[str, str]] = {}
    retrievers: list[str] = []
    row = re.compile(r"^\| (?P<set>[^|]+) \| (?P<name>\w+) \((?P<ms>[\d.]+) ms/query\) \| (?P<n>\d+) \| (?P<r10>[\d.]+) \| (?P<r100>[\d.]+) \|$")
    for line in path.read_text().splitlines():
        if m := row.match(line):
            retrievers += [m["name"]] if m["name"] not in retrievers else []
            found.setdefault(f"{m['set']} ({m['n']})", {})[m["name"]] = f"{m['r10']} / {m['r100']} ({float(m['ms']):.0f} ms)"
    return table(["query set", *(f"{name} R@10 / R@100 (ms / query)" for name in retrievers)],
                 [[name, *(cells.get(r, "-") for r in retrievers)] for name, cells in found.items()])


def judges_table(path: Path) -> str:
    """RA-ISF's three judges against the dev data's labels (``bench_ra_isf_judges`` results.json)."""
    data = json.loads(path.read_text())
    per_call = data.get("seconds_per_call", {})
    calls = {"self_knowledge": per_call.get("know"), "relevance": per_call.get("relevance"), "sufficiency": per_call.get("sufficient")}
    rows = []
    for judge, decisions in data["rows"].items():
        for d in decisions:
            lo, hi = d["accuracy_ci95"]
            blo, bhi = d["balanced_ci95"]
            rows.append([judge.replace("_", "-"), d["decision"], d["n"], f"{d['accuracy']:.3f} [{lo:.2f}, {hi:.2f}]",
                         f"{d['balanced_accuracy']:.2f} [{blo:.2f}, {bhi:.2f}]", fmt(d.get("auroc")), d["positives_found"], d["negatives_found"],
                         fmt(calls.get(judge)) if d.get("auroc") is not None and "LLM" in d["decision"] else "-"])
    dec = data.get("decomposition")
    if dec:
        rows.append(["decomposition", "LLM (as many sub-questions as the gold, first step half its content words)", dec["n"],
                     f"{dec['accuracy']:.3f} [{dec['ci95'][0]:.2f}, {dec['ci95'][1]:.2f}]", "-", "-", "-", "-", fmt(per_call.get("decompose"))])
    return table(["judge", "decision", "n", "accuracy [95% Wilson]", "balanced accuracy [95% bootstrap]", "AUROC", "positives found", "negatives found", "s / LLM call"], rows)


def nar_stop_table(path: Path) -> str:
    """NAR early stop (``bench_nar_stop`` results.json): per ``nar_patience``, means per sub-question."""
    data = json.loads(path.read_text())
    off = None
    rows = []
    for patience, items in sorted(data["rows"].items(), key=lambda kv: int(kv[0])):
        seconds = mean(i["seconds"] for i in items)
        off = seconds if off is None else off
        rows.append([patience + (" (off)" if patience == "0" else ""), len(items), fmt(mean(i["scored"] for i in items), 1), fmt(seconds, 1),
                     f"{seconds / off:.2f}x", f"{sum(bool(i['stopped_early']) for i in items)}/{len(items)}",
                     fmt(mean(i["recall@1"] for i in items), 3), fmt(mean(i["recall@10"] for i in items), 3)])
    return table(["`nar_patience`", "sub-questions", "documents scored", "scorer s", "vs off", "stopped early", "R@1", "R@10"], rows)


def scale_table(path: Path) -> str:
    """The index's cost curve in brief, per size and setting (``bench_scale``'s ``results.json``; its
    full tables, every stage and latency, are ``table.md`` beside it)."""
    results = json.loads(path.read_text())

    def stage(r: dict, key: str, memory: bool = True) -> str:
        s = r["stages"].get(key)
        return "-" if s is None else f"{s['seconds']:,.0f} s" + (f", {s['peak_mb']:,} MB" if memory else "")

    rows = []
    for key in sorted(results, key=lambda k: (results[k]["documents"], k)):
        r = results[key]
        other = other_graph(r)
        graphs = {r["graph_method"]: stage(r, "graph"), **({other[6:]: stage(r, other, False)} if other else {})}
        hnsw = r["recall"].get("hnsw")
        rows.append([f"{r['documents']:,}" + (", Chroma server" if "chroma_server" in r else ""), stage(r, "chroma"), stage(r, "bm25"),
                     graphs.get("exact", "not used (n squared)"), graphs.get("hnsw", "-"),
                     f"{hnsw['at_10']:.3f} / {hnsw['at_100']:.3f}" if hnsw else "-",
                     f"{build_seconds(r) / 60:.1f} min",
                     f"{r['read']['latency_ms']['first_stage']['median']:.1f} ms", f"{r['read']['peak_rss_mb']:,} MB"])
    return table(["documents", "Chroma insert", "BM25", "exact graph", "HNSW graph", "HNSW recall @10 / @100 of exact", "whole build",
                  "first stage per question (median)", "reader's peak memory"], rows)


def first_token_table(path: Path, skip: int = 1) -> str:
    """Seconds to the first step shown, the first token of the answer and the whole answer through
    ``serve-openai`` (``bench_first_token``'s ``results.json``), median over the questions after the
    first ``skip`` (which load the models)."""
    asked = json.loads(path.read_text())["questions"][skip:]

    def median(key: str) -> float:
        return statistics.median(q[key] for q in asked)

    after = statistics.median(q["answer"] - q["first_answer_token"] for q in asked)
    label = f"median of questions {skip + 1}-{skip + len(asked)} (models loaded)"
    return table(["", "first step shown", "first token of MER's answer", "whole answer", "answer after its first token"],
                 [[label, f"{median('first_step'):.1f} s", f"{median('first_answer_token'):.1f} s", f"{median('answer'):.1f} s", f"{after:.1f} s"]])


def reading_demos_table(path: Path) -> str:
    """A hop read with and without reading demonstrations (``bench_reading_demos``'s results.json): per
    metric, each way's right readings, and the demonstrations' wins and losses against the product's reading."""
    found = json.loads(path.read_text())["summary"]
    names = {"cover_em": "cover-EM", "em": "EM"}
    rows = [[names[metric], str(s["read"]), *(str(n) for n in s["right"].values()), versus(s)] for metric, s in found.items()]
    return table(["metric", "last steps read", "right as the product reads", "right after 2 reading demonstrations", "right / wrong where the product's reading was not (sign test p)"], rows)


def reading_orders_table(path: Path) -> str:
    """A hop's gold steps read in three orders (``bench_reading_orders``'s results.json): per step kind and
    metric, each order's right readings and their vote's, the vote against the first order, how often the
    orders split where the first reading was right and where it was wrong, and what a read costs."""
    found = json.loads(path.read_text())["summary"]
    seconds = found.pop("median seconds")
    names = {"cover_em": "cover-EM", "em": "EM"}
    rows = [[kind, names[metric], str(s["read"]), *(str(n) for n in s["right"].values()), versus(s), f"{s['split when right']} / {s['split when wrong']}"]
            for kind, metrics in found.items() for metric, s in metrics.items()]
    rows.append(["(median seconds a read)", "-", "-", *(f"{seconds[w]:.1f} s" for w in ("as ranked", "reversed", "rotated by 2")), "-",
                 f"a temperature sample of the first order's prompt: {seconds['a sample']:.1f} s", "-"])
    return table(["steps", "metric", "read", "right as ranked", "right reversed", "right rotated by 2", "right by the three's vote",
                  "vote: right / wrong where the first order was not (sign test p)", "orders split: first reading right / wrong"], rows)


def reading_sentences_table(path: Path) -> str:
    """A hop's gold steps read whole and from their pages cut to the most relevant sentences in three orders
    (``bench_reading_sentences``'s results.json): per step kind and metric, each way's right readings, the cut
    read as ranked against the whole, the vote of the whole reading and two cut orders against it, how often
    each signal splits where the whole reading was right and where it was wrong, and what a read costs."""
    found = json.loads(path.read_text())["summary"]
    seconds, kept = found.pop("median seconds"), found.pop("median share kept")
    names = {"cover_em": "cover-EM", "em": "EM"}
    signals = ("cut orders", "whole and two cut orders")
    rows = [[kind, names[metric], str(s["read"]), *(str(n) for n in s["right"].values()), versus(s["cut against whole"]), versus(s["vote against whole"]),
             *(f"{s['split when right'][k]} / {s['split when wrong'][k]}" for k in signals)]
            for kind, metrics in found.items() for metric, s in metrics.items()]
    rows.append([f"(median seconds a read; the cut keeps {kept:.0%} of the pages' characters)", "-", "-", *(f"{v:.1f} s" for v in seconds.values()),
                 "-", "-", "-", "-", "-"])
    return table(["steps", "metric", "read", "right whole", "right cut, as ranked", "right cut, reversed", "right cut, rotated by 2",
                  "right by the whole's and two cut orders' vote", "cut as ranked: right / wrong where the whole was not (sign test p)",
                  "the vote: right / wrong where the whole was not (sign test p)", "cut orders split: whole right / wrong",
                  "whole and two cut orders split: whole right / wrong"], rows)


def token_confidence_table(path: Path) -> str:
    """A hop's gold steps read greedily, the answer's token log-probabilities and the samples' agreement as
    signals (``bench_token_confidence``'s results.json): per step kind and metric, each signal's AUROC of
    right against wrong readings, on all of them and on those whose four answers agreed."""
    found = json.loads(path.read_text())["summary"]
    names = {"cover_em": "cover-EM", "em": "EM"}

    def shown(value: float | None, interval: list[float] | None = None) -> str:
        return "-" if value is None else f"{value:.2f}" + ("" if interval is None else f" [{interval[0]:.2f}, {interval[1]:.2f}]")

    rows = [[kind, names[metric], f"{s['read']} ({s['right']})", *(shown(s["auroc"][k]) for k in ("first", "least")),
             shown(s["auroc"]["mean"], s["mean interval"]), shown(s["auroc"]["agreement"]), f"{s['answers agreed']} ({s['right there']})",
             *(shown(s["auroc there"][k]) for k in ("first", "least")), shown(s["auroc there"]["mean"], s["mean interval there"])]
            for kind, metrics in found.items() for metric, s in metrics.items()]
    return table(["steps", "metric", "read (right)", "AUROC: first token", "AUROC: least token", "AUROC: mean token [95%]", "AUROC: samples' agreement",
                  "four answers agreed (right)", "there: first token", "there: least token", "there: mean token [95%]"], rows)


def focus_table(path: Path) -> str:
    """First sub-questions read from the pages they name in three orders (``bench_focus``'s results.json):
    each order's readings that found the data's first bridge, and its wins and losses against the named
    pages alone."""
    rows = [[name, f"{s['right']} of {s['read']}", versus(s) if "wins" in s else "-"] for name, s in json.loads(path.read_text())["summary"].items()]
    return table(["pages read, in this order", "first bridge found", "found / lost where the named pages alone were not (sign test p)"], rows)


def hop_triggers_table(path: Path) -> str:
    """Which of a run's recorded hops each trigger marks (``bench_hop_triggers``'s results.json): first hops
    by whether they found the data's first bridge, later hops after a right one by whether the question
    ended right; each trigger's marks, wrong / right."""
    found = json.loads(path.read_text())["summary"]
    groups = ("first hops (labelled by the first step)", "later hops after a right first bridge (labelled by the answer)")
    labels = {groups[0]: ("wrong bridge", "right bridge"), groups[1]: ("answer wrong", "answer right")}
    triggers = [k for k in found[groups[0]] if k not in ("hops", "wrong")]
    rows = []
    for group in groups:
        s = found[group]
        wrong, right = labels[group]
        rows.append([group.split(" (")[0], f"{s['hops']} ({s['wrong']} {wrong} / {s['hops'] - s['wrong']} {right})",
                     *(f"{s[t]['wrong']} / {s[t]['right']}" for t in triggers)])
    return table(["hops", "n", *(f"{t}: marks wrong / right" for t in triggers)], rows)


def hop_cut_table(path: Path) -> str:
    """What taking a hop's cut reading where the judge finds it better supported would change
    (``bench_hop_triggers``'s results.json), per set of hops allowed to take it, against the data's step."""
    found = json.loads(path.read_text())["summary"]["the cut reading taken where it is judged better supported"]
    keys = ("read", "taken", "right for wrong", "wrong for right", "neither right", "both right", "no step")
    return table(["hops allowed to take it", "read again", "taken", "right for wrong", "wrong for right", "neither right", "both right", "a hop between (no step to hold it to)"],
                 [[name, *(str(counts[k]) for k in keys)] for name, counts in found.items()])


def span_judge_table(path: Path) -> str:
    """A doubted first hop's best-judged span taken where it beats the hop's own answer by a margin
    (``bench_span_judge``'s results.json): right first bridges before and after, the answers changed and
    the wins and losses against the data's first step."""
    found = json.loads(path.read_text())["summary"]
    rows = [[key.split("margin ")[1], f"{int(s['right before'])} / {int(s['right after'])}", str(s["changed"]), versus(s)]
            for key, s in found.items() if key.startswith("flagged hops, margin")]
    return table([f"margin over the hop's P(yes) ({found['flagged']} flagged first hops; the first step among their spans: "
                  f"{found['the first step among the spans']})", "first bridge found: before / after", "answers changed",
                  "found / lost (sign test p)"], rows)


def oracle_bridge_table(path: Path) -> str:
    """S against S with the data's first step put in the place of each first hop its triggers mark
    (``bench_oracle_bridge``'s results.json): right answers, cover-EM and EM, with wins and losses; and
    where the oracle's bridge went."""
    found = json.loads(path.read_text())["summary"]
    acted = found["where the oracle acted"]
    rows = [[metric, f"{int(found[metric]['S'])} / {int(found[metric]['oracle'])}", versus(found[metric])] for metric in ("cover-EM", "EM")]
    rows += [["first bridges the oracle put in place", str(found["first bridges put in place"]), "-"],
             ["of those, the chain asked on from the bridge (ended right)", f"{acted['the chain asked on from the bridge']} ({int(acted['of those, ended right'])})", "-"],
             ["of those, the chain ended after its first hop", str(acted["the chain ended after the first hop"]), "-"]]
    return table([f"{found['questions']} questions whose first hop S marks", "S / the oracle", "the oracle right / wrong where S was not (sign test p)"], rows)


def oracle_plan_table(path: Path, own: dict[str, Records]) -> str:
    """Self-Ask and S given the data's decomposition (``bench_oracle_plan``'s results.json) beside their
    answers with their own (``own``: each graph's records, the headline's), on the same questions:
    right answers, cover-EM and EM, with S against Self-Ask, and the recorded time."""
    found = json.loads(path.read_text())
    ids, got = set(found["questions"]), found["summary"]
    mine = {graph: sorted((r for r in rs if r["id"] in ids), key=lambda r: r["id"]) for graph, rs in own.items()}
    rows = []
    for metric, key in (("cover-EM", "cover_em"), ("EM", "em")):
        sa, s = ([r["metrics"][key] for r in mine[g]] for g in ("Self-Ask", "S"))
        rows.append([f"their own decomposition (the headline's answers): {metric}", fmt(sum(sa), 0), fmt(sum(s), 0), versus(paired_comparison(s, sa))])
    for metric in ("cover-EM", "EM"):
        rows.append([f"the data's decomposition: {metric}", fmt(got["Self-Ask"][metric]["all"], 0), fmt(got["S"][metric]["all"], 0), versus(got[f"S against Self-Ask, {metric}"])])
    rows.append(["the data's decomposition: recorded s / question", fmt(got["Self-Ask"]["recorded s / question"], 1),
                 fmt(got["S"]["recorded s / question"], 1), f"{got['time ratio']:.1f}x"])
    return table([f"{got['questions']} questions", "Self-Ask", "S", "S right / wrong where Self-Ask was not (sign test p)"], rows)
