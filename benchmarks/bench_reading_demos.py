"""Whether a hop reads better after worked readings of similar steps: the reader alone, on each dev
1-100 question's last gold step, with and without retrieved reading demonstrations.

Usage::

    python -m benchmarks.bench_reading_demos [--data DIR] [--k 2] [--llm embedded:qwen2.5-1.5b]
        [--out benchmarks/results/reading-demos/results.json]

The steps are the shipped decomposition pool's (``sunar/data/decompositions.jsonl``: dev 1-100, the
bridge answers filled in), each with its gold page (MuSiQue's step support, 2Wiki's supporting page
whose title shares most words with the step's evidence triple's subject). A step is read once,
greedily, with the answer prompt, from its gold page among four distractors of its question's own
pool (those sharing most words with the step; the gold page at a place fixed by the step's text):
first as the product reads it, then with ``--k`` reading demonstrations shown before it as worked
turns: the pool's steps shaped most like it (:func:`sunar.prompts.demonstrations.shape`), each with
its gold page and answer, never from a question that shares a gold page with it (MuSiQue repeats a
bridge across questions). A reading is right when it holds a gold answer (cover-EM) or equals one
(EM). It asks whether demonstrations of reading are worth building into the graph before a run.
Resumable: a step already in ``--out`` is not read again.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from benchmarks import add_data_argument, data_dir
from sunar.configuration import Configuration
from sunar.evals.metrics import cover_em, exact_match, paired_comparison
from sunar.prompts.answer import SCHEMA, answer_messages, ask_message, read_answer, short_call
from sunar.prompts.demonstrations import Demonstration, likeness, load_pool, shape
from sunar.prompts.structured import as_reply
from sunar.stores.corpus import read_corpus
from sunar.text import normalize_answer

WAYS = ("as the product reads", "after reading demonstrations")


def records(path: Path) -> list[dict[str, Any]]:
    """The dev records of a JSON Lines file, blank lines skipped, read raw: 2Wiki's ``evidence_triples``
    are not in :class:`sunar.evals.data.Question`."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def words(text: str) -> set[str]:
    return set(normalize_answer(text).split())


def page_of(record: Mapping[str, Any], k: int, titles: Mapping[str, str]) -> str:
    """The gold page of a dev question's step ``k``: MuSiQue's step support; for 2Wiki, the supporting
    page whose title shares most words with the step's triple's subject (ties: the k-th)."""
    if record.get("decomposition"):
        return str(record["decomposition"][k]["support_id"])
    subject, pages = words(record["evidence_triples"][k][0]), record["supporting_ids"]
    return max(pages, key=lambda i: (len(subject & words(titles.get(i, ""))), i == pages[min(k, len(pages) - 1)]))


def steps_of(pool: Sequence[Demonstration], dev: Mapping[str, Mapping[str, Any]], titles: Mapping[str, str]) -> list[dict[str, Any]]:
    """Every step of the pool's decompositions: its question and answer, its gold page, and its dev
    question's id, gold pages and page pool; the last step's golds are the question's answers."""
    out = []
    for asked, steps, _ in pool:
        record = dev[asked]
        for k, (question, answer) in enumerate(steps):
            last = k == len(steps) - 1
            out.append({"id": record["id"], "question": question, "answer": answer, "page": page_of(record, k, titles), "last": last,
                        "supporting": list(record["supporting_ids"]), "pool": list(record["pool_ids"]), "golds": list(record["answers"]) if last else [answer]})
    return out


def pages_for(step: Mapping[str, Any], corpus: Mapping[str, Mapping[str, str]], distractors: int = 4) -> list[dict[str, str]]:
    """The step's gold page among ``distractors`` pages of its question's pool that are not gold, those
    sharing most words with the step; the gold page's place is fixed by the step's text."""
    asked = words(step["question"])
    others = sorted((i for i in step["pool"] if i not in step["supporting"] and i in corpus),
                    key=lambda i: (-len(asked & words(f"{corpus[i]['title']} {corpus[i]['text']}")), i))[:distractors]
    pages = [dict(corpus[i]) for i in others]
    pages.insert(int(hashlib.sha1(step["question"].encode()).hexdigest(), 16) % (len(pages) + 1), dict(corpus[step["page"]]))
    return pages


def demonstrations(step: Mapping[str, Any], steps: Sequence[Mapping[str, Any]], k: int) -> list[Mapping[str, Any]]:
    """The ``k`` steps shaped most like ``step`` (Jaccard of :func:`shape`; ties in order), none from a
    question that shares a gold page with its own; the closest last, nearest the question."""
    mine, own = shape(step["question"]), set(step["supporting"])
    allowed = [o for o in steps if not own & set(o["supporting"])]
    return sorted(allowed, key=lambda o: -likeness(mine, o["question"]))[:k][::-1]


