"""The tables of benchmarks/RESULTS.md, recomputed from the committed evaluation runs.

    .venv/bin/python -m benchmarks.results_tables             # print every table of RESULTS.md
    .venv/bin/python -m benchmarks.results_tables --check     # fail if RESULTS.md or README.md lacks one
    .venv/bin/python -m benchmarks.results_tables --run dev40-baselines-qwen1.5b-cpu   # one run, all variants

The tables come from the committed ``evals/results/<run>/predictions.jsonl.gz`` (answers, gold
answers, evidence ids, signals, seconds; :mod:`benchmarks.results_runs`) and from the committed
benchmark outputs ``benchmarks/results/<name>/`` (:mod:`benchmarks.results_stored`). ``--check``
fails if a table is not verbatim in RESULTS.md, or the headline table not in README.md, so a figure
there cannot drift from its run.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.results_confidence import (
    acted_table,
    calibrated_table,
    chain_table,
    signals_table,
)
from benchmarks.results_render import (
    Comparison,
    answers_table,
    branching_table,
    ceiling_table,
    headline_table,
    node_table,
    perfect_reader_table,
    retrieval_table,
    stages_table,
    time_table,
)
from benchmarks.results_replan import (
    avoid_table,
    replan_acted_table,
    replan_table,
    second_chain_table,
    time_without_table,
)
from benchmarks.results_runs import Records, of, paired, read_records, run_date, variants_of
from benchmarks.results_stored import (
    first_stage_table,
    first_token_table,
    judges_table,
    nar_stop_table,
    rescoring_table,
    scale_table,
)
from benchmarks.subsets import complete, repeat_samples_can_act, replayed
from sunar.trust import COMBINED, FEATURES

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "evals" / "results"
BENCH = ROOT / "benchmarks" / "results"
PAGE = ROOT / "benchmarks" / "RESULTS.md"
README = ROOT / "README.md"
#: The caption of the table README.md shows too.
HEADLINE = "Headline"

DEV100, DEV200 = "dev100-structured-qwen1.5b-cpu", "dev101-200-qwen1.5b-cpu"
BASE40, POOLS, ABLATIONS = "dev40-baselines-qwen1.5b-cpu", "dev40-given-pools-qwen1.5b-cpu", "dev40-ablations-qwen1.5b-cpu"
DEV63 = "dev63-calibration-qwen1.5b-cpu"
FREE_TEXT, OFFICIAL = "dev100-qwen1.5b-cpu", "dev100-official-qwen1.5b-cpu"
ACTS, ACTS2, CONFIRM = "dev41-acts-qwen1.5b-cpu", "dev42-100-acts-qwen1.5b-cpu", "dev101-217-acts-confirm-qwen1.5b-cpu"
SUNAR4 = ["sunar", "sunar_no_asu", "sunar_r", "self_ask"]
#: A: SUNAR with hop sampling, branching and demonstrations; S: A with grounded final answers (the
#: design confirmed on dev 101-217); Self-Ask with the same demonstrations, its baseline.
A = "sunar+asu_batches=false+hop_samples=3+branch_width=2+demonstrations=2"
S, DEMOS = f"{A}+grounded_final=true", "self_ask+demonstrations=2"
#: Both with a country the final answer ends with dropped by rule (the same records otherwise).
S_DROP, DEMOS_DROP = f"{S}+drop_country=true", f"{DEMOS}+drop_country=true"
#: Both with the decomposition planned at once (``decomposition=plan``), from dev 1-100's traces.
S_PLAN, DEMOS_PLAN = f"{S_DROP}+decomposition=plan", f"{DEMOS_DROP}+decomposition=plan"
#: Both (with drop_country) reading each hop from the pages its sub-question names (``focus_pages``).
S_FOCUS, DEMOS_FOCUS = f"{S_DROP}+focus_pages=true", f"{DEMOS_DROP}+focus_pages=true"
#: ... and ending Self-Ask when a follow-up goes round the last answer (``end_loops``).
S_LOOPS, DEMOS_LOOPS = f"{S_FOCUS}+end_loops=true", f"{DEMOS_FOCUS}+end_loops=true"
#: ... and S's MER never cutting a hop's answer (``whole_answers``; Self-Ask has no MER).
S_WHOLE = f"{S_LOOPS}+whole_answers=true"
S_REWRITE, DEMOS_REWRITE = f"{S_LOOPS}+rewrite_repeats=true", f"{DEMOS_LOOPS}+rewrite_repeats=true"
S_NOT_BRIDGE = f"{S_LOOPS}+final_not_bridge=true"
#: S with each hop's answer judged against the pages it read (``hop_support``), its final answer also judged
#: against the question (``answer_fits``, ``chain_support``): dev 1-100 replayed from the LLM cache of
#: ``dev100-hop-support``, and the confirmation (S only: Self-Ask's answers are CONFIRM's).
S_JUDGE = f"{S_LOOPS}+hop_support=judge"
CHAIN_DEV, CHAIN_CONFIRM = "dev100-chain-support-qwen1.5b-cpu", "confirm-chain-support-qwen1.5b-cpu"
#: The judged S where a doubted final answer acts (``unfit_answer=both``): dev 1-100 replayed from CHAIN_DEV's cache.
UNFIT_DEV, S_UNFIT = "dev100-unfit-qwen1.5b-cpu", f"{S_JUDGE}+unfit_answer=both"
#: ... and its confirmation on dev 101-217 (S only, replayed from CHAIN_CONFIRM's cache where that had run).
UNFIT_CONFIRM = "confirm-unfit-qwen1.5b-cpu"
#: The planned chain with every fix since (the cpu profile's S with ``decomposition=plan``, the code of stop 75), dev 1-100.
PLAN_FIXED, S_PLAN_FIXED = "dev100-plan-fixed-qwen1.5b-cpu", "sunar+decomposition=plan"
#: The thresholds ``replan_below`` is composed at from that run (the judge's own 0.5 up to always).
REPLAN_BELOW = (0.5, 0.55, 0.6, 0.65, 0.7, 1.0)
#: The confirmation in one run: S and Self-Ask on all of dev 101-217 (``--skip 100``), with the code of stop 60 (every
#: step and fix above in both, nothing tuned on these questions), each question run with both graphs together.
CLEAN = "confirm-clean-qwen1.5b-cpu"
#: ``replan_below`` as the cpu profile sets it (fixed on dev 1-100); its confirmation in one run: Self-Ask and S with it, dev 101-217.
REPLAN_AT = 0.55
REPLAN_CONFIRM, S_REPLAN = "confirm-replan-qwen1.5b-cpu", f"sunar+replan_below={REPLAN_AT}"
#: ... replayed from a copy of its LLM cache with the calibration shipped for the switch (``sunar`` is the cpu profile's S, with it).
REPLAN_CALIBRATED = "confirm-replan-calibrated-qwen1.5b-cpu"
#: The cpu profile's S (with ``replan_below``) on dev 1-100 as one graph run; and with ``replan_avoid`` (measured, not kept),
#: replayed from a copy of its LLM cache.
PROFILE_DEV, AVOID_DEV, S_AVOID = "dev100-profile-qwen1.5b-cpu", "dev100-avoid-qwen1.5b-cpu", "sunar+replan_avoid=true"
#: The whole last answer (``whole_last``, on by default: a final answer that is only the end of the last hop's answer gives
#: way to it): both graphs with and without it on dev 1-100 in one run, replayed from a copy of the LLM cache of
#: ``dev100-pair`` (Self-Ask and the cpu profile's S in one run, S replayed from PROFILE_DEV's; the answers without it are
#: its own); then, on by default, the confirmation in one run, replayed from a copy of REPLAN_CONFIRM's (which ran before it).
WHOLE_DEV = "dev100-whole-last-qwen1.5b-cpu"
WHOLE_CONFIRM = "confirm-whole-last-qwen1.5b-cpu"
#: Self-Ask and the cpu profile's S before ``cut_uncertain``, on dev 1-100 in one run (replayed from a copy of WHOLE_DEV's
#: LLM cache): the headline's dev 1-100 until then, and what the calibration shipped for that S is fitted on.
TODAY_DEV = "dev100-today-qwen1.5b-cpu"
#: The cut reading for the hops the judge doubts or whose answers split (``hop_support=cut_uncertain``, since in the cpu
#: profile): Self-Ask, S and S with it on dev 1-100 in one run, from a copy of TODAY_DEV's LLM cache (and of CUT_DEV100's
#: and CUT_CALIBRATED's); then replayed from a copy of its cache with a calibration fitted on it, which samples nothing at
#: S's confidence step: the headline's dev 1-100 (S with it is the cpu profile's S), and what the shipped file is fitted on.
CUT_UNCERTAIN_DEV, CUT_UNCERTAIN_CALIBRATED = "dev100-cut-uncertain-qwen1.5b-cpu", "dev100-cut-uncertain-calibrated-qwen1.5b-cpu"
S_CUT_UNCERTAIN = "sunar+hop_support=cut_uncertain"
#: ... and, in the cpu profile, the confirmation in one run: Self-Ask and S, from a copy of WHOLE_CONFIRM's LLM cache.
CUT_CONFIRM = "confirm-cut-uncertain-qwen1.5b-cpu"
#: Escalation (``hop_support=escalate``): the 0.5B model with and without the 1.5B reading its doubted hops, beside
#: Self-Ask on the 0.5B, dev 1-20 in one run; then also its doubted final answers (``unfit_answer=escalate``),
#: the first three replayed from the first run's LLM cache.
ESCALATE, S_ESCALATE = "dev20-escalate-final-qwen0.5b-cpu", f"{S_LOOPS}+hop_support=escalate+unfit_answer=both+escalate_llm=embedded:qwen2.5-1.5b"
S_ESCALATE_FINAL = f"{S_LOOPS}+hop_support=escalate+unfit_answer=escalate+escalate_llm=embedded:qwen2.5-1.5b"
#: The next design named for issue 29, one size down: a hop the judge doubts or whose answers split read again by
#: the 1.5B (``hop_support=escalate_uncertain``), the 0.5B as ``llm``, beside Self-Ask and S on the 0.5B, dev 21-60.
ESCALATE_UNCERTAIN = "dev21-60-escalate-qwen0.5b-cpu"
S_ESCALATE_UNCERTAIN = f"{S_LOOPS}+hop_support=escalate_uncertain+unfit_answer=both+escalate_llm=embedded:qwen2.5-1.5b"
#: Self-Ask with and without the same judge acting, dev 1-100 (does what helps S help Self-Ask?).
SELFASK_UNFIT_DEV = "dev100-selfask-unfit-qwen1.5b-cpu"
#: Self-Ask sampling its next step after a repeated follow-up (``repeat_samples``): the dev 1-100 questions where a
#: step of SELFASK_UNFIT_DEV's Self-Ask repeated one, run again both ways in one run (benchmarks/subsets.py).
REPEATS_SA, DEMOS_REPEATS = "dev100-repeats-selfask-qwen1.5b-cpu", f"{DEMOS_LOOPS}+repeat_samples=5"
#: ... and S (the cpu profile's), on the questions where a step of UNFIT_DEV's S repeated one.
REPEATS_S, S_REPEATS = "dev100-repeats-s-qwen1.5b-cpu", f"{S_UNFIT}+repeat_samples=5"
#: Two reading fixes (a page named by one lower-case word is not named; an answer copied from the answer prompt's
#: example is unknown): the questions of UNFIT_DEV and ACTS/ACTS2 (dev 1-100), then of UNFIT_CONFIRM (S only), they
#: can act on, run by the code before them and again after them from a copy of that run's LLM cache (their seconds
#: are not compared: other jobs ran beside the first runs).
FIXES = {"dev 1-100": ("dev-reading-fixes-before-qwen1.5b-cpu", "dev-reading-fixes-qwen1.5b-cpu"),
         "the confirmation": ("confirm-reading-fixes-before-qwen1.5b-cpu", "confirm-reading-fixes-qwen1.5b-cpu"),
         "the confirmation, the question only Self-Ask's trace adds": ("confirm-reading-fixes-sa-before-qwen1.5b-cpu", "confirm-reading-fixes-sa-qwen1.5b-cpu")}
#: The possessive fix (``focus_pages`` takes a possessive's "'s" as no part of a name, in both graphs): the questions
#: of the runs the headline's rows with the reading fixes read (dev 1-100, then the confirmation) that it can act on,
#: run by the code before it and again after it from a copy of that run's LLM cache.
POSSESSIVE = {"dev 1-100": ("dev-possessive-before-qwen1.5b-cpu", "dev-possessive-qwen1.5b-cpu"),
              "the confirmation": ("confirm-possessive-before-qwen1.5b-cpu", "confirm-possessive-qwen1.5b-cpu")}
#: The list rule (``one_answer``, on by default: a final answer that lists names where the question asks for one keeps
#: one): the questions of the runs the headline reads whose trace holds such a list, run by the code before it and
#: again after it from a copy of that run's LLM cache, in two runs split by dev.jsonl's lines (not the runs' order,
#: which interleaves the datasets: each run holds questions of dev 1-100 and of the confirmation, told apart by
#: :func:`split_fixes_table`).
ONE_ANSWER = {"dev.jsonl lines 1-100": ("dev-one-answer-before-qwen1.5b-cpu", "dev-one-answer-qwen1.5b-cpu"),
              "dev.jsonl lines 101-217": ("confirm-one-answer-before-qwen1.5b-cpu", "confirm-one-answer-qwen1.5b-cpu")}
#: The date form (``page_form``, on by default: a final answer's date or ordinal written as its pages write it): the
#: questions of the runs the headline reads where it can act, before it and after it from a copy of that run's LLM
#: cache, in one run (split by :func:`split_fixes_table`).
PAGE_FORM = {"dev 1-217": ("page-form-before-qwen1.5b-cpu", "page-form-qwen1.5b-cpu")}
#: The bridge rule (``bridge_to_last``, on by default: a final answer that is a bridge of its chain gives way to the
#: last hop's answer), measured the same way.
BRIDGE_TO_LAST = {"dev 1-217": ("bridge-to-last-before-qwen1.5b-cpu", "bridge-to-last-qwen1.5b-cpu")}
#: Every fix since the confirmation, each over the ones before: S and Self-Ask as the ``cpu`` profile runs them.
ALL_FIXES = (FIXES, POSSESSIVE, ONE_ANSWER, PAGE_FORM, BRIDGE_TO_LAST)
#: The final vote (``final_vote``: MER's answer weighing the chain it read) and chains weighed by their pages' support
#: (``branch_support``), beside S, in one run on the dev 1-100 questions benchmarks/subsets.py says they can act on.
#: The first run took the first 6 of them (the run's order), the second the other 2.
BRANCH_DEV, S_BRANCH, S_VOTE = ("dev-branch-support-qwen1.5b-cpu", "dev-branch-support-2-qwen1.5b-cpu"), f"{S_UNFIT}+branch_support=true", f"{S_UNFIT}+final_vote=true"
#: ... and S with and without branch_support on the other 17 dev 1-100 questions whose hops branched in UNFIT_DEV.
BRANCH_REST = "dev-branch-support-3-qwen1.5b-cpu"
#: S with every hop read once more from its pages cut short, reversed, the better-supported answer kept, beside S, on
#: dev 1-100 in one run.
S_CUT, CUT_DEV100 = "sunar+hop_support=cut", "dev100-cut-qwen1.5b-cpu"
#: ... and on its dev 71-100 again with the shipped calibration for hop_support=cut, from a copy of that run's LLM cache.
CUT_CALIBRATED = "dev71-100-cut-calibrated-qwen1.5b-cpu"
BASELINES = ["gensco", "gensco_stop", "ra_isf", "ra_isf+ra_isf_min_relevant=2", "rag"]


def switched_on_all(base: Records, rerun: Records, variant: str, switched: str, can_act: Callable[[dict[str, Any]], bool]) -> str | None:
    """``switched`` (``variant`` with a switch on) against ``variant`` on all of ``base``'s questions: the
    rerun's records (both ways) where the switch can act, ``base``'s elsewhere; None until the rerun
    holds every such question."""
    if not complete(base, rerun, variant, switched, can_act):
        return None
    rows = [r for v in (variant, switched) for r in replayed(base, rerun, variant, v, can_act)]
    return answers_table(rows, [variant, switched], base=variant)


def before_after(before: Records, after: Records, variant: str) -> Records:
    """``variant``'s records from a run of the code before a fix (as ``variant@before``) and from a rerun of
    the same questions after it, from a copy of the first run's LLM cache: the two share every call up to
    where the fix acts, as the two ways of a switch in one run do."""
    return [*({**r, "variant": f"{variant}@before"} for r in of(before, variant)), *of(after, variant)]


def with_fixes(records: Records, run: Callable[[str], Records], *fixes: dict[str, tuple[str, str]]) -> Records:
    """``records`` with the answers of the questions each fix can act on taken from the runs after it
    (:data:`FIXES`, or the ``fixes`` given, each later one over the ones before), for the same graph."""
    fixed = {(r["id"], r["variant"]): r for pairs in (fixes or (FIXES,)) for _, after in pairs.values() for r in run(after)}
    return [fixed.get((r["id"], r["variant"]), r) for r in records]


def pair_runs(pairs: dict[str, tuple[str, str]]) -> list[str]:
    """The runs of a fix's ``pairs``, each before and after it."""
    return [name for pair in pairs.values() for name in pair]


