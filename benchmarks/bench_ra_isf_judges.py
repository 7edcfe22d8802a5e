"""RA-ISF's three judges on dev questions, each against labels the dev data gives, with 95% intervals.

Usage::

    python -m benchmarks.bench_ra_isf_judges --index INDEX_DIR [--data DIR] [--skip 100] [--limit 40]
        [--llm embedded:qwen2.5-1.5b] [--out benchmarks/results/ra-isf-judges/results.json]

The questions are DIR/dev.jsonl after the first ``--skip`` (both datasets in turn, as ``sunar eval``
takes them): by default questions 101-140, outside every reported evaluation run, so nothing tuned
here is tuned on the questions it is reported on. The RA-ISF paper fine-tunes a 7B model for each
judge; here they are prompted (cpu profile settings, whatever the LLM).

- **Self-knowledge** (M_know): labelled by the paper's appendix rule, "knows" when the LLM's
  closed-book answer (RA-ISF's own prompt) is right (cover-EM against the gold answers).
- **Relevance** (M_rel): the passages RA-ISF's retrieval gives the question (first stage, scorer
  re-ranking, top ``evidence``), labelled relevant when one of the question's gold paragraphs. The
  LLM judge's margin ``logp(yes) - logp(no)`` is compared with the scorer's own score as a judge;
  each decides at 0 (the LLM's argmax) or at a threshold fitted on the other half of the questions.
- **Sufficiency** (the appendix's form of M_rel: are the relevant passages, together, enough?):
  one call over the passages the scorer keeps as relevant, labelled sufficient when one of them
  holds a gold answer. A passage about the question's subject is relevant to a two-hop question
  yet one hop short; without this judge RA-ISF answers such a question at once instead of
  decomposing it.
- **Decomposition** (M_decom), MuSiQue questions (they carry gold sub-questions): right when it
  gives as many sub-questions as the gold decomposition and its first sub-question holds at least
  half the content words of the gold first one.

Accuracy comes with its Wilson interval; balanced accuracy (the mean of the two classes' rates,
0.5 = chance whatever the class balance) with a bootstrap interval over questions.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from benchmarks import add_index_arguments, questions_file
from benchmarks.bench_nli import balanced_accuracy, fit_tau
from sunar.baselines.ra_isf import prompts
from sunar.baselines.ra_isf.configuration import RaIsfConfiguration as Configuration
from sunar.evals.calibration import auroc
from sunar.evals.data import read_questions
from sunar.evals.metrics import cover_em, proportion_ci
from sunar.evals.run import interleave
from sunar.prompts.answer import read_answer
from sunar.text import content_words

SUFFICIENT_SYSTEM = (
    "You check whether passages are enough to answer a question. Reply 'yes' only if the passages, "
    "read together, state the answer. Reply 'no' if they go only part of the way (for example they "
    "say who or what the question is about, but not the fact it asks for) or are about something "
    "else. Reply with one word: yes or no."
)

#: Invented exemplars: (question, [(passage title, passage text), ...], verdict). The first and the
#: last stop one step short of the answer, the judgement a multi-hop question needs.
SUFFICIENT_EXAMPLES: list[tuple[str, list[tuple[str, str]], str]] = [
    ("Where was the director of the film The Quiet Lanterns born?",
     [("The Quiet Lanterns", "The Quiet Lanterns is a 1962 drama film directed by Mira Solberg.")], "no"),
    ("Where was the director of the film The Quiet Lanterns born?",
     [("The Quiet Lanterns", "The Quiet Lanterns is a 1962 drama film directed by Mira Solberg."),
      ("Mira Solberg", "Mira Solberg (1921-1990) was a Danish film director born in Aarhus.")], "yes"),
    ("Who founded Velland Motors?",
     [("Velland Motors", "Velland Motors is a truck maker founded in 1921 by the engineer Arne Velland.")], "yes"),
    ("What is the capital of the country where Arne Velland was born?",
     [("Arne Velland", "Arne Velland (1889-1950) was a Norwegian engineer born in Bergen.")], "no"),
]
SUFFICIENT_QUERY = "Question: {q}\nPassages:\n{passages}\nDo the passages state the answer?"


def _numbered(passages: Sequence[tuple[str, str]]) -> str:
    return "\n".join(f"[{i}] {title}: {' '.join(text.split())[:prompts.PASSAGE_CHARS]}" for i, (title, text) in enumerate(passages, start=1))


def sufficient_messages(question: str, passages: Sequence[dict]) -> list[BaseMessage]:
    """Relevant-and-sufficient judge over the relevant passages together, as in RA-ISF's appendix
    (reply yes / no): a passage about the question's subject can be relevant yet one hop short.
    Measured here only: on the 1.5B model it is near chance, and the graph counts relevant
    passages instead (``ra_isf_min_relevant``)."""
    messages: list[BaseMessage] = [SystemMessage(SUFFICIENT_SYSTEM)]
    for q, shown, verdict in SUFFICIENT_EXAMPLES:
        messages += [HumanMessage(SUFFICIENT_QUERY.format(q=q, passages=_numbered(shown))), AIMessage(verdict)]
    shown = [(str(p["title"]), str(p["text"])) for p in passages]
    messages.append(HumanMessage(SUFFICIENT_QUERY.format(q=question, passages=_numbered(shown))))
    return messages


#: One judged case: (question id, label, {decision name: predicted}).
Case = dict[str, Any]


def margin(llm: Any, messages: Any) -> float:
    yes, no = prompts.LABELS
    scores = llm.judge(messages, prompts.LABELS)
    return scores[yes] - scores[no]


def cross_fitted(cases: Sequence[Case], key: str) -> list[bool]:
    """Each case decided by the threshold on ``key`` fitted on the other half of the questions."""
    ids = list(dict.fromkeys(c["qid"] for c in cases))
    halves = (set(ids[0::2]), set(ids[1::2]))
    out = [False] * len(cases)
    for held, fit in ((halves[0], halves[1]), (halves[1], halves[0])):
        train = [c for c in cases if c["qid"] in fit]
        tau = fit_tau([c[key] for c in train], [c["label"] for c in train])
        for i, c in enumerate(cases):
            if c["qid"] in held:
                out[i] = c[key] > tau
    return out


def bootstrap_balanced(cases: Sequence[Case], predicted: Sequence[bool], rounds: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% interval of the balanced accuracy, resampling whole questions."""
    by_question: dict[str, list[int]] = {}
    for i, c in enumerate(cases):
        by_question.setdefault(c["qid"], []).append(i)
    groups, rng, values = list(by_question.values()), random.Random(seed), []
    for _ in range(rounds):
        idx = [i for g in rng.choices(groups, k=len(groups)) for i in g]
        values.append(balanced_accuracy([cases[i]["label"] for i in idx], [predicted[i] for i in idx]))
    values.sort()
    return values[int(0.025 * rounds)], values[int(0.975 * rounds) - 1]


