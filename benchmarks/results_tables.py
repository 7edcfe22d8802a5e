"""The tables of benchmarks/RESULTS.md, recomputed from the committed evaluation runs.

    .venv/bin/python -m benchmarks.results_tables             # print every table of RESULTS.md
    .venv/bin/python -m benchmarks.results_tables --check     # fail if RESULTS.md lacks one
    .venv/bin/python -m benchmarks.results_tables --check --readme README.md   # ... or README.md the headline
    .venv/bin/python -m benchmarks.results_tables --run dev40-baselines-qwen1.5b-cpu   # one run, all variants

The tables come from the committed ``evals/results/<run>/predictions.jsonl.gz`` (answers, gold
answers, evidence ids, signals, seconds; :mod:`benchmarks.results_runs`) and from the committed
benchmark outputs ``benchmarks/results/<name>/`` (:mod:`benchmarks.results_stored`). ``--check``
fails if a table is not verbatim in RESULTS.md (and, given ``--readme``, the headline table not in
that file), so a figure there cannot drift from its run.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks.results_confidence import acted_table, calibrated_table, chain_table
from benchmarks.results_render import (
    Comparison,
    answers_table,
    by_dataset_table,
    headline_table,
    node_table,
    retrieval_table,
)
from benchmarks.results_replan import composed
from benchmarks.results_runs import DATASETS, Records, of, paired, read_records, run_date, variants_of
from benchmarks.results_stored import (
    first_stage_table,
    first_token_table,
    judges_table,
    nar_stop_table,
    rescoring_table,
    scale_table,
)
from sunar.trust import COMBINED, TRANSFER

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "evals" / "results"
BENCH = ROOT / "benchmarks" / "results"
PAGE = ROOT / "benchmarks" / "RESULTS.md"
#: The caption of the table README.md shows too (checked with ``--readme``).
HEADLINE = "Headline"

DEV100 = "dev100-structured-qwen1.5b-cpu"
#: Self-Ask and S on dev_b (comparisons, bridge comparisons, inferences, MuSiQue 3-hop) in one run, with the shapes'
#: handling (:mod:`sunar.compare`): the first 50 questions the development half.
SHAPES, SHAPES_HALF = "devb-shapes-qwen1.5b-cpu", 50
#: The confirmation of "Gains that hold": Self-Ask and S on all of dev2 in one run, the design fixed before it (tag
#: dev2-confirmation); its table is skipped until the run is committed.
DEV2 = "dev2-confirm-qwen1.5b-cpu"
SHAPE_TYPES = (("comparison", "comparison (2Wiki)"), ("bridge_comparison", "bridge comparison (2Wiki)"), ("inference", "inference (2Wiki)"),
               ("3hop", "3-hop chain (MuSiQue)"))
BASE40, POOLS, ABLATIONS = "dev40-baselines-qwen1.5b-cpu", "dev40-given-pools-qwen1.5b-cpu", "dev40-ablations-qwen1.5b-cpu"
FREE_TEXT, OFFICIAL = "dev100-qwen1.5b-cpu", "dev100-official-qwen1.5b-cpu"
#: S's parts as they were added: dev 1-41, dev 42-100 and dev 101-217 (the second half of dev), each a run of every step.
ACTS, ACTS2, SECOND = "dev41-acts-qwen1.5b-cpu", "dev42-100-acts-qwen1.5b-cpu", "dev101-217-acts-confirm-qwen1.5b-cpu"
SUNAR4 = ["sunar", "sunar_no_asu", "sunar_r", "self_ask"]
#: A: SUNAR with hop sampling, branching and demonstrations; S: A with grounded final answers; Self-Ask with the
#: same demonstrations, its baseline.
A = "sunar+asu_batches=false+hop_samples=3+branch_width=2+demonstrations=2"
S, DEMOS = f"{A}+grounded_final=true", "self_ask+demonstrations=2"
#: Both with a country the final answer ends with dropped by rule (the same records otherwise).
S_DROP, DEMOS_DROP = f"{S}+drop_country=true", f"{DEMOS}+drop_country=true"
#: Both (with drop_country) reading each hop from the pages its sub-question names (``focus_pages``).
S_FOCUS, DEMOS_FOCUS = f"{S_DROP}+focus_pages=true", f"{DEMOS_DROP}+focus_pages=true"
#: ... and ending Self-Ask when a follow-up goes round the last answer (``end_loops``).
S_LOOPS, DEMOS_LOOPS = f"{S_FOCUS}+end_loops=true", f"{DEMOS_FOCUS}+end_loops=true"
#: S with each hop's answer judged against the pages it read (``hop_support``), its final answer also judged
#: against the question (``answer_fits``, ``chain_support``): dev 1-100 and dev 101-217 (where it ran).
S_JUDGE = f"{S_LOOPS}+hop_support=judge"
CHAIN_DEV, CHAIN_SECOND = "dev100-chain-support-qwen1.5b-cpu", "confirm-chain-support-qwen1.5b-cpu"
#: The judged S where a doubted final answer acts (``unfit_answer=both``): dev 1-100 replayed from CHAIN_DEV's cache,
#: and dev 101-217.
UNFIT_DEV, S_UNFIT, UNFIT_SECOND = "dev100-unfit-qwen1.5b-cpu", f"{S_JUDGE}+unfit_answer=both", "confirm-unfit-qwen1.5b-cpu"
#: The planned chain with every fix since (the cpu profile's S with ``decomposition=plan``), dev 1-100.
PLAN_FIXED, S_PLAN_FIXED = "dev100-plan-fixed-qwen1.5b-cpu", "sunar+decomposition=plan"
#: S and Self-Ask on all of dev 101-217 in one run, with every part and fix up to the reader's bridge rule.
CLEAN = "confirm-clean-qwen1.5b-cpu"
#: ``replan_below`` as the cpu profile sets it (fixed on dev 1-100); Self-Ask and S with it on dev 101-217 in one run.
REPLAN_AT = 0.55
REPLAN_SECOND, S_REPLAN = "confirm-replan-qwen1.5b-cpu", f"sunar+replan_below={REPLAN_AT}"
#: The whole last answer (``whole_last``, on by default): both graphs with and without it on dev 1-100 in one run;
#: then, on by default, dev 101-217 in one run, replayed from a copy of REPLAN_SECOND's LLM cache (the run before it).
WHOLE_DEV, WHOLE_SECOND = "dev100-whole-last-qwen1.5b-cpu", "confirm-whole-last-qwen1.5b-cpu"
#: Self-Ask and the cpu profile's S before ``cut_uncertain``, on dev 1-100 in one run: what the calibration shipped
#: for that S (``hop_support=judge`` with ``replan_below``) is fitted on.
TODAY_DEV = "dev100-today-qwen1.5b-cpu"
#: Self-Ask, S and S with a doubted hop read once more cut short (``hop_support=cut_uncertain``, the cpu profile's S)
#: on dev 1-100 in one run, replayed with the calibration fitted on it: the headline's dev 1-100.
CUT_UNCERTAIN_DEV, S_CUT_UNCERTAIN = "dev100-cut-uncertain-calibrated-qwen1.5b-cpu", "sunar+hop_support=cut_uncertain"
#: ... and, in the cpu profile, dev 101-217 in one run: Self-Ask and S, from a copy of WHOLE_SECOND's LLM cache.
CUT_SECOND = "confirm-cut-uncertain-qwen1.5b-cpu"
#: ``cut_uncertain`` measured again on each half from one LLM cache: S run on by the code of tag ``tried-bridge-pages``
#: (the bridge's pages first in N, not kept), then off (``hop_support=judge``) from a copy of that run's cache.
CUT_AGAIN = {"dev 1-100": ("cut-uncertain-off-dev100-qwen1.5b-cpu", "bridge-dev100-qwen1.5b-cpu"),
             "dev 101-217": ("cut-uncertain-off-dev101-217-qwen1.5b-cpu", "bridge-dev101-217-qwen1.5b-cpu")}
#: The reader's fixes, each run on the questions it can act on (``benchmarks/subsets.py``) by the code before it and
#: again after it from a copy of that run's LLM cache: pairs of runs (before, after). Two reading fixes (a page named
#: by one lower-case word is not named; an answer copied from the answer prompt's example is unknown).
FIXES = {"dev 1-100": ("dev-reading-fixes-before-qwen1.5b-cpu", "dev-reading-fixes-qwen1.5b-cpu"),
         "dev 101-217": ("confirm-reading-fixes-before-qwen1.5b-cpu", "confirm-reading-fixes-qwen1.5b-cpu"),
         "dev 101-217, the question only Self-Ask's trace adds": ("confirm-reading-fixes-sa-before-qwen1.5b-cpu", "confirm-reading-fixes-sa-qwen1.5b-cpu")}
#: The possessive fix (``focus_pages`` takes a possessive's "'s" as no part of a name).
POSSESSIVE = {"dev 1-100": ("dev-possessive-before-qwen1.5b-cpu", "dev-possessive-qwen1.5b-cpu"),
              "dev 101-217": ("confirm-possessive-before-qwen1.5b-cpu", "confirm-possessive-qwen1.5b-cpu")}
#: The list rule (``one_answer``: a final answer that lists names where the question asks for one keeps one), in two
#: runs split by dev.jsonl's lines.
ONE_ANSWER = {"dev.jsonl lines 1-100": ("dev-one-answer-before-qwen1.5b-cpu", "dev-one-answer-qwen1.5b-cpu"),
              "dev.jsonl lines 101-217": ("confirm-one-answer-before-qwen1.5b-cpu", "confirm-one-answer-qwen1.5b-cpu")}
#: The date form (``page_form``: a final answer's date or ordinal written as its pages write it).
PAGE_FORM = {"dev 1-217": ("page-form-before-qwen1.5b-cpu", "page-form-qwen1.5b-cpu")}
#: The bridge rule (``bridge_to_last``: a final answer that is a bridge of its chain gives way to the last hop's answer).
BRIDGE_TO_LAST = {"dev 1-217": ("bridge-to-last-before-qwen1.5b-cpu", "bridge-to-last-qwen1.5b-cpu")}
#: Every fix of the reader after the judge, each over the ones before, with the name the parts table gives it.
ALL_FIXES = (FIXES, POSSESSIVE, ONE_ANSWER, PAGE_FORM, BRIDGE_TO_LAST)
FIX_NAMES = ("the two reading fixes", "the possessive fix", "`one_answer`", "`page_form`", "`bridge_to_last`")
GRAPHS = (("Self-Ask", DEMOS_LOOPS), ("S", S_UNFIT))


def before_after(before: Records, after: Records, variant: str, was: str | None = None) -> Records:
    """``variant``'s records from a run without a change (``was`` there, as ``variant@before``) and from a run of the
    same questions with it, one of the two replayed from a copy of the other's LLM cache: the two share every call
    up to where the change acts, as the two ways of a switch in one run do."""
    return [*({**r, "variant": f"{variant}@before"} for r in of(before, was or variant)), *of(after, variant)]


def with_fixes(records: Records, run: Callable[[str], Records], *fixes: dict[str, tuple[str, str]]) -> Records:
    """``records`` with the answers of the questions each fix can act on taken from the runs after it
    (:data:`ALL_FIXES`, or the ``fixes`` given, each later one over the ones before), for the same graph."""
    fixed = {(r["id"], r["variant"]): r for pairs in (fixes or ALL_FIXES) for _, after in pairs.values() for r in run(after)}
    return [fixed.get((r["id"], r["variant"]), r) for r in records]


def pair_runs(pairs: dict[str, tuple[str, str]]) -> list[str]:
    """The runs of a fix's ``pairs``, each before and after it."""
    return [name for pair in pairs.values() for name in pair]