def fixes_rows(name: str, before: Records, after: Records) -> list[tuple[str, Records, str, str, bool]]:
    """One row per graph: ``before`` (a run of the code before a fix) and ``after`` (its rerun after it)."""
    return [(f"{name}: {graph} ({(n := len(of(after, v)))} question{'s' if n != 1 else ''})", before_after(before, after, v), f"{v}@before", v, False)
            for graph, v in (("Self-Ask", DEMOS_LOOPS), ("S", S_UNFIT))]


def fixes_table(pairs: dict[str, tuple[str, str]], run: Callable[[str], Records], names: tuple[str, str]) -> str:
    """Both graphs before a fix and after it on the questions it can act on: one row per graph and
    ``pairs`` entry (a run of the code before it, and its rerun after it from a copy of its LLM cache)."""
    return headline_table([row for name, (before, after) in pairs.items() for row in fixes_rows(name, run(before), run(after))], names=names)


def split_fixes_table(pairs: dict[str, tuple[str, str]], run: Callable[[str], Records], dev: set[str], names: tuple[str, str]) -> str:
    """:func:`fixes_table` with the rows split into dev 1-100 (the ids ``dev``) and the confirmation,
    whichever run of ``pairs`` each question was in."""
    before, after = ([r for pair in pairs.values() for r in run(pair[i])] for i in (0, 1))
    rows = [row for name, inside in (("dev 1-100", True), ("the confirmation", False))
            for row in fixes_rows(name, *([r for r in rs if (r["id"] in dev) == inside] for rs in (before, after)))]
    return headline_table(rows, names=names)


