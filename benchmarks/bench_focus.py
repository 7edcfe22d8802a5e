"""How a hop reads the pages its sub-question names: those alone (``focus_pages``, both graphs' default),
those first and then the others, or all of them in their ranked order; each against the data's first bridge.

Usage::

    python -m benchmarks.bench_focus evals/results/RUN --variant VARIANT --index INDEX_DIR [--data DIR]
        [--llm embedded:qwen2.5-1.5b] [--out benchmarks/results/focus-reading/results.json]

The first sub-question of each record's chain shown is answered once, greedily, with the answer prompt
(the reading alone: the product's check for the worked example's name could only make an answer unknown),
from its pages as :func:`benchmarks.subsets.pages_of` finds them again, in each order, where it names some
of its pages but not all (elsewhere the three orders are one). A reading is right when it holds the data's
first-step answer (MuSiQue's decomposition, 2Wiki's first evidence triple; cover-EM). For development runs
only (dev 1-100): it asks whether a change to ``focus_pages`` is worth a run. Resumable: a question already
in ``--out`` is not read again.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks import add_chain_arguments, chains_of, data_dir, kept, resumed
from benchmarks.subsets import pages_of
from sunar.configuration import Configuration
from sunar.evals.metrics import cover_em, paired_comparison
from sunar.prompts.answer import SCHEMA, answer_messages, read_answer, short_call
from sunar.text import named_pages_of

ORDERS = ("the named pages only", "the named pages, then the others", "all pages, ranked")


def orders(question: str, pages: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]] | None:
    """The pages in each of :data:`ORDERS`; None where the question names none of them or all."""
    named = named_pages_of(question, pages)
    if not named or len(named) == len(pages):
        return None
    return dict(zip(ORDERS, (named, [*named, *(p for p in pages if p not in named)], list(pages)), strict=True))


def first_step(row: Mapping[str, Any]) -> str:
    """A dev question's first-step answer: MuSiQue's decomposition, 2Wiki's first evidence triple."""
    return str(row["decomposition"][0]["answer"] if row.get("decomposition") else row["evidence_triples"][0][2])


def first_steps(path: Path) -> dict[str, str]:
    """Each question's :func:`first_step`, by id, from a dev.jsonl file."""
    return {r["id"]: first_step(r) for r in (json.loads(line) for line in path.read_text().splitlines() if line.strip())}


def read_each(question: str, pages: Sequence[Mapping[str, Any]], ask: Callable[[str, Sequence[Mapping[str, Any]]], str], gold: str) -> dict[str, Any] | None:
    """A first sub-question read in each order (``ask``: the answer to a question from pages): the
    pages' titles, the named ones' count, each order's answer and whether it holds ``gold``."""
    ways = orders(question, pages)
    if ways is None:
        return None
    answers = {name: ask(question, read) for name, read in ways.items()}
    return {"question": question, "gold": gold, "pages": [p["title"] for p in pages], "named": len(ways[ORDERS[0]]),
            "answers": answers, "right": {name: bool(cover_em(a, [gold])) for name, a in answers.items()}}


def summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Each order's right readings, and its wins and losses (sign test) against the named pages only."""
    base = [float(r["right"][ORDERS[0]]) for r in rows]
    return {name: {"right": sum(r["right"][name] for r in rows), "read": len(rows),
                   **({} if name == ORDERS[0] else paired_comparison([float(r["right"][name]) for r in rows], base))} for name in ORDERS}


def reading_again(index_dir: Path, llm_spec: str) -> tuple[Any, Any, Any, Callable[[str, Sequence[Mapping[str, Any]]], str]]:
    """The index a run read, its scorer, the LLM, and a reader: a question's answer from pages, as a hop
    reads it (the answer prompt, greedily)."""
    from sunar.models.providers import make_llm
    from sunar.models.scorer import make_scorer
    from sunar.stores.index import Index

    index = Index(index_dir)
    scorer, llm, cfg = make_scorer("hybrid", index.embedder), make_llm(llm_spec), Configuration(llm=llm_spec)

    def ask(question: str, pages: Sequence[Mapping[str, Any]]) -> str:
        return read_answer(str(llm.generate(answer_messages(question, pages), temperature=0.0, **short_call(cfg, SCHEMA)).content))

    return index, scorer, llm, ask


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_chain_arguments(p, "benchmarks/results/focus-reading/results.json", "first sub-questions are read")
    args = p.parse_args(argv)
    gold = first_steps(data_dir(args.data) / "dev.jsonl")
    records = chains_of(args.run, args.variant)
    index, scorer, llm, ask = reading_again(args.index, args.llm)
    done = resumed(args)
    for record in records:
        if record["id"] in done["rows"]:
            continue
        question = record["reasoning_path"][0]["question"]
        done["rows"][record["id"]] = read_each(question, pages_of(index, scorer, question), ask, gold[record["id"]])
        kept(done, args.out, lambda rows: summary([r for r in rows if r]))
    print(json.dumps(done.get("summary"), indent=1))


if __name__ == "__main__":
    main()