def fixes_rows(name: str, pairs: dict[str, tuple[str, str]], run: Callable[[str], Records]) -> list[Comparison]:
    """One row per graph: every question a fix was run on, by the code before it and after it (``pairs``)."""
    before, after = ([r for pair in pairs.values() for r in run(pair[i])] for i in (0, 1))
    rows: list[Comparison] = []
    for graph, v in GRAPHS:
        records = before_after(before, after, v)
        if len({r["id"] for r in of(records, v)}) != len(of(records, v)):
            raise ValueError(f"{name}: a question of {v} was run twice")
        rows.append((f"{name}: {graph}, dev 1-217 ({(n := len(of(records, v)))} question{'s' if n != 1 else ''})", records, f"{v}@before", v, False))
    return rows


def by_dataset(records: Records, name: str) -> list[Comparison]:
    """Self-Ask against S per dataset of ``records``, then over all, one run (labels: "``name``, MuSiQue (90)")."""
    rows: list[Comparison] = []
    for d, label in [*DATASETS, (None, "all")]:
        part = [r for r in records if d is None or r.get("dataset") == d]
        if n := len({r["id"] for r in part}):
            rows.append((f"{name}, {label} ({n})", part, "self_ask", "sunar"))
    return rows


def committed_runs(results: Path = RESULTS) -> Callable[[str], Records]:
    """A reader of the committed records of the runs in ``results`` by name, each read once."""
    runs: dict[str, Records] = {}

    def run(name: str) -> Records:
        if name not in runs:
            runs[name] = read_records(results / name, committed=True)
        return runs[name]

    return run