def corpus_texts() -> dict[str, str] | None:
    """Corpus texts (for where the wrong answers were lost): $SUNAR_DATA or ../shared/data/multihop."""
    base = Path(os.environ.get("SUNAR_DATA") or ROOT.parent / "shared" / "data" / "multihop")
    path = base / "corpus.jsonl"
    if not path.is_file():
        return None
    from sunar.stores.corpus import read_corpus

    return {d.id: d.content for d in read_corpus(path)}


def unfit_confirmation(run: Callable[[str], Records]) -> Records:
    """S where a doubted answer acts, on the confirmation, with Self-Ask's answers to the same questions
    from the first confirmation run and S with the judge alone where it ran."""
    acting = of(run(UNFIT_CONFIRM), S_UNFIT)
    asked = {r["id"] for r in acting}
    return [*(r for r in [*of(run(CONFIRM), DEMOS_LOOPS), *of(run(CHAIN_CONFIRM), S_JUDGE)] if r["id"] in asked), *acting]


def unfit_everywhere(run: Callable[[str], Records]) -> Records:
    """S where a doubted answer acts and Self-Ask on dev 1-217: dev 1-100 from the development runs
    (Self-Ask's from ACTS and ACTS2), then the confirmation (:func:`unfit_confirmation`)."""
    dev = of(run(UNFIT_DEV), S_UNFIT)
    asked = {r["id"] for r in dev}
    selfask = [r for r in [*of(run(ACTS), DEMOS_LOOPS), *of(run(ACTS2), DEMOS_LOOPS)] if r["id"] in asked]
    return [*selfask, *dev, *(r for r in unfit_confirmation(run) if r["variant"] in (DEMOS_LOOPS, S_UNFIT))]


