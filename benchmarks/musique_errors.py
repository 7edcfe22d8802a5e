"""Where MuSiQue is lost: every wrong answer (cover-EM 0) of Self-Ask and of S on the MuSiQue questions
of committed runs, put in exactly one kind of error, with counts per graph and run.

    .venv/bin/python -m benchmarks.musique_errors --data ../shared/data/multihop   # or set SUNAR_DATA
    .venv/bin/python -m benchmarks.musique_errors --index DIR   # and how near NAR's graph puts a missed second page

All MuSiQue dev questions are 2-hop (``decomposition``: the bridge question and its answer, then the
question about the bridge). What a run records per hop is its sub-question and answer
(``reasoning_path``); the evidence of each hop is NOT stored apart: ``evidence_ids`` is MER's final
evidence followed by every hop's evidence, interleaved (``sunar.evals.predictions.ranked_evidence``).
So "retrieved" below means "in ``evidence_ids``": read by some hop or kept by MER.

Words: a *match* is cover-EM's test (``sunar.evals.metrics.cover_em``: a normalised gold string inside the normalised answer);
a text's *words* are its content words (``sunar.text.content_words``: normalised, longer than two
letters, no question or function words) with possessives' "'s" left out; two words are the same when
they share their first five letters (or all of the shorter one: "employed" = "employer", "form" =
"formation"). The *second-step words* are the words of the gold second sub-question that are in
neither the gold first sub-question nor its answer (the relation asked of the bridge: "border" in
"#1 >> shares border with").

The rules, checked in this order; the first that holds names the kind:

1. ``no chain``: the reasoning path is empty, or its first sub-question is the whole question
   again: ``sunar.text.restates`` (the same words, give or take one in twenty), or it holds at least
   three quarters of the question's words including a second-step word (the second hop folded into
   the first: "What league was Jose Cancela a member of?" for "What league was the team that Jose
   Cancela was a member of in?"). A plain first step that shares a relation with the second ("Who
   is Edward Baring's father?" for "Who is the father of Edward Baring's father?") is not flagged.
2. ``first sub-question asks something else``: the first hop's answer is not the gold bridge (the
   gold first sub-answer: a match, or its initials, "IOC" for "International Olympic Committee"),
   and the first sub-question keeps at most half of the question's words that the gold first
   sub-question uses (the words that lead to the bridge: "Who was the first president of the
   Russian Empire?" for "... in the country where the Kamchatka Peninsula is located?").
3. ``first hop wrong, its page not retrieved``: the first hop's answer is not the gold bridge, and
   the first gold support paragraph is not retrieved.
4. ``first hop misread``: the first hop's answer is not the gold bridge although its gold page was
   retrieved: a neighbour on the page ("Christopher Lloyd" for Michael J. Fox), another name of the
   right entity ("Ibn Sina" for "Avicenna": the data gives no aliases for sub-answers), or the right
   words asked with another question word ("When was FleetBoston Financial bought?").
5. ``one hop only``: the first hop is right and the path has no other hop (the bridge was taken for
   the answer, or the chain stopped).
6. ``second sub-question drops the context``: the first hop is right, but no later sub-question both
   names the bridge (holds the normalised first-hop answer or gold bridge) and keeps the question's
   qualifying words: the words of the question that the gold second sub-question also uses, the
   bridge's left out (when there are such words: "located" in "Where is the province containing
   Bandar-e Gaz County located?", lost by "What is the capital of Golestan Province?").
7. ``second hop's page not retrieved``: the second gold support paragraph is not retrieved.
8. ``second hop misread``: its page retrieved, no hop after the first answers the gold (a match
   with the gold answers and aliases).
9. ``final step lost a right last hop``: a hop after the first answers the gold (the last hop, or
   one a later detour overwrote), the final answer not.
10. ``other``: none of the above (only a right answer gets here; kept so that every record has a kind).

Beside the kinds, per graph: wrong answers whose gold answer (or an alias) is in no retrieved page
(title and text, cover-EM's test; the reports' "in no document", ``sunar.evals.report.stage_lost``).

    python -m benchmarks.musique_errors [--run LABEL DIR S_VARIANT ...] [--questions F] [--corpus F]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import DATA_HELP, data_dir
from benchmarks.results_render import table
from sunar.evals.data import Question, read_questions
from sunar.evals.metrics import cover_em
from sunar.evals.predictions import latest, read_predictions
from sunar.evals.report import stage_lost
from sunar.stores.corpus import read_corpus
from sunar.text import content_words, normalize_answer, restates, without_possessive

KINDS = (
    "no chain",
    "first sub-question asks something else",
    "first hop wrong, its page not retrieved",
    "first hop misread",
    "one hop only",
    "second sub-question drops the context",
    "second hop's page not retrieved",
    "second hop misread",
    "final step lost a right last hop",
    "other",
)
#: (label, run folder, S's variant in it); Self-Ask is ``self_ask`` in each.
RESULTS = Path(__file__).resolve().parents[1] / "evals" / "results"
RUNS = (
    ("dev 1-100", RESULTS / "dev100-cut-uncertain-calibrated-qwen1.5b-cpu", "sunar+hop_support=cut_uncertain"),
    ("101-217", RESULTS / "confirm-cut-uncertain-qwen1.5b-cpu", "sunar"),
)
WHOLE_QUESTION = 0.75  # the share of the question's words a first sub-question that folds in the second hop keeps


def bridge_found(answer: str, bridge: str) -> bool:
    """The first hop's answer is the gold bridge: cover-EM's test, or the bridge's initials ("IOC")."""
    initials = "".join(w[0] for w in normalize_answer(bridge).split())
    return bool(cover_em(answer, [bridge])) or (len(initials) > 1 and normalize_answer(answer) == initials)


