"""Whether the reader's own token probabilities tell a misread hop where its samples agree: the reader
alone, on dev 1-100's first and last gold steps, each read greedily, its answer's tokens scored.

Usage::

    python -m benchmarks.bench_token_confidence [--data DIR] [--llm embedded:qwen2.5-1.5b]
        [--questions N] [--out benchmarks/results/token-confidence/results.json]

S's semantic sets are blind where the 1.5B misreads with confidence (``benchmarks/RESULTS.md``: after a right
first bridge its samples agreed on 19 of the 23 later hops that ended wrong). DRAGIN triggers retrieval from
the probabilities of the tokens the model generates, which cost nothing beyond the reply: is that signal less
blind? Each step (the steps and pages of :mod:`benchmarks.bench_reading_demos`: its gold page among four
distractors of its question's pool) is read greedily with the product's answer prompt; the reply's tokens are
scored on the same context (only the reply is read again), and the answer's own tokens give three signals: the
first token's log-probability (``first``), the least one's (``least``) and their mean (``mean``). Beside them,
what S measures today: three samples at the configured temperature with the greedy answer, the largest group's
share of the four (answers grouped when one holds the other, :func:`sunar.signals.agrees`; the product groups
them by NLI). Per step kind it reports the AUROC of right against wrong readings for each signal, on all the
readings and on those whose four answers all agreed (where the sets are blind). Resumable: a step already in
``--out`` is not read again.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.bench_reading_demos import graded, pages_for, read_resumably, reading_arguments, reading_setup
from sunar.evals.calibration import auroc, auroc_interval
from sunar.models.nli import semantic_sets
from sunar.prompts.answer import SCHEMA, answer_messages, read_answer, short_call
from sunar.signals import agrees

SIGNALS = ("first", "least", "mean", "agreement")


def answer_tokens(tokens: Sequence[tuple[str, float]], reply: str, answer: str) -> list[float]:
    """The log-probabilities of the reply's tokens that overlap the answer's characters in it (the
    answer's first place in the reply, as JSON writes it; all the reply's tokens when it is not there)."""
    spelled = json.dumps(answer, ensure_ascii=False)[1:-1]
    start = reply.find(spelled) if spelled else -1
    if start < 0:
        return [p for _, p in tokens]
    end, at, out = start + len(spelled), 0, []
    for text, logprob in tokens:
        if at < end and at + len(text) > start:
            out.append(logprob)
        at += len(text)
    return out or [p for _, p in tokens]


class Holds:
    """Answers related as cover-EM relates them (:func:`sunar.signals.agrees`): equivalent when one holds the other."""

    name = "holds"

    def relation(self, question: str, a: str, b: str) -> str:
        return "equivalent" if agrees(a, b) else "contradiction"


def largest_share(answers: Sequence[str]) -> float:
    """The largest semantic set's share of ``answers`` (:func:`sunar.models.nli.semantic_sets`), answers
    grouped when one holds the other."""
    return max(len(s) for s in semantic_sets("", answers, Holds())) / len(answers)


def read_scored(step: Mapping[str, Any], corpus: Mapping[str, Mapping[str, str]], llm: Any, cfg: Any) -> dict[str, Any]:
    """One step read greedily: its answer, right or not, the answer tokens' signals and the samples' agreement."""
    prompt = answer_messages(step["question"], pages_for(step, corpus))
    call = short_call(cfg, SCHEMA)
    reply = str(llm.generate(prompt, temperature=0.0, **call).content)
    answer = read_answer(reply)
    logprobs = answer_tokens(llm.chat.token_logprobs(prompt, reply), reply, answer)
    samples = [read_answer(str(m.content)) for m in llm.sample(prompt, cfg.hop_samples or 3, temperature=cfg.temperature, **call)]
    signals = {"first": logprobs[0], "least": min(logprobs), "mean": sum(logprobs) / len(logprobs), "agreement": largest_share([answer, *samples])}
    return {"question": step["question"], "last": step["last"], "golds": step["golds"], "answer": answer, "samples": samples,
            **{k: v["greedy"] for k, v in graded({"greedy": answer}, step["golds"]).items()},
            "signals": {k: round(v, 4) for k, v in signals.items()}}


def aurocs(rows: Sequence[Mapping[str, Any]], metric: str) -> dict[str, float | None]:
    """Each signal's AUROC of right against wrong readings (None when all are right or all wrong)."""
    labels = [float(r[metric]) for r in rows]
    return {s: None if (a := auroc([r["signals"][s] for r in rows], labels)) is None else round(a, 3) for s in SIGNALS}


def mean_interval(rows: Sequence[Mapping[str, Any]], metric: str) -> list[float] | None:
    """A 95% bootstrap interval of the mean token log-probability's AUROC (None when all are right or all wrong)."""
    found = auroc_interval([r["signals"]["mean"] for r in rows], [float(r[metric]) for r in rows])
    return None if found is None else [round(x, 3) for x in found]


def summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per step kind and metric: readings, right ones, each signal's AUROC (the mean token's with a 95% interval),
    and the same where the four answers agreed."""
    out: dict[str, Any] = {}
    for kind, last in (("first steps", False), ("last steps", True)):
        mine = [r for r in rows if r["last"] == last]
        blind = [r for r in mine if math.isclose(r["signals"]["agreement"], 1.0)]
        out[kind] = {metric: {"read": len(mine), "right": int(sum(r[metric] for r in mine)), "auroc": aurocs(mine, metric),
                              "mean interval": mean_interval(mine, metric), "answers agreed": len(blind),
                              "right there": int(sum(r[metric] for r in blind)), "auroc there": aurocs(blind, metric),
                              "mean interval there": mean_interval(blind, metric)} for metric in ("cover_em", "em")}
    return out


def main(argv: list[str] | None = None) -> None:
    p = reading_arguments(__doc__, "benchmarks/results/token-confidence/results.json")
    args = p.parse_args(argv)
    corpus, steps, llm, cfg, _ = reading_setup(args.data, args.llm, args.questions)
    if not hasattr(getattr(llm, "chat", None), "token_logprobs"):
        raise SystemExit(f"error: {args.llm} gives no token log-probabilities; use an embedded model (embedded:qwen2.5-1.5b)")
    todo = [(f"{s['id']}#{s['question']}", lambda s=s: read_scored(s, corpus, llm, cfg)) for s in steps]
    done = read_resumably(args.out, {"llm": args.llm, "rows": {}}, todo, summary)
    print(json.dumps(done.get("summary"), indent=1))


if __name__ == "__main__":
    main()