def dev_ids(run: Callable[[str], Records]) -> set[str]:
    """The ids of dev 1-100."""
    return {r["id"] for r in of(run(UNFIT_DEV), S_UNFIT)}


def first_answers(run: Callable[[str], Records], variant: str, sources: tuple[str, ...], dev: set[str]) -> Records:
    """``variant``'s answers to the questions ``dev`` as first run: the first of ``sources`` to answer each."""
    seen: set[str] = set()
    base: Records = []
    for name in sources:
        base += [r for r in of(run(name), variant) if r["id"] in dev and r["id"] not in seen]
        seen |= {r["id"] for r in base}
    return base


def todays_answers(run: Callable[[str], Records], variant: str, sources: tuple[str, ...], dev: set[str]) -> tuple[Records, list[str]]:
    """:func:`first_answers` with the fixes' reruns in place; and the runs they came from, the
    development runs first."""
    base = first_answers(run, variant, sources, dev)
    fixed = with_fixes(base, run, *ALL_FIXES)
    replaced = {id(r) for r in fixed} - {id(r) for r in base}
    reruns = [after for pairs in ALL_FIXES for _, after in pairs.values() if any(id(r) in replaced for r in run(after))]
    return fixed, [*sources, *dict.fromkeys(reruns)]


#: Self-Ask's and S's (before ``replan_below``) dev 1-100 answers with every fix of the reader: their runs.
TODAYS_SOURCES = {DEMOS_LOOPS: (ACTS, ACTS2), S_UNFIT: (UNFIT_DEV,)}