def row(name: str, cases: Sequence[Case], predicted: Sequence[bool], score: Sequence[float] | None = None) -> dict[str, Any]:
    labels = [c["label"] for c in cases]
    right = sum(p == y for p, y in zip(predicted, labels, strict=True))
    positives = [p for p, y in zip(predicted, labels, strict=True) if y]
    negatives = [not p for p, y in zip(predicted, labels, strict=True) if not y]
    return {
        "decision": name,
        "n": len(cases),
        "accuracy": right / len(cases),
        "accuracy_ci95": list(proportion_ci(right, len(cases))),
        "balanced_accuracy": balanced_accuracy(labels, predicted),
        "balanced_ci95": list(bootstrap_balanced(cases, predicted)),
        "positives_found": f"{sum(positives)}/{len(positives)}",
        "negatives_found": f"{sum(negatives)}/{len(negatives)}",
        "auroc": auroc(score, [float(y) for y in labels]) if score is not None else None,
    }


def timed(fn: Callable[[], Any], spent: list[float]) -> Any:
    started = time.perf_counter()
    out = fn()
    spent.append(time.perf_counter() - started)
    return out


def judge_self_knowledge(res: Any, questions: Sequence[Any], spent: list[float]) -> list[Case]:
    cases = []
    for q in questions:
        m = timed(lambda q=q: margin(res.llm, prompts.know_messages(q.question)), spent)
        reply = res.llm.generate(prompts.self_answer_messages(q.question), temperature=0.0, max_tokens=48, schema=prompts.ANSWER_SCHEMA)
        said = read_answer(str(reply.content))
        cases.append({"qid": q.id, "label": bool(cover_em(said, q.answers)), "margin": m, "closed_book": said})
    return cases


def judge_relevance(res: Any, cfg: Configuration, questions: Sequence[Any], spent: list[float]) -> list[Case]:
    from sunar.baselines.ra_isf.nodes import reranked

    cases = []
    for q in questions:
        for p in reranked(res, q.question, cfg):
            m = timed(lambda q=q, p=p: margin(res.llm, prompts.relevance_messages(q.question, p)), spent)
            cases.append({"qid": q.id, "label": p["id"] in set(q.supporting_ids), "margin": m, "score": float(p["score"]), "passage": p["id"]})
        print(f"[relevance] {q.id}: {len(cases)} passages judged", file=sys.stderr, flush=True)
    return cases