def words(text: str) -> set[str]:
    return content_words(without_possessive(text))


def same_word(a: str, b: str) -> bool:
    n = min(5, len(a), len(b))
    return a[:n] == b[:n]


def shares(some: set[str], others: set[str]) -> bool:
    return any(same_word(a, b) for a in some for b in others)


def whole_question(sub_question: str, question: Question) -> bool:
    """Whether a first sub-question is the whole question again (rule 1)."""
    (first_step, bridge, _), (second_step, _, _) = question.sub_questions[:2]
    asked, kept = words(question.question), words(sub_question)
    second_only = words(second_step) - words(first_step) - words(bridge)
    folded = len(asked & kept) >= WHOLE_QUESTION * len(asked) and shares(second_only, kept)
    return restates(sub_question, question.question) or folded


def leads_to_bridge(sub_question: str, question: Question) -> bool:
    """Whether a first sub-question keeps more than half of the question's words that lead to the
    bridge (those the gold first sub-question uses; rule 2)."""
    first_step = words(question.sub_questions[0][0])
    needed = {w for w in words(question.question) if shares({w}, first_step)}
    return sum(shares({w}, words(sub_question)) for w in needed) > len(needed) / 2


def keeps_context(path: Sequence[dict[str, Any]], question: Question) -> bool:
    """Whether a sub-question after the first names the bridge and keeps the qualifying words (rule 6)."""
    (_, bridge, _), (second_step, _, _) = question.sub_questions[:2]
    first = path[0]["answer"]
    names = [n for n in (normalize_answer(first), normalize_answer(bridge)) if n]
    qualifying = {w for w in words(question.question) if shares({w}, words(second_step))} - words(bridge) - words(first)
    return any(any(n in normalize_answer(h["question"]) for n in names)
               and (not qualifying or shares(qualifying, words(h["question"]))) for h in path[1:])