def sections(results: Path = RESULTS, bench: Path = BENCH) -> list[tuple[str, str | None]]:
    """(caption, table) for every table of RESULTS.md, in its order (table None: skipped, with why)."""
    run = committed_runs(results)

    def where(*names: str) -> str:
        return ", ".join(f"`evals/results/{name}/` ({run_date(results / name)})" for name in names)

    def stored(name: str, file: str) -> tuple[Path, str]:
        """A benchmark output, and its caption: the file and the dates of its commits."""
        return bench / name / file, f"`benchmarks/results/{name}/{file}` ({run_date(bench / name)})"

    def headline_runs() -> list[tuple[str, Records, bool]]:
        """The headline's rows of S (named ``sunar``) and Self-Ask: dev 1-100 and dev 101-217, each one run, then
        both together (label, records, whether one run)."""
        dev = [*of(run(CUT_UNCERTAIN_DEV), "self_ask"), *({**r, "variant": "sunar"} for r in of(run(CUT_UNCERTAIN_DEV), S_CUT_UNCERTAIN))]
        return [("dev 1-100: S as the `cpu` profile runs it, against Self-Ask, in one run", dev, True),
                ("dev 101-217, the second half of dev: the same two, in one run", run(CUT_SECOND), True),
                ("dev 1-217: the two runs together", [*dev, *run(CUT_SECOND)], False)]

    def todays(variant: str) -> Records:
        """``variant``'s dev 1-100 answers with every fix of the reader (:func:`todays_answers`)."""
        return todays_answers(run, variant, TODAYS_SOURCES[variant], dev_ids(run))[0]

    def dev100(*variants: str) -> Records:
        """``variants`` on dev 1-100 (the two development runs)."""
        return [*paired(run(ACTS), *variants), *paired(run(ACTS2), *variants)]

    def dev217(*variants: str) -> Records:
        """``variants`` on every dev question run with all of them (dev 1-100, then the second half)."""
        return [*dev100(*variants), *paired(run(SECOND), *variants)]

    def whole_last(graph: str) -> Records:
        """``graph`` (as the cpu profile names it) without ``whole_last`` and with it: dev 1-100 in one run, then
        dev 101-217 before it (REPLAN_SECOND) and after it."""
        dev = run(WHOLE_DEV)
        return [*({**r, "variant": f"{graph}@before"} for r in of(dev, graph)), *({**r, "variant": graph} for r in of(dev, f"{graph}+whole_last=true")),
                *before_after(run(REPLAN_SECOND), run(WHOLE_SECOND), graph, S_REPLAN if graph == "sunar" else graph)]

    def replan_dev() -> Records:
        """S without ``replan_below`` and with it at REPLAN_AT on dev 1-100, composed from S's answers and the planned chain's run."""
        own = todays(S_UNFIT)
        answers = composed(own, of(run(PLAN_FIXED), S_PLAN_FIXED), REPLAN_AT)[0]
        return [*({**r, "variant": "sunar@before"} for r in own), *({**r, "variant": "sunar"} for r in answers)]

    def parts() -> list[Comparison]:
        """Each part of S and of the reader both graphs share, without it and with it, in the order it was added."""
        return [
            ("`demonstrations=2`: Self-Ask, dev 1-41", run(ACTS), "self_ask", DEMOS),
            ("hop sampling and branching (A), then `grounded_final` (S): Self-Ask (without) against S (with it), both with the demonstrations, dev 1-217",
             dev217(DEMOS, S), DEMOS, S),
            ("`grounded_final`: A against S, dev 1-41", run(ACTS), A, S),
            *((f"`drop_country`: {graph}, dev 1-217", dev217(v, f"{v}+drop_country=true"), v, f"{v}+drop_country=true") for graph, v in (("Self-Ask", DEMOS), ("S", S))),
            *((f"`focus_pages`: {graph}, dev 1-100", dev100(d, f), d, f) for graph, d, f in (("Self-Ask", DEMOS_DROP, DEMOS_FOCUS), ("S", S_DROP, S_FOCUS))),
            *((f"`end_loops`: {graph}, dev 1-100", dev100(f, e), f, e) for graph, f, e in (("Self-Ask", DEMOS_FOCUS, DEMOS_LOOPS), ("S", S_FOCUS, S_LOOPS))),
            *((f"`focus_pages` and `end_loops`: {graph}, dev 101-217", paired(run(SECOND), d, e), d, e)
              for graph, d, e in (("Self-Ask", DEMOS_DROP, DEMOS_LOOPS), ("S", S_DROP, S_LOOPS))),
            ("the judge acting on a doubted answer (`unfit_answer=both`, with `hop_support=judge`): S, dev 1-100",
             [*of(run(CHAIN_DEV), S_JUDGE), *of(run(UNFIT_DEV), S_UNFIT)], S_JUDGE, S_UNFIT),
            *(row for name, pairs in zip(FIX_NAMES, ALL_FIXES, strict=True) for row in fixes_rows(name, pairs, run)),
            (f"`replan_below={REPLAN_AT}`: S, dev 1-100 (composed from S's answers and the planned chain's run)", replan_dev(), "sunar@before", "sunar", False),
            (f"`replan_below={REPLAN_AT}`: S, dev 101-217", [*of(run(CLEAN), S_UNFIT), *of(run(REPLAN_SECOND), S_REPLAN)], S_UNFIT, S_REPLAN, False),
            *((f"`whole_last`: {graph}, dev 1-217", whole_last(v), f"{v}@before", v, False) for graph, v in (("Self-Ask", "self_ask"), ("S", "sunar"))),
            ("`hop_support=cut_uncertain`: S, dev 1-100, in one run", run(CUT_UNCERTAIN_DEV), "sunar", S_CUT_UNCERTAIN),
            ("`hop_support=cut_uncertain`: S, dev 101-217", before_after(run(WHOLE_SECOND), run(CUT_SECOND), "sunar"), "sunar@before", "sunar", False),
            *((f"`hop_support=cut_uncertain` again, one cache, with the bridge's pages: S, {part}", before_after(run(off), run(on), "sunar", "sunar+hop_support=judge"),
               "sunar@before", "sunar") for part, (off, on) in CUT_AGAIN.items()),
        ]

    def shapes_rows() -> list[Comparison]:
        """dev_b by question type, then by half of the run, then all: Self-Ask against S, one run."""
        records = run(SHAPES)
        numbered = {qid: k for k, qid in enumerate(dict.fromkeys(r["id"] for r in records), start=1)}
        last = len(numbered)
        by_type = [(f"{label}: {sum(1 for r in records if r.get('type') == t and r['variant'] == 'sunar')}", [r for r in records if r.get("type") == t])
                   for t, label in SHAPE_TYPES]
        halves = [(f"dev_b 1-{SHAPES_HALF}, developed on", [r for r in records if numbered[r["id"]] <= SHAPES_HALF]),
                  (f"dev_b {SHAPES_HALF + 1}-{last}", [r for r in records if numbered[r["id"]] > SHAPES_HALF])]
        return [(label, rows, "self_ask", "sunar") for label, rows in [*by_type, *halves, (f"dev_b 1-{last}", records)] if rows]

    judges, nar = stored("ra-isf-judges", "results.json"), stored("nar-stop-musique10", "results.json")
    first = stored("bench_index_fused", "output.txt")
    scale, served = stored("bench_scale", "results.json"), stored("first_token", "results.json")
    fixed_runs = [name for pairs in ALL_FIXES for name in pair_runs(pairs)]
    out: list[tuple[str, Callable[[], str | None]]] = [
        (f"{HEADLINE}: {where(DEV100, CUT_UNCERTAIN_DEV, CUT_SECOND)}",
         lambda: headline_table([("dev 1-100: the paper's SUNAR (`sunar`)", run(DEV100), "self_ask", "sunar"),
                                 *((label, records, "self_ask", "sunar", one_run) for label, records, one_run in headline_runs())])),
        (f"The confirmation: Self-Ask and S on all of dev2 in one run: {where(DEV2) if (results / DEV2).is_dir() else 'not committed yet'}",
         lambda: headline_table(by_dataset(run(DEV2), "dev2"), names=("Self-Ask", "S")) if (results / DEV2).is_dir() else None),
        (f"Other shapes of question, Self-Ask and S in one run on dev_b: {where(SHAPES)}",
         lambda: headline_table(shapes_rows(), names=("Self-Ask", "S"))),
        # What S is
        (f"Each part of S and of the reader both graphs share, without it and with it, in the order it was added: "
         f"{where(ACTS, ACTS2, SECOND, CHAIN_DEV, UNFIT_DEV, *fixed_runs, PLAN_FIXED, CLEAN, REPLAN_SECOND, WHOLE_DEV, WHOLE_SECOND, CUT_UNCERTAIN_DEV, CUT_SECOND, *(r for pair in CUT_AGAIN.values() for r in pair))}",
         lambda: headline_table(parts(), names=("without", "with it"))),
        ("The same parts by dataset (cover-EM; the runs above)", lambda: by_dataset_table(parts())),
        (f"What the doubted answers became, S with `unfit_answer=both`: {where(UNFIT_DEV, UNFIT_SECOND)}",
         lambda: acted_table([("dev 1-100", of(run(UNFIT_DEV), S_UNFIT)), ("dev 101-217", of(run(UNFIT_SECOND), S_UNFIT))])),
        # Baselines
        (f"Seven graphs and `rag`, dev 1-40: {where(BASE40)}", lambda: answers_table(run(BASE40))),
        (f"GenSco with the dataset's pools, dev 1-40: {where(POOLS)}", lambda: answers_table(run(POOLS), base="rag")),
        (f"RA-ISF's judges, dev 101-140: {judges[1]}", lambda: judges_table(judges[0])),
        # Ablations
        (f"Ablations, dev 1-40: {where(ABLATIONS)}", lambda: answers_table(run(ABLATIONS), [v for v in variants_of(run(ABLATIONS)) if v != "self_ask"], base="sunar", differ=True)),
        (f"The paper's SUNAR, its ablations and Self-Ask, dev 1-100: {where(DEV100)}",
         lambda: answers_table(run(DEV100), [*SUNAR4[:3], "sunar+first_stage=bm25", SUNAR4[3]], base="sunar", differ=True)),
        (f"The paper's rescoring against the official code's penalty (metrics.json and run.json): {where(FREE_TEXT, OFFICIAL)}",
         lambda: rescoring_table([results / FREE_TEXT, results / OFFICIAL])),
        (f"NAR early stop: {nar[1]}", lambda: nar_stop_table(nar[0])),
        # Retrieval
        (f"First stage: {first[1]}", lambda: first_stage_table(first[0])),
        (f"Evidence recall by dataset: {where(DEV100, CUT_UNCERTAIN_DEV, CUT_SECOND)}",
         lambda: retrieval_table([(DEV100, run(DEV100), ["sunar", "self_ask"]), ("dev 1-217, the headline's runs", headline_runs()[2][1], ["self_ask", "sunar"])])),
        # Confidence and calibration
        (f"The final answer judged against the question, and the chain's weakest link, S with the judge: {where(CHAIN_DEV, CHAIN_SECOND)}",
         lambda: chain_table([("dev 1-100", of(run(CHAIN_DEV), S_JUDGE)), ("dev 101-217 (where it ran)", of(run(CHAIN_SECOND), S_JUDGE))])),
        (f"The probability shown, as shipped: fitted on dev 1-100, scored on dev 101-217: {where(CUT_UNCERTAIN_DEV, CUT_SECOND, TODAY_DEV, WHOLE_SECOND, ACTS, ACTS2, UNFIT_DEV, *fixed_runs)}",
         lambda: calibrated_table([("S, the `cpu` profile's: fitted on its headline run", of(run(CUT_UNCERTAIN_DEV), S_CUT_UNCERTAIN), of(run(CUT_SECOND), "sunar"),
                                    {"features": list(TRANSFER)}),
                                   ("S before `cut_uncertain` (shipped for `hop_support=judge`)", of(run(TODAY_DEV), "sunar"), of(run(WHOLE_SECOND), "sunar"),
                                    {"features": ["chain_support"]}),
                                   ("Self-Ask: fitted on its answers with every fix", todays(DEMOS_LOOPS), of(run(CUT_SECOND), "self_ask"),
                                    {"features": [*COMBINED, "whole_chain"]})])),
        # Cost
        (f"Wall seconds by node, S before `replan_below`, dev 101-217 in one run (the questions it computed in its run): {where(CLEAN)}",
         lambda: node_table([r for r in run(CLEAN) if r["wall_seconds"] >= r["time"]["total"] / 2], S_UNFIT)),
        # Scale and serving
        (f"The index's cost curve: {scale[1]}", lambda: scale_table(scale[0])),
        (f"Time to the answer through `serve-openai`, streamed, `sunar` on the embedded model, dev 1-5: {served[1]}", lambda: first_token_table(served[0])),
    ]
    return [(caption, make()) for caption, make in out]