def judge_sufficiency(res: Any, cfg: Configuration, relevance: Sequence[Case], questions: Sequence[Any], spent: list[float]) -> list[Case]:
    """For each question with passages the relevance judge keeps (the scorer's, as the cpu profile
    decides), one call over them together; labelled sufficient when one of them holds a gold answer.
    The passages are the relevance cases' own (in their ranked order), read back from the index."""
    cases = []
    for q in questions:
        kept = [c["passage"] for c in relevance if c["qid"] == q.id and c["score"] > cfg.relevance_threshold]
        found = {d.id: d for d in res.index.documents(kept)} if kept else {}
        passages = [{"id": i, "title": found[i].title, "text": found[i].text} for i in kept if i in found]
        if not passages:
            continue
        m = timed(lambda q=q, passages=passages: margin(res.llm, sufficient_messages(q.question, passages)), spent)
        label = any(cover_em(f"{p['title']} {p['text']}", q.answers) for p in passages)
        cases.append({"qid": q.id, "label": label, "margin": m, "relevant": len(passages), "passages": [p["id"] for p in passages]})
    return cases


def decomposition_right(generated: Sequence[str], gold: Sequence[str]) -> bool:
    """As many sub-questions as the gold, the first holding half the gold first one's content words."""
    if len(generated) != len(gold) or not gold:
        return False
    want = content_words(gold[0])
    return bool(want) and len(want & content_words(generated[0])) >= len(want) / 2


def judge_decomposition(res: Any, questions: Sequence[Any], spent: list[float]) -> list[Case]:
    cases = []
    for q in questions:
        if not q.sub_questions:
            continue
        reply = timed(lambda q=q: res.llm.generate(prompts.decompose_messages(q.question), temperature=0.0, max_tokens=128, schema=prompts.SCHEMA), spent)
        subs, _ = prompts.parse_sub_questions(str(reply.content), [q.question])
        gold = [s for s, _, _ in q.sub_questions]
        cases.append({"qid": q.id, "label": True, "right": decomposition_right(subs, gold), "generated": subs, "gold": gold})
    return cases


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_index_arguments(parser, questions=False)
    parser.add_argument("--skip", type=int, default=100, help="leave out the first N questions (the reported evaluations')")
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--llm", default="embedded:qwen2.5-1.5b")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    from sunar.resources import POOL

    cfg = Configuration.resolve({"profile": "cpu", "index_dir": str(args.index), "llm": args.llm})
    res = POOL.get(cfg)
    questions = interleave(read_questions(questions_file(args)))[args.skip : args.skip + args.limit]
    seconds: dict[str, list[float]] = {"know": [], "relevance": [], "sufficient": [], "decompose": []}
    know = judge_self_knowledge(res, questions, seconds["know"])
    relevance = judge_relevance(res, cfg, questions, seconds["relevance"])
    sufficient = judge_sufficiency(res, cfg, relevance, questions, seconds["sufficient"])
    decomposition = judge_decomposition(res, questions, seconds["decompose"])

    rows = {
        "self_knowledge": [
            row("LLM judge, argmax", know, [c["margin"] > 0 for c in know], [c["margin"] for c in know]),
            row("LLM judge, threshold fitted on the other half", know, cross_fitted(know, "margin")),
            row("always 'no' (retrieve every time)", know, [False] * len(know)),
        ],
        "relevance": [
            row("LLM judge, argmax (RA-ISF's default)", relevance, [c["margin"] > 0 for c in relevance], [c["margin"] for c in relevance]),
            row("LLM judge, threshold fitted on the other half", relevance, cross_fitted(relevance, "margin")),
            row("scorer's score, threshold fitted on the other half", relevance, cross_fitted(relevance, "score"), [c["score"] for c in relevance]),
        ],
        "sufficiency": [
            row("LLM judge, argmax", sufficient, [c["margin"] > 0 for c in sufficient], [c["margin"] for c in sufficient]),
            row("LLM judge, threshold fitted on the other half", sufficient, cross_fitted(sufficient, "margin")),
            row("two or more relevant passages", sufficient, [c["relevant"] >= 2 for c in sufficient], [c["relevant"] for c in sufficient]),
            row("always 'yes' (RA-ISF with a relevance judge only)", sufficient, [True] * len(sufficient)),
        ],
    }
    right = sum(c["right"] for c in decomposition)
    summary = {
        "llm": args.llm,
        "questions": f"dev questions {args.skip + 1}-{args.skip + len(questions)}",
        "seconds_per_call": {k: (sum(v) / len(v) if v else None) for k, v in seconds.items()},
        "rows": rows,
        "decomposition": {"n": len(decomposition), "right": right, "accuracy": right / max(1, len(decomposition)), "ci95": list(proportion_ci(right, len(decomposition)))},
        "closed_book_right": f"{sum(c['label'] for c in know)}/{len(know)}",
    }
    print(json.dumps({k: v for k, v in summary.items()}, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({**summary, "cases": {"know": know, "relevance": relevance, "sufficiency": sufficient, "decomposition": decomposition}}, indent=2) + "\n")


if __name__ == "__main__":
    main()