def classify(record: dict[str, Any], question: Question, retrieved: set[str]) -> str:
    """The kind of a wrong answer (the rules of the module docstring, in order)."""
    path = record.get("reasoning_path") or []
    if not path or whole_question(path[0]["question"], question):
        return KINDS[0]
    (_, bridge, first_page), (_, _, second_page) = question.sub_questions[:2]
    if not bridge_found(path[0]["answer"], bridge):
        if not leads_to_bridge(path[0]["question"], question):
            return KINDS[1]
        return KINDS[2] if first_page not in retrieved else KINDS[3]
    if len(path) == 1:
        return KINDS[4]
    if not keeps_context(path, question):
        return KINDS[5]
    if second_page not in retrieved:
        return KINDS[6]
    if not any(cover_em(h["answer"], question.answers) for h in path[1:]):
        return KINDS[7]
    if not cover_em(record["answer"], question.answers):
        return KINDS[8]
    return KINDS[9]


def wrong_answers(run: Path, variant: str, questions: dict[str, Question]) -> list[dict[str, Any]]:
    records = latest(read_predictions(run / "predictions.jsonl")).values()
    return [r for r in records if r["variant"] == variant and r.get("dataset") == "musique" and r["id"] in questions
            and not r.get("error") and not r["metrics"]["cover_em"]]


def example(record: dict[str, Any]) -> str:
    path = " / ".join(f"{h['question']} -> {h['answer']}" for h in record.get("reasoning_path") or [])
    return f"`{record['id']}` {record['answer']!r} (gold {record['gold'][0]!r}; path: {path})"


def analyse(runs: Sequence[tuple[str, Path, str]], questions: dict[str, Question], pages: dict[str, str]) -> str:
    """The table of kinds (one column per graph and run, then the totals), and examples for S."""
    columns: list[tuple[str, list[dict[str, Any]]]] = []  # (heading, its wrong answers)
    for graph in ("Self-Ask", "S"):
        for label, folder, s_variant in runs:
            wrong = wrong_answers(folder, "self_ask" if graph == "Self-Ask" else s_variant, questions)
            for r in wrong:
                r["kind"] = classify(r, questions[r["id"]], set(r.get("evidence_ids") or []))
                r["unseen"] = stage_lost(r, pages, 0) == "not_retrieved"
            columns.append((f"{graph} {label}", wrong))
    s_wrong = [r for heading, wrong in columns if heading.startswith("S ") for r in wrong]
    columns += [("total S", s_wrong), ("total Self-Ask", [r for h, w in columns if h.startswith("Self-Ask") for r in w])]
    header = ["kind", *(heading for heading, _ in columns), "S: gold in no retrieved page"]
    rows = [[kind, *(sum(r["kind"] == kind for r in w) for _, w in columns),
             sum(r["kind"] == kind and r["unseen"] for r in s_wrong)] for kind in KINDS]
    rows.append(["**wrong answers**", *(len(w) for _, w in columns), ""])
    rows.append(["gold answer in no retrieved page", *(sum(r["unseen"] for r in w) for _, w in columns), ""])
    lines = [table(header, rows), "", "Examples (S):", ""]
    for kind in KINDS:
        shown = [example(r) for r in s_wrong if r["kind"] == kind][:3]
        lines += [f"- {kind}: " + "; ".join(shown)] if shown else []
    return "\n".join(lines)


def naming(normalised: dict[str, str], words: str) -> set[str]:
    """The pages whose text, normalised and padded with spaces (``f" {normalize_answer(text)} "``), holds
    ``words`` normalised, as whole words (``words`` normalised once, not once per page)."""
    wanted = f" {normalize_answer(words)} "
    return {i for i, text in normalised.items() if wanted in text} if wanted.strip() else set()