def committed_runs(results: Path = RESULTS) -> Callable[[str], Records]:
    """A reader of the committed records of the runs in ``results`` by name, each read once."""
    runs: dict[str, Records] = {}

    def run(name: str) -> Records:
        if name not in runs:
            runs[name] = read_records(results / name, committed=True)
        return runs[name]

    return run


def dev_ids(run: Callable[[str], Records]) -> set[str]:
    """The ids of dev 1-100 (the runs since the judge hold them with the confirmation's)."""
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


def refit_columns(run: Callable[[str], Records]) -> list[tuple[str, Records, Records, dict[str, Any]]]:
    """S's and Self-Ask's calibrations, each fitted on its dev 1-100 answers as first run and on today's
    (the later fixes' reruns in place: ``benchmarks/refit_calibrations.py``, shipped), and scored on
    today's confirmation answers."""
    confirmation = with_fixes(unfit_confirmation(run), run, *ALL_FIXES)
    dev = dev_ids(run)
    columns = []
    for graph, variant, sources, features in (("S", S_UNFIT, (UNFIT_DEV,), ["chain_support"]), ("Self-Ask", DEMOS_LOOPS, (ACTS, ACTS2), [*COMBINED, "whole_chain"])):
        scored = of(confirmation, variant)
        columns += [(f"{graph}: fitted as first run", first_answers(run, variant, sources, dev), scored, {"features": features}),
                    (f"{graph}: refitted on today's answers (shipped)", todays_answers(run, variant, sources, dev)[0], scored, {"features": features})]
    return columns