def check(found: Sequence[tuple[str, str | None]], page: Path, readme: Path | None = None) -> int:
    """Every table verbatim in ``page``, and the headline table in ``readme`` too when one is given; 1 if one is not."""
    text = page.read_text()
    missing = [(caption, page) for caption, t in found if t is not None and t not in text]
    if readme is not None:
        front = readme.read_text()
        missing += [(caption, readme) for caption, t in found if t is not None and caption.startswith(HEADLINE) and t not in front]
    for caption, path in missing:
        print(f"not in {path}: {caption}", file=sys.stderr)
    said = f"{len(found) - sum(1 for _, p in missing if p == page)} of {len(found)} tables are in {page}"
    if readme is not None:
        said += f"; the headline table is {'not ' if any(p == readme for _, p in missing) else ''}in {readme}"
    print(said)
    return 1 if missing else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="the folder of the run folders (default: evals/results)")
    parser.add_argument("--run", help="print only this run's table, every variant (against self_ask when it is in the run)")
    parser.add_argument("--check", type=Path, nargs="?", const=PAGE,
                        help="fail if a table is not verbatim in this file (default: benchmarks/RESULTS.md), or the headline not in --readme")
    parser.add_argument("--readme", type=Path, default=None, help="with --check: a file that must show the headline table too (e.g. README.md)")
    args = parser.parse_args(argv)
    if args.run:
        path = args.results / args.run
        print(f"{path} ({run_date(path)})\n\n{answers_table(read_records(path))}")
        return 0
    found = sections(args.results)
    if args.check:
        return check(found, args.check, args.readme)
    for caption, t in found:
        print(f"### {caption}\n\n{t if t is not None else '(skipped: its run is not committed, or the corpus is not at $SUNAR_DATA or ../shared/data/multihop)'}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
