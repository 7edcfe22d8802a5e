"""A first hop asked from the question's own words: the model copies, under a grammar that allows only
spans of the question, the description of what the question hides ("the actress that played Mary Poppins
in the 1964 film"), which is then asked as "Who is ...?" or "What is ...?". Against Self-Ask's own first
sub-question from a run, each read from its pages the way a hop reads them, against the data's first bridge.

Usage::

    python -m benchmarks.bench_hidden_span evals/results/RUN --variant VARIANT --index INDEX_DIR [--data DIR]
        [--llm embedded:qwen2.5-1.5b] [--out benchmarks/results/hidden-span/results.json]

Both first sub-questions of each record (Self-Ask's, from its chain as shown, and the span's) are read
once, greedily, with the answer prompt from their pages as :func:`benchmarks.subsets.pages_of` finds them,
those the sub-question names only (``focus_pages``). A reading is right when it holds the data's first-step
answer or that holds it (MuSiQue's decomposition, 2Wiki's first evidence triple). It asks whether a
decomposition that begins so is worth building: for development runs only (dev 1-100). Resumable: a
question already in ``--out`` is not asked again.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from benchmarks import add_chain_arguments, chains_of, data_dir, kept, resumed
from benchmarks.bench_focus import first_steps, reading_again
from benchmarks.results_runs import DATASETS
from benchmarks.subsets import pages_of
from sunar.evals.metrics import paired_comparison
from sunar.prompts.structured import as_reply, object_schema, read_object
from sunar.signals import agrees
from sunar.text import focus

#: Most words a description may take (a question's spans grow with the square of its length).
MOST_WORDS = 14

SYSTEM = (
    "A complex question names a person, place or thing only by describing it, and that must be found first. "
    "Copy that description from the question word for word, the innermost one when there are several. "
    "Reply with a JSON object {\"description\": \"...\"}."
)

#: Invented worked examples, (question, description).
EXAMPLES = (
    ("Where was the director of film Harbour Lights born?", "the director of film Harbour Lights"),
    ("Who is the spouse of the author of The Lighthouse Keeper?", "the author of The Lighthouse Keeper"),
    ("When was the bridge that crosses the Kelso River built?", "the bridge that crosses the Kelso River"),
)

#: Descriptions of people, asked with "Who".
_PERSON = re.compile(
    r"\b(?:who|whom|person|man|woman|father|mother|husband|wife|spouse|son|daughter|brother|sister|child|parent|"
    r"director|composer|author|writer|screenwriter|performer|producer|founder|creator|singer|actor|actress|player|"
    r"president|king|queen|ruler|leader|ceo|physicist|rapper|cast member|voice)\b", re.IGNORECASE)


def spans_of(question: str) -> list[str]:
    """Every run of two to :data:`MOST_WORDS` words of the question (without its question mark), in order."""
    words = question.strip().rstrip("?").split()
    spans = [" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 2, min(len(words), i + MOST_WORDS) + 1)]
    return list(dict.fromkeys(spans))


def span_messages(question: str) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage(SYSTEM)]
    for asked, described in EXAMPLES:
        messages += [HumanMessage(f"Question: {asked}"), AIMessage(as_reply(description=described))]
    return [*messages, HumanMessage(f"Question: {question}")]


def asked_first(description: str) -> str:
    """The first sub-question a description gives: "Who is ...?" for a person, else "What is ...?"."""
    return f"{'Who' if _PERSON.search(description) else 'What'} is {description}?"


def ask_both(record: Mapping[str, Any], gold: str, describe: Callable[[str], str], read: Callable[[str], str]) -> dict[str, Any]:
    """One record's two first sub-questions, their answers, and whether each found the first bridge."""
    self_ask = str(record["reasoning_path"][0]["question"])
    description = describe(str(record["question"]))
    span = asked_first(description)
    answers = {"self_ask": read(self_ask), "span": read(span)}
    return {"dataset": record["dataset"], "question": record["question"], "gold": gold, "description": description,
            "asked": {"self_ask": self_ask, "span": span}, "answers": answers, "right": {k: agrees(a, gold) for k, a in answers.items()}}


def summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Right first hops each way, per dataset and in all, and the span's wins and losses (sign test)."""
    out: dict[str, Any] = {}
    for key, label in (*DATASETS, ("all", "all")):
        part = [r for r in rows if key in ("all", r["dataset"])]
        if not part:
            continue
        right = {way: [float(r["right"][way]) for r in part] for way in ("self_ask", "span")}
        out[label] = {"asked": len(part), **{way: int(sum(v)) for way, v in right.items()},
                      "span against self_ask": paired_comparison(right["span"], right["self_ask"])}
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_chain_arguments(p, "benchmarks/results/hidden-span/results.json", "first sub-questions are read")
    args = p.parse_args(argv)
    gold = first_steps(data_dir(args.data) / "dev.jsonl")
    records = chains_of(args.run, args.variant)
    index, scorer, llm, ask = reading_again(args.index, args.llm)

    def describe(question: str) -> str:
        schema = object_schema(description=tuple(spans_of(question)))
        reply = read_object(str(llm.generate(span_messages(question), temperature=0.0, max_tokens=96, schema=schema).content), schema)
        return reply["description"] if reply else question.rstrip("?")

    done = resumed(args)
    for record in records:
        if record["id"] in done["rows"]:
            continue
        done["rows"][record["id"]] = ask_both(record, gold[record["id"]], describe, lambda asked: ask(asked, focus(asked, pages_of(index, scorer, asked))))
        kept(done, args.out, summary)
    print(json.dumps(done.get("summary"), indent=1))


if __name__ == "__main__":
    main()