def second_pages(runs: Sequence[tuple[str, Path, str]], questions: dict[str, Question], neighbours: Any, pages: dict[str, str],
                 near: int = 8, titles: dict[str, str] | None = None) -> str:
    """Where the bridge was found but the second gold page never retrieved (wrong or right, either graph): would NAR's
    neighbour graph lead there from the first gold page? The second page's rank among the first's neighbours (and
    the first's among the second's), whether a second sub-question was asked at all, and whether the second page
    names the bridge, and whether the pages that do are at most ``near`` (one batch holds them all);
    with ``titles``, whether the first page names the second's title (a graph of links from it)."""
    missed: dict[str, tuple[int | None, bool]] = {}
    names_bridge: set[str] = set()
    among: dict[str, int] = {}  # question -> how many pages name the bridge, where the second page is one
    linked: set[str] = set()
    normalised = {i: f" {normalize_answer(text)} " for i, text in pages.items()}  # once, not per question
    for _, folder, s_variant in runs:
        for r in latest(read_predictions(folder / "predictions.jsonl")).values():
            question, path = questions.get(r["id"]), r.get("reasoning_path") or []
            if r["variant"] not in ("self_ask", s_variant) or question is None or not path:
                continue
            (_, bridge, first), (_, _, second) = question.sub_questions[:2]
            if bridge_found(path[0]["answer"], bridge) and second not in set(r.get("evidence_ids") or []):
                ranks = [[d for d, _ in neighbours(a)].index(b) + 1 for a, b in ((first, second), (second, first)) if b in {d for d, _ in neighbours(a)}]
                asked = missed.get(r["id"], (None, False))[1] or len(path) > 1
                missed[r["id"]] = (min(ranks, default=None), asked)
                if normalize_answer(bridge) in normalised.get(second, ""):
                    names_bridge.add(r["id"])
                if second in (named := naming(normalised, bridge)):
                    among[r["id"]] = len(named)
                if titles is not None and second in titles and naming({first: normalised.get(first, "")}, titles[second]):
                    linked.add(r["id"])
    ranks = [rank for rank, _ in missed.values()]
    rows = [[f"within the {near} nearest (a NAR batch)", sum(1 for k in ranks if k is not None and k <= near)],
            ["within the graph's neighbours, further", sum(1 for k in ranks if k is not None and k > near)],
            ["not a neighbour", sum(1 for k in ranks if k is None)],
            ["**questions**", len(missed)], ["of which a second sub-question was asked", sum(asked for _, asked in missed.values())],
            ["of which the second page names the bridge", len(names_bridge)],
            [f"of which the pages naming the bridge are at most {near} (a NAR batch)", sum(1 for n in among.values() if n <= near)]]
    if titles is not None:
        rows.append(["of which the first page names the second's title (a graph of links)", len(linked)])
    return table(["the second gold page, from the first (either way round)", "questions"], rows)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", nargs=3, action="append", metavar=("LABEL", "DIR", "S_VARIANT"),
                        help="a run folder, its label and S's variant in it (repeat; default: the two committed runs)")
    parser.add_argument("--data", help=DATA_HELP)
    parser.add_argument("--index", type=Path, help="an index of the corpus: also how near the missed second pages are in its neighbour graph")
    parser.add_argument("--questions", default="dev.jsonl", help="the runs' questions file, in the data folder (default: dev.jsonl)")
    parser.add_argument("--corpus", action="append", help="a corpus file in the data folder holding their pages (repeat; default: corpus.jsonl)")
    args = parser.parse_args(argv)
    data = data_dir(args.data)
    runs = [(label, Path(folder), variant) for label, folder, variant in (args.run or RUNS)]
    questions = {q.id: q for q in read_questions(data / args.questions) if q.dataset == "musique" and len(q.sub_questions) >= 2}
    corpus = [d for name in args.corpus or ["corpus.jsonl"] for d in read_corpus(data / name)]
    pages = {d.id: d.content for d in corpus}
    print(analyse(runs, questions, pages))
    if args.index:
        from sunar.stores.layout import DOC_IDS, read_ids
        from sunar.stores.neighbours import NeighbourGraph

        graph = NeighbourGraph.load(args.index, read_ids(args.index / DOC_IDS))  # every neighbour stored (100 by default)
        print("\n" + second_pages(runs, questions, graph.neighbours, pages, titles={d.id: d.title for d in corpus}))


if __name__ == "__main__":
    main()