def sections(results: Path = RESULTS, bench: Path = BENCH) -> list[tuple[str, str | None]]:
    """(caption, table) for every table of RESULTS.md, in its order (table None: skipped, with why)."""
    run = committed_runs(results)
    corpus: list[dict[str, str] | None] = []

    def texts() -> dict[str, str] | None:
        if not corpus:
            corpus.append(corpus_texts())
        return corpus[0]

    def where(*names: str) -> str:
        return ", ".join(f"`evals/results/{name}/` ({run_date(results / name)})" for name in names)

    def stored(name: str, file: str) -> tuple[Path, str]:
        """A benchmark output, and its caption: the file and the dates of its commits."""
        return bench / name / file, f"`benchmarks/results/{name}/{file}` ({run_date(bench / name)})"

    def headline_runs() -> list[tuple[str, Records, bool]]:
        """The headline's rows of S (named ``sunar``) and Self-Ask: dev 1-100 and the confirmation, each one
        run, then both together (label, records, whether one run)."""
        dev = [*of(run(CUT_UNCERTAIN_CALIBRATED), "self_ask"), *({**r, "variant": "sunar"} for r in of(run(CUT_UNCERTAIN_CALIBRATED), S_CUT_UNCERTAIN))]
        return [("dev 1-100: S as the `cpu` profile runs it, against Self-Ask, in one run", dev, True),
                ("dev 101-217, the confirmation: the same two, with the design fixed, in one run", run(CUT_CONFIRM), True),
                ("dev 1-217: the two runs together", [*dev, *run(CUT_CONFIRM)], False)]

    def today_split() -> list[tuple[str, Records]]:
        """Every dev question's answers with every fix (the headline's), as dev 1-100, the confirmation and both."""
        today, ids = with_fixes(unfit_everywhere(run), run, *ALL_FIXES), dev_ids(run)
        return [("dev 1-100", [r for r in today if r["id"] in ids]), ("dev 101-217, the confirmation", [r for r in today if r["id"] not in ids]),
                ("dev 1-217", today)]

    def dev100(*variants: str) -> Records:
        """``variants`` on dev 1-100 (the two development runs)."""
        return [*paired(run(ACTS), *variants), *paired(run(ACTS2), *variants)]

    def both(*variants: str) -> Records:
        """``variants`` (S and Self-Ask with demonstrations) on every dev question run with all of them."""
        variants = variants or (DEMOS, S)
        return [*dev100(*variants), *paired(run(CONFIRM), *variants)]

    def planned_beside() -> str:
        """The planned chain with every fix beside S without replan_below (dev 1-100), and as it ran on the confirmation, without the later fixes."""
        return second_chain_table([("dev 1-100: S without `replan_below`, the planned chain with every fix", of(dict(today_split())["dev 1-100"], S_UNFIT),
                                    of(run(PLAN_FIXED), S_PLAN_FIXED)),
                                   ("the confirmation: S without `replan_below`, the planned chain without the later fixes", of(run(CLEAN), S_UNFIT), of(run(CONFIRM), S_PLAN))],
                                  FEATURES)

    def whole_last_rows() -> list[Comparison]:
        """Each graph without ``whole_last`` and with it: dev 1-100 in one run, the confirmation before it and after it."""
        before = [{**r, "variant": f"{'sunar' if r['variant'] == S_REPLAN else r['variant']}@before"} for r in run(REPLAN_CONFIRM)]
        return [*((f"dev 1-100: {graph}", run(WHOLE_DEV), v, f"{v}+whole_last=true", False) for graph, v in (("Self-Ask", "self_ask"), ("S", "sunar"))),
                *((f"the confirmation: {graph}", [*before, *run(WHOLE_CONFIRM)], f"{v}@before", v, False) for graph, v in (("Self-Ask", "self_ask"), ("S", "sunar")))]

    def cut_uncertain_rows() -> list[Comparison]:
        """S without ``hop_support=cut_uncertain`` and with it on dev 1-100 in one run (as first run, and replayed with the
        calibration fitted on it); each graph on the confirmation before it (WHOLE_CONFIRM) and after it, in the cpu profile."""
        return [("dev 1-100: S, as first run (its confidence step sampled: no calibration matched the switch)", run(CUT_UNCERTAIN_DEV), "sunar", S_CUT_UNCERTAIN),
                ("dev 1-100: S, replayed with the calibration fitted on that run", run(CUT_UNCERTAIN_CALIBRATED), "sunar", S_CUT_UNCERTAIN),
                *((f"the confirmation: {graph}", before_after(run(WHOLE_CONFIRM), run(CUT_CONFIRM), v), f"{v}@before", v, False)
                  for graph, v in (("Self-Ask", "self_ask"), ("S", "sunar")))]

    judges, nar = stored("ra-isf-judges", "results.json"), stored("nar-stop-musique10", "results.json")
    first = stored("bench_index_fused", "output.txt")
    scale, served = stored("bench_scale", "results.json"), stored("first_token", "results.json")
    fixed_runs = [after for pairs in ALL_FIXES for _, after in pairs.values()]
    dev = dev_ids(run)
    dev_fixed = [name for name in fixed_runs if any(r["id"] in dev for r in run(name))]
    out: list[tuple[str, Callable[[], str | None]]] = [
        (f"{HEADLINE}: {where(DEV100, CUT_UNCERTAIN_CALIBRATED, CUT_CONFIRM)}",
         lambda: headline_table([("dev 1-100: the paper's SUNAR (`sunar`)", run(DEV100), "self_ask", "sunar"),
                                 *((label, records, "self_ask", "sunar", one_run) for label, records, one_run in headline_runs())])),
        # Answer quality
        (f"SUNAR variants and Self-Ask, dev 1-100: {where(DEV100)}", lambda: answers_table(run(DEV100), SUNAR4)),
        (f"Held-out questions, dev 101-200: {where(DEV200)}", lambda: answers_table(run(DEV200), base=None)),
        (f"The confirmation in one run: S and Self-Ask on dev 101-217, each question with both graphs together: {where(CLEAN)}",
         lambda: answers_table(run(CLEAN), [DEMOS_LOOPS, S_UNFIT], base=DEMOS_LOOPS)),
        (f"Where the wrong answers were lost, the confirmation in one run: {where(CLEAN)}",
         lambda: (t := texts()) and stages_table(run(CLEAN), t, [DEMOS_LOOPS, S_UNFIT])),
        (f"The best a choice among the answers found could do, the confirmation in one run: {where(CLEAN)}",
         lambda: ceiling_table([("dev 101-217, the confirmation in one run", run(CLEAN))], DEMOS_LOOPS, S_UNFIT)),
        (f"The best a choice among the answers found could do, S and Self-Ask as the headline gives them: {where(CUT_UNCERTAIN_CALIBRATED, CUT_CONFIRM)}",
         lambda: ceiling_table([(label.split(":")[0], records) for label, records, _ in headline_runs()], "self_ask", "sunar")),
        (f"Reading against finding, S and Self-Ask as the headline gives them: {where(CUT_UNCERTAIN_CALIBRATED, CUT_CONFIRM)}",
         lambda: (t := texts()) and perfect_reader_table([(label.split(":")[0], records) for label, records, _ in headline_runs()], "self_ask", "sunar", t)),
        (f"Two reading fixes, on the questions they can act on, before and after them from one LLM cache: {where(*pair_runs(FIXES))}",
         lambda: fixes_table(FIXES, run, ("before", "with the fixes"))),
        (f"The possessive fix, on the questions it can act on, before and after it from one LLM cache: {where(*pair_runs(POSSESSIVE))}",
         lambda: fixes_table(POSSESSIVE, run, ("before", "with the fix"))),
        # the later rules' runs each hold questions of dev 1-100 and of the confirmation, told apart by UNFIT_DEV's ids
        *((f"{rule}, on the questions it can act on, before and after it from one LLM cache: {where(*pair_runs(pairs))}",
           lambda pairs=pairs, names=names: split_fixes_table(pairs, run, dev_ids(run), names))
          for rule, pairs, names in (("The list rule", ONE_ANSWER, ("before", "with the rule")), ("The date form", PAGE_FORM, ("before", "with it")),
                                     ("The bridge rule", BRIDGE_TO_LAST, ("before", "with it")))),
        (f"The whole last answer (`whole_last`), both graphs without it and with it, dev 1-100 in one run and the confirmation before and after it: {where(WHOLE_DEV, REPLAN_CONFIRM, WHOLE_CONFIRM)}",
         lambda: headline_table(whole_last_rows(), names=("without", "with it"))),
        (f"A doubted hop read once more cut short (`hop_support=cut_uncertain`), without it and with it, dev 1-100 in one run and the confirmation before and after it: {where(CUT_UNCERTAIN_DEV, CUT_UNCERTAIN_CALIBRATED, WHOLE_CONFIRM, CUT_CONFIRM)}",
         lambda: headline_table(cut_uncertain_rows(), names=("without", "with it"))),
        (f"The final vote and chains weighed by their pages' support, beside S, on the dev 1-100 questions they can act on: {where(*BRANCH_DEV)}",
         lambda: answers_table([r for name in BRANCH_DEV for r in run(name)], [S_UNFIT, S_BRANCH, S_VOTE], base=S_UNFIT)),
        (f"S with and without branch_support on all 25 dev 1-100 questions whose hops branched: {where(*BRANCH_DEV, BRANCH_REST)}",
         lambda: answers_table([r for name in (*BRANCH_DEV, BRANCH_REST) for r in run(name)], [S_UNFIT, S_BRANCH], base=S_UNFIT)),
        # Uncertainty that acts
        (f"Confirmation, dev 101-217 (run once the design was fixed): {where(CONFIRM)}", lambda: answers_table(run(CONFIRM), [DEMOS, S, DEMOS_DROP, S_DROP, DEMOS_PLAN, S_PLAN, DEMOS_LOOPS, S_LOOPS, DEMOS_REWRITE, S_REWRITE], base=DEMOS)),
        (f"Each switch against the row before it, dev 1-100: {where(ACTS, ACTS2)}",
         lambda: headline_table([("Self-Ask: `focus_pages`", dev100(DEMOS_DROP, DEMOS_FOCUS), DEMOS_DROP, DEMOS_FOCUS),
                                 ("S: `focus_pages`", dev100(S_DROP, S_FOCUS), S_DROP, S_FOCUS),
                                 ("Self-Ask: `end_loops` too", dev100(DEMOS_FOCUS, DEMOS_LOOPS), DEMOS_FOCUS, DEMOS_LOOPS),
                                 ("S: `end_loops` too", dev100(S_FOCUS, S_LOOPS), S_FOCUS, S_LOOPS),
                                 ("S: `whole_answers` too", dev100(S_LOOPS, S_WHOLE), S_LOOPS, S_WHOLE),
                                 ("Self-Ask: `rewrite_repeats` too", dev100(DEMOS_LOOPS, DEMOS_REWRITE), DEMOS_LOOPS, DEMOS_REWRITE),
                                 ("S: `rewrite_repeats` too", dev100(S_LOOPS, S_REWRITE), S_LOOPS, S_REWRITE),
                                 ("S: `final_not_bridge` too", dev100(S_LOOPS, S_NOT_BRIDGE), S_LOOPS, S_NOT_BRIDGE)],
                                names=("before", "with the switch"))),
        (f"How the uncertainty acted on the confirmation questions: {where(CONFIRM)}", lambda: branching_table(run(CONFIRM), S)),
        (f"A doubted answer acts (`unfit_answer=both`: another answer found that fits, or the chain of one hop goes on), S with the judge, dev 1-100: {where(CHAIN_DEV, UNFIT_DEV)}",
         lambda: answers_table([*of(run(CHAIN_DEV), S_JUDGE), *of(run(UNFIT_DEV), S_UNFIT)], [S_JUDGE, S_UNFIT], base=S_JUDGE)),
        (f"What the doubted answers became, S with `unfit_answer=both`: {where(UNFIT_DEV, UNFIT_CONFIRM)}",
         lambda: acted_table([("dev 1-100", of(run(UNFIT_DEV), S_UNFIT)), ("the confirmation", of(run(UNFIT_CONFIRM), S_UNFIT))])),
        (f"Self-Ask sampling its next step after a repeated follow-up (`repeat_samples=5`), the dev 1-100 questions where a step repeated one, both ways in one run: {where(REPEATS_SA)}",
         lambda: answers_table(run(REPEATS_SA), [DEMOS_LOOPS, DEMOS_REPEATS], base=DEMOS_LOOPS)),
        (f"The same on all of dev 1-100, the other questions as Self-Ask's run left them: {where(SELFASK_UNFIT_DEV, REPEATS_SA)}",
         lambda: switched_on_all(run(SELFASK_UNFIT_DEV), run(REPEATS_SA), DEMOS_LOOPS, DEMOS_REPEATS, repeat_samples_can_act)),
        (f"S sampling its next step after a repeated follow-up (`repeat_samples=5`), the dev 1-100 questions where a step repeated one, both ways in one run: {where(REPEATS_S)}",
         lambda: answers_table(run(REPEATS_S), [S_UNFIT, S_REPEATS], base=S_UNFIT)),
        (f"The same on all of dev 1-100, the other questions as S's run left them: {where(UNFIT_DEV, REPEATS_S)}",
         lambda: switched_on_all(run(UNFIT_DEV), run(REPEATS_S), S_UNFIT, S_REPEATS, repeat_samples_can_act)),
        (f"A doubted hop, then also a doubted final answer, read again by a larger model (`hop_support=escalate`, `unfit_answer=escalate`): the 0.5B model with the 1.5B as `escalate_llm`, beside Self-Ask and S on the 0.5B, dev 1-20 in one run: {where(ESCALATE)}",
         lambda: answers_table(run(ESCALATE), [DEMOS_LOOPS, S_UNFIT, S_ESCALATE, S_ESCALATE_FINAL], base=DEMOS_LOOPS)),
        (f"A doubted or uncertain hop read again by a larger model (`hop_support=escalate_uncertain`): the 0.5B model with the 1.5B as `escalate_llm`, beside Self-Ask and S on the 0.5B, dev 21-60 in one run: {where(ESCALATE_UNCERTAIN)}",
         lambda: answers_table(run(ESCALATE_UNCERTAIN), [DEMOS_LOOPS, S_UNFIT, S_ESCALATE_UNCERTAIN], base=DEMOS_LOOPS)),
        (f"S with every hop read once more cut short (`hop_support=cut`), beside S, on dev 1-100, in one run: {where(CUT_DEV100)}",
         lambda: answers_table(run(CUT_DEV100), ["sunar", S_CUT], base="sunar")),
        (f"The same, dev 71-100, with the calibration shipped for `hop_support=cut`, from a copy of that run's LLM cache: {where(CUT_CALIBRATED)}",
         lambda: answers_table(run(CUT_CALIBRATED), ["sunar", S_CUT], base="sunar")),
        # Tried and not kept
        (f"The planned chain kept off the first answer's weakest link (`replan_avoid`), dev 1-100, each a whole-graph run: {where(PROFILE_DEV, AVOID_DEV)}",
         lambda: answers_table([*run(PROFILE_DEV), *run(AVOID_DEV)], ["sunar", S_AVOID], base="sunar")),
        (f"What the planned chain did in those two runs: {where(PROFILE_DEV, AVOID_DEV)}",
         lambda: replan_acted_table([("dev 1-100, the `cpu` profile's S", run(PROFILE_DEV), "sunar"), ("dev 1-100, with `replan_avoid`", run(AVOID_DEV), S_AVOID)])),
        (f"Where `replan_avoid` acted, dev 1-100: {where(AVOID_DEV)}", lambda: avoid_table([("dev 1-100, with `replan_avoid`", run(AVOID_DEV), S_AVOID)])),
        (f"A planned chain (`decomposition=plan`) beside S's own, and who chooses between them, dev 1-100 and the confirmation: {where(ACTS, ACTS2, UNFIT_DEV, *dev_fixed, PLAN_FIXED, CONFIRM, CLEAN)}",
         planned_beside),
        (f"`replan_below` composed from the planned chain's run and S's without it, beside Self-Ask, dev 1-100: {where(ACTS, ACTS2, UNFIT_DEV, *dev_fixed, PLAN_FIXED)}",
         lambda: (dev := dict(today_split())["dev 1-100"]) and replan_table(of(dev, S_UNFIT), of(run(PLAN_FIXED), S_PLAN_FIXED), of(dev, DEMOS_LOOPS), REPLAN_BELOW)),
        (f"The confirmation of `replan_below=0.55` in one run: Self-Ask and S with it on dev 101-217, each question with both graphs together: {where(REPLAN_CONFIRM)}",
         lambda: answers_table(run(REPLAN_CONFIRM), ["self_ask", S_REPLAN], base="self_ask")),
        (f"What `replan_below=0.55` did on the confirmation, each first answer scored as the planned one: {where(REPLAN_CONFIRM)}",
         lambda: replan_acted_table([("dev 101-217, the confirmation in one run", run(REPLAN_CONFIRM), S_REPLAN)])),
        (f"Its time, with and without the confidence step: {where(REPLAN_CONFIRM)}",
         lambda: time_without_table(run(REPLAN_CONFIRM), "self_ask", S_REPLAN, "confidence", "its samples, taken because no calibration is fitted for it")),
        (f"The confirmation of `replan_below=0.55` replayed with its calibration: {where(REPLAN_CALIBRATED)}",
         lambda: answers_table(run(REPLAN_CALIBRATED), ["self_ask", "sunar"], base="self_ask")),
        # Baselines
        (f"Seven graphs and `rag`, dev 1-40: {where(BASE40)}", lambda: answers_table(run(BASE40))),
        (f"GenSco with the dataset's pools, dev 1-40: {where(POOLS)}", lambda: answers_table(run(POOLS), base="rag")),
        (f"RA-ISF's judges, dev 101-140: {judges[1]}", lambda: judges_table(judges[0])),
        # Ablations
        (f"Ablations, dev 1-40: {where(ABLATIONS)}", lambda: answers_table(run(ABLATIONS), [v for v in variants_of(run(ABLATIONS)) if v != "self_ask"], base="sunar", differ=True)),
        (f"Ablations on dev 1-100: {where(DEV100)}",
         lambda: answers_table(run(DEV100), ["sunar", "sunar_no_asu", "sunar+first_stage=bm25"], base="sunar", differ=True)),
        (f"The paper's rescoring against the official code's penalty (metrics.json and run.json): {where(FREE_TEXT, OFFICIAL)}",
         lambda: rescoring_table([results / FREE_TEXT, results / OFFICIAL])),
        (f"NAR early stop: {nar[1]}", lambda: nar_stop_table(nar[0])),
        # Retrieval
        (f"First stage: {first[1]}", lambda: first_stage_table(first[0])),
        (f"Evidence recall by dataset: {where(DEV100, ACTS, ACTS2, CONFIRM)}",
         lambda: retrieval_table([(DEV100, run(DEV100), ["sunar", "self_ask"]), ("dev 1-217 (both)", both(), [DEMOS, S])])),
        # Confidence and calibration
        (f"The final answer judged against the question, and the chain's weakest link, S with the judge, dev 1-100 and the confirmation: {where(CHAIN_DEV, CHAIN_CONFIRM)}",
         lambda: chain_table([("dev 1-100", of(run(CHAIN_DEV), S_JUDGE)), ("the confirmation", of(run(CHAIN_CONFIRM), S_JUDGE))])),
        (f"The probability shown, S where a doubted answer acts and Self-Ask, fitted on dev 1-100 before the later fixes and on today's answers, scored on today's confirmation answers: {where(ACTS, ACTS2, CONFIRM, UNFIT_DEV, UNFIT_CONFIRM, *fixed_runs)}",
         lambda: calibrated_table(refit_columns(run))),
        (f"The probability shown by S as the `cpu` profile runs it, fitted on dev 1-100 in one run (shipped), scored on the confirmation: {where(TODAY_DEV, WHOLE_CONFIRM, CUT_UNCERTAIN_CALIBRATED, CUT_CONFIRM)}",
         lambda: calibrated_table([("S before `cut_uncertain`: fitted on `dev100-today` (shipped for `hop_support=judge`), scored on the confirmation",
                                    of(run(TODAY_DEV), "sunar"), of(run(WHOLE_CONFIRM), "sunar"), {"features": ["chain_support"]}),
                                   ("S: fitted on `dev100-cut-uncertain-calibrated` (shipped), scored on the confirmation",
                                    of(run(CUT_UNCERTAIN_CALIBRATED), S_CUT_UNCERTAIN), of(run(CUT_CONFIRM), "sunar"), {"features": ["chain_support"]})])),
        (f"A chain that ended on its bridge, fitted on dev 1-100, scored on dev 101-217: {where(ACTS, ACTS2, CONFIRM)}",
         lambda: calibrated_table([(f"{name}: {label}", [*of(run(ACTS), v), *of(run(ACTS2), v)], of(run(CONFIRM), v), {"features": features})
                                   for name, v in (("S", S_LOOPS), ("Self-Ask", DEMOS_LOOPS))
                                   for label, features in (("the four signals", COMBINED), ("and `whole_chain` (shipped)", (*COMBINED, "whole_chain")),
                                                           ("and `hops`", (*COMBINED, "hops")))])),
        (f"Signals' AUROC: {where(DEV63, DEV100, DEV200)}",
         lambda: signals_table([("dev63 (free text)", of(run(DEV63), "sunar")), ("dev 1-100", of(run(DEV100), "sunar")),
                                ("dev 101-200", of(run(DEV200), "sunar")), ("all 200", [*of(run(DEV100), "sunar"), *of(run(DEV200), "sunar")])],
                               [f for f in FEATURES if f not in ("unknown", "fallback", "answer_logprob", "probe")])),
        (f"The probability shown, fitted on dev 1-100 and scored on questions it never saw: {where(DEV100, DEV200)}",
         lambda: calibrated_table([("`sunar`: fitted on dev 1-100, scored on dev 101-200", of(run(DEV100), "sunar"), of(run(DEV200), "sunar"))])),
        # Cost
        (f"Where the recorded seconds go, dev 1-40: {where(BASE40)}", lambda: time_table(run(BASE40), ["sunar", "self_ask", *BASELINES[:2], *BASELINES[3:]])),
        (f"Wall seconds by node, `sunar`, dev 101-200 (every call computed in the run): {where(DEV200)}", lambda: node_table(run(DEV200), "sunar")),
        (f"Wall seconds by node, S before `replan_below`, the confirmation in one run (the questions it computed in its run): {where(CLEAN)}",
         lambda: node_table([r for r in run(CLEAN) if r["wall_seconds"] >= r["time"]["total"] / 2], S_UNFIT)),
        # Scale and serving
        (f"The index's cost curve: {scale[1]}", lambda: scale_table(scale[0])),
        (f"Time to the answer through `serve-openai`, streamed, `sunar` on the embedded model, dev 1-5: {served[1]}", lambda: first_token_table(served[0])),
    ]
    return [(caption, make()) for caption, make in out]