def messages(step: Mapping[str, Any], pages: Sequence[Mapping[str, str]], demos: Sequence[Mapping[str, Any]], corpus: Mapping[str, Mapping[str, str]]) -> list[BaseMessage]:
    """The product's answer prompt for the step, with ``demos`` as worked turns after its own examples."""
    plain = answer_messages(step["question"], pages)
    shown: list[BaseMessage] = []
    for demo in demos:
        shown += [ask_message(demo["question"], [corpus[demo["page"]]]), AIMessage(as_reply(answer=demo["answer"]))]
    return [*plain[:-1], *shown, plain[-1]]


def graded(answers: Mapping[str, str], golds: Sequence[str]) -> dict[str, dict[str, bool]]:
    """Whether each way's answer holds a gold one (cover-EM) and equals one (EM)."""
    return {"cover_em": {w: bool(cover_em(a, golds)) for w, a in answers.items()}, "em": {w: bool(exact_match(a, golds)) for w, a in answers.items()}}


def read_both(step: Mapping[str, Any], steps: Sequence[Mapping[str, Any]], corpus: Mapping[str, Mapping[str, str]], k: int,
              ask: Callable[[list[BaseMessage]], str]) -> dict[str, Any]:
    """One step read both ways (:data:`WAYS`): the answers, and whether each holds and equals a gold one."""
    pages, demos = pages_for(step, corpus), demonstrations(step, steps, k)
    answers = dict(zip(WAYS, (ask(messages(step, pages, [], corpus)), ask(messages(step, pages, demos, corpus))), strict=True))
    return {"question": step["question"], "golds": step["golds"], "demonstrations": [d["question"] for d in demos], "answers": answers,
            **graded(answers, step["golds"])}


def summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per metric, each way's right readings, and the demonstrations' wins and losses (sign test)."""
    out: dict[str, Any] = {}
    for metric in ("cover_em", "em"):
        base, shown = ([float(r[metric][w]) for r in rows] for w in WAYS)
        out[metric] = {"read": len(rows), "right": {w: int(sum(float(r[metric][w]) for r in rows)) for w in WAYS}, **paired_comparison(shown, base)}
    return out


def reading_setup(data: str | None, llm_spec: str, questions: int | None = None) -> tuple[dict[str, dict[str, str]], list[dict[str, Any]], Any, Configuration, Callable[[list[BaseMessage]], str]]:
    """What a reading benchmark needs: the corpus, the pool's steps (its first ``questions`` questions'),
    the LLM, its configuration, and a greedy reader under the answer prompt's call."""
    folder = data_dir(data)
    corpus = {d.id: {"title": d.title, "text": d.text} for d in read_corpus(folder / "corpus.jsonl")}
    dev = {r["question"]: r for r in records(folder / "dev.jsonl")}
    steps = steps_of(load_pool("")[:questions], dev, {i: d["title"] for i, d in corpus.items()})
    from sunar.models.providers import make_llm

    llm, cfg = make_llm(llm_spec), Configuration(llm=llm_spec)

    def ask(prompt: list[BaseMessage]) -> str:
        return read_answer(str(llm.generate(prompt, temperature=0.0, **short_call(cfg, SCHEMA)).content))

    return corpus, steps, llm, cfg, ask


def read_resumably(out: Path, start: dict[str, Any], todo: Sequence[tuple[str, Callable[[], dict[str, Any]]]],
                   summarise: Callable[[list[dict[str, Any]]], dict[str, Any]]) -> dict[str, Any]:
    """Each (key, read) of ``todo`` whose key ``out`` does not hold yet, read and saved with the summary
    after each (``start`` when ``out`` does not exist); the whole record at the end."""
    done = json.loads(out.read_text()) if out.exists() else start
    for key, read in todo:
        if key in done["rows"]:
            continue
        done["rows"][key] = read()
        done["summary"] = summarise(list(done["rows"].values()))
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(done, indent=1, ensure_ascii=False) + "\n")
    return done


def reading_arguments(doc: str, out: str, *, questions: bool = True) -> argparse.ArgumentParser:
    """The options of a reading benchmark: ``--llm``, with ``questions`` ``--questions N``, ``--out`` (default
    ``out``) and ``--data``; the first paragraph of ``doc`` describes it."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--llm", default="embedded:qwen2.5-1.5b")
    if questions:
        p.add_argument("--questions", type=int, default=None, help="the steps of the pool's first N questions only (default: all)")
    p.add_argument("--out", type=Path, default=Path(out))
    add_data_argument(p)
    return p


def main(argv: list[str] | None = None) -> None:
    p = reading_arguments(__doc__, "benchmarks/results/reading-demos/results.json", questions=False)
    p.add_argument("--k", type=int, default=2, help="reading demonstrations shown (default 2, as the decomposition's)")
    args = p.parse_args(argv)
    corpus, steps, _, _, ask = reading_setup(args.data, args.llm)
    todo = [(s["id"], lambda s=s: read_both(s, steps, corpus, args.k, ask)) for s in steps if s["last"]]
    done = read_resumably(args.out, {"llm": args.llm, "k": args.k, "rows": {}}, todo, summary)
    print(json.dumps(done.get("summary"), indent=1))


if __name__ == "__main__":
    main()