def check(found: Sequence[tuple[str, str | None]], page: Path, readme: Path) -> int:
    """Every table verbatim in ``page`` and the headline table in ``readme`` too; 1 if one is not."""
    text, front = page.read_text(), readme.read_text()
    missing = [(caption, page) for caption, t in found if t is not None and t not in text]
    missing += [(caption, readme) for caption, t in found if t is not None and caption.startswith(HEADLINE) and t not in front]
    for caption, path in missing:
        print(f"not in {path}: {caption}", file=sys.stderr)
    print(f"{len(found) - sum(1 for _, p in missing if p == page)} of {len(found)} tables are in {page}; "
          f"the headline table is {'not ' if any(p == readme for _, p in missing) else ''}in {readme}")
    return 1 if missing else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="the folder of the run folders (default: evals/results)")
    parser.add_argument("--run", help="print only this run's table, every variant (against self_ask when it is in the run)")
    parser.add_argument("--check", type=Path, nargs="?", const=PAGE,
                        help="fail if a table is not verbatim in this file (default: benchmarks/RESULTS.md) or the headline not in --readme")
    parser.add_argument("--readme", type=Path, default=README, help="the file that shows the headline table too (default: README.md)")
    args = parser.parse_args(argv)
    if args.run:
        path = args.results / args.run
        print(f"{path} ({run_date(path)})\n\n{answers_table(read_records(path))}")
        return 0
    found = sections(args.results)
    if args.check:
        return check(found, args.check, args.readme)
    for caption, t in found:
        print(f"### {caption}\n\n{t if t is not None else '(skipped: the corpus is not at $SUNAR_DATA or ../shared/data/multihop)'}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
