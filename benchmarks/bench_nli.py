"""Benchmark of the semantic-set judges on the labelled answer pairs of :mod:`benchmarks.nli_pairs`.

Usage::

    python -m benchmarks.bench_nli [--models qwen2.5-0.5b,qwen2.5-1.5b] [--prompts current,yesno]
                                   [--limit N] [--data DIR] [--threads N] [--dump out.jsonl]

The pairs are built from DIR/dev.jsonl (DIR: ``--data`` or ``$SUNAR_DATA``).

Options measured (each prints one row of a Markdown table):

- exact match only: answers equal after :func:`normalize_answer` are "same", all others "different"
- word-subset rule: "same" when one answer's content words contain the other's (circular here: the
  pair set was built with such rules, so it only shows how lexical the set is)
- the LLM judge per model and prompt with the argmax decision ``logp(same) > logp(different)``
- the same scores with a calibrated decision ``logp(same) - logp(different) > tau``: the pairs are
  split in two halves by question; tau is chosen on one half (best balanced accuracy) and applied to
  the other, both ways, so every pair is predicted by a tau that did not see it
- the calibrated judge behind a numeric guard: pairs whose written numbers disagree ("29 November
  1999" vs "30 November 1999") are "different" without a model call (:func:`numeric_conflict`)

Every judge row applies the product's exact-match short-cut first (no model call for those pairs);
time per pair counts model calls only, the short-cut pairs are reported separately.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from benchmarks import add_data_argument, data_dir
from benchmarks.nli_pairs import Pair, build_pairs, split_by_question, words
from sunar.models.llm import LLM
from sunar.models.nli import numeric_conflict
from sunar.prompts import nli as nli_prompt
from sunar.text import normalize_answer

# ----------------------------------------------------------------------------------------------
# Prompt variants
# ----------------------------------------------------------------------------------------------

# The first prompt the product shipped (labels same/different), kept as the baseline it was measured
# against; the product's prompt (sunar.prompts.nli.nli_messages, labels yes/no) replaced it.
SAMEDIFF_SYSTEM = (
    "You compare two answers to the same question. Reply with one word: 'same' if both answers "
    "say the same thing (one entails the other and the other entails the first), 'different' otherwise."
)
SAMEDIFF_EXAMPLES: list[tuple[str, str, str, str]] = [
    ("Where was the poet Rumi born?", "Balkh", "in the city of Balkh", "same"),
    ("Who founded the company Sony?", "Masaru Ibuka", "Akio Morita", "different"),
    ("When was the Eiffel Tower finished?", "1889", "in March 1889", "same"),
    ("Which country is Lake Titicaca in?", "Peru", "Peru and Bolivia", "different"),
    ("Who painted The Night Watch?", "Rembrandt van Rijn", "Rembrandt", "same"),
    ("What is the capital of Australia?", "Sydney", "Canberra", "different"),
]


def samediff_messages(question: str, a: str, b: str) -> list[BaseMessage]:
    """The baseline judge prompt: all exemplars in one user message, answered 'same'/'different'."""
    shots = "\n\n".join(f"Question: {q}\nAnswer 1: {x}\nAnswer 2: {y}\nVerdict: {v}" for q, x, y, v in SAMEDIFF_EXAMPLES)
    return [
        SystemMessage(SAMEDIFF_SYSTEM),
        HumanMessage(f"{shots}\n\nQuestion: {question}\nAnswer 1: {a}\nAnswer 2: {b}\nVerdict:"),
    ]


@dataclass(frozen=True)
class PromptVariant:
    """A judge prompt and its two label words.

    Attributes:
        name: Short name used on the command line and in the table.
        build: Builds the chat messages for (question, a, b).
        same: The label meaning "same".
        different: The label meaning "different".
    """

    name: str
    build: Callable[[str, str, str], list[BaseMessage]]
    same: str
    different: str


PROMPTS: dict[str, PromptVariant] = {
    "current": PromptVariant("current", samediff_messages, "same", "different"),
    "yesno": PromptVariant("yesno", nli_prompt.nli_messages, *nli_prompt.LABELS),
}

# ----------------------------------------------------------------------------------------------
# Scoring
# ----------------------------------------------------------------------------------------------


@dataclass
class Scores:
    """Judge margins for every pair under one (model, prompt).

    Attributes:
        model: The embedded model name.
        prompt: The prompt variant name.
        margins: ``logp(same) - logp(different)`` per pair (``inf`` for exact-match short-cuts).
        pair_seconds: Wall time of the model call per pair (None for short-cut pairs).
    """

    model: str
    prompt: str
    margins: list[float] = field(default_factory=list)
    pair_seconds: list[float | None] = field(default_factory=list)

    @property
    def key(self) -> str:
        """``model/prompt``, the column name in dumps."""
        return f"{self.model}/{self.prompt}"

    @property
    def seconds(self) -> list[float]:
        """Times of the model calls made."""
        return [t for t in self.pair_seconds if t is not None]

    @property
    def shortcuts(self) -> int:
        """Pairs decided by the exact-match short-cut."""
        return sum(t is None for t in self.pair_seconds)


def exact(pair: Pair) -> bool:
    """The product's short-cut: equal after normalisation.

    Args:
        pair: A labelled pair.

    Returns:
        Whether the answers are equal after :func:`normalize_answer`.
    """
    return normalize_answer(pair.a) == normalize_answer(pair.b)


def word_subset(pair: Pair) -> bool:
    """Lexical baseline: one answer's content words contain the other's.

    Args:
        pair: A labelled pair.

    Returns:
        Whether the content-word sets are nested (or equal).
    """
    wa, wb = set(words(pair.a)), set(words(pair.b))
    return bool(wa and wb) and (wa <= wb or wb <= wa)


def score(llm: LLM, variant: PromptVariant, pairs: Sequence[Pair], model: str, log_every: int = 20) -> Scores:
    """Judge every pair with one model and prompt.

    Args:
        llm: The model to judge with.
        variant: The prompt variant.
        pairs: The labelled pairs.
        model: The model name (for the result).
        log_every: Progress line every this many pairs (on stderr).

    Returns:
        The margins and call times.
    """
    result = Scores(model=model, prompt=variant.name, margins=[math.inf] * len(pairs), pair_seconds=[None] * len(pairs))
    labels = (variant.same, variant.different)
    # pairs of one question in a row: the question's tokens stay in the KV cache between them
    order = sorted(range(len(pairs)), key=lambda k: (pairs[k].question, k))
    for i, k in enumerate(order, 1):
        pair = pairs[k]
        if exact(pair):
            continue
        start = time.perf_counter()
        logp = llm.judge(variant.build(pair.question, pair.a, pair.b), labels)
        result.pair_seconds[k] = time.perf_counter() - start
        result.margins[k] = logp[variant.same] - logp[variant.different]
        if log_every and i % log_every == 0:
            print(
                f"  {model} {variant.name}: {i}/{len(pairs)} ({statistics.mean(result.seconds):.2f} s/pair)",
                file=sys.stderr,
                flush=True,
            )
    return result


def balanced_accuracy(labels: Sequence[bool], predicted: Sequence[bool]) -> float:
    """Mean of the accuracies on the "same" and on the "different" pairs.

    Args:
        labels: True labels.
        predicted: Predictions.

    Returns:
        The balanced accuracy (a class with no pairs is left out).
    """
    parts = []
    for cls in (True, False):
        idx = [i for i, y in enumerate(labels) if y == cls]
        if idx:
            parts.append(sum(predicted[i] == cls for i in idx) / len(idx))
    return sum(parts) / len(parts) if parts else 0.0


def fit_tau(margins: Sequence[float], labels: Sequence[bool]) -> float:
    """The threshold with the best balanced accuracy on (margins, labels).

    Candidates are midpoints between consecutive distinct finite margins (and one below/above all);
    among equally good ones the median candidate is taken, which keeps tau inside the best interval.

    Args:
        margins: ``logp(same) - logp(different)`` per pair.
        labels: True labels.

    Returns:
        tau; predict "same" when margin > tau.
    """
    finite = sorted({m for m in margins if math.isfinite(m)})
    if not finite:
        return 0.0
    candidates = (
        [finite[0] - 1.0] + [(x + y) / 2 for x, y in zip(finite, finite[1:], strict=False)] + [finite[-1] + 1.0]
    )
    best = -1.0
    chosen: list[float] = []
    for tau in candidates:
        acc = balanced_accuracy(labels, [m > tau for m in margins])
        if acc > best + 1e-12:
            best, chosen = acc, [tau]
        elif abs(acc - best) <= 1e-12:
            chosen.append(tau)
    return chosen[len(chosen) // 2]


@dataclass(frozen=True)
class Row:
    """One line of the result table.

    Attributes:
        option: What was measured.
        predicted: Prediction per pair.
        ms_per_pair: Mean model time per judged pair in milliseconds (None without a model).
        calls: Number of model calls.
        shortcuts: Pairs decided by the exact-match short-cut.
        note: Extra detail (tau etc.).
    """

    option: str
    predicted: list[bool]
    ms_per_pair: float | None = None
    calls: int = 0
    shortcuts: int = 0
    note: str = ""


def accuracies(pairs: Sequence[Pair], predicted: Sequence[bool]) -> tuple[float, float, float]:
    """(overall, on same-pairs, on different-pairs) accuracy.

    Args:
        pairs: The labelled pairs.
        predicted: Prediction per pair.

    Returns:
        The three accuracies (0 for an empty class).
    """

    def acc(idx: list[int]) -> float:
        return sum(predicted[i] == pairs[i].same for i in idx) / len(idx) if idx else 0.0

    everything = list(range(len(pairs)))
    return (
        acc(everything),
        acc([i for i in everything if pairs[i].same]),
        acc([i for i in everything if not pairs[i].same]),
    )


def cross_fit(pairs: Sequence[Pair], margins: Sequence[float]) -> tuple[list[bool], dict[str, float], float]:
    """Calibrated predictions where every pair is decided by a tau fitted on the other half.

    Args:
        pairs: The labelled pairs.
        margins: Their margins.

    Returns:
        (predictions, taus fitted on half A / half B / all pairs, accuracy on half B with tau from A).
    """
    labels = [p.same for p in pairs]
    half_a, _ = split_by_question(pairs)
    in_a = {id(p) for p in half_a}
    idx_a = [i for i, p in enumerate(pairs) if id(p) in in_a]
    idx_b = [i for i, p in enumerate(pairs) if id(p) not in in_a]
    tau_a = fit_tau([margins[i] for i in idx_a], [labels[i] for i in idx_a])
    tau_b = fit_tau([margins[i] for i in idx_b], [labels[i] for i in idx_b])
    predicted = [False] * len(pairs)
    for i in idx_b:
        predicted[i] = margins[i] > tau_a  # tau fitted on half A, applied to half B
    for i in idx_a:
        predicted[i] = margins[i] > tau_b
    b_only = accuracies([pairs[i] for i in idx_b], [predicted[i] for i in idx_b])[0]
    return predicted, {"tau_a": tau_a, "tau_b": tau_b, "tau_all": fit_tau(margins, labels)}, b_only


def judge_rows(pairs: Sequence[Pair], scores: Scores) -> tuple[list[Row], dict[str, float]]:
    """The argmax, the cross-fitted calibrated and the numeric-guard rows of one (model, prompt).

    Args:
        pairs: The labelled pairs.
        scores: Their judge margins.

    Returns:
        The three rows, and the taus of the calibrated row (fold A, fold B, all pairs).
    """
    margins = scores.margins
    ms = 1000 * statistics.mean(scores.seconds) if scores.seconds else 0.0
    calls = len(scores.seconds)
    name = f"LLM judge {scores.model}, prompt '{scores.prompt}'"
    argmax = Row(f"{name}, argmax (tau=0)", [m > 0 for m in margins], ms, calls, scores.shortcuts)

    predicted, taus, b_only = cross_fit(pairs, margins)
    note = (
        f"tau from half A = {taus['tau_a']:+.2f} (acc on half B {b_only:.3f}), from half B = {taus['tau_b']:+.2f}; "
        f"tau on all pairs = {taus['tau_all']:+.2f}"
    )
    calibrated = Row(f"{name}, calibrated tau (2-fold, held-out)", predicted, ms, calls, scores.shortcuts, note)

    guarded = [numeric_conflict(p.a, p.b) and math.isfinite(m) for p, m in zip(pairs, margins, strict=True)]
    guard_margins = [-math.inf if g else m for g, m in zip(guarded, margins, strict=True)]
    guard_predicted, guard_taus, guard_b = cross_fit(pairs, guard_margins)
    guard_note = (
        f"{sum(guarded)} pairs ruled different by their numbers (no call); tau from half A = "
        f"{guard_taus['tau_a']:+.2f} (acc on half B {guard_b:.3f}), from half B = {guard_taus['tau_b']:+.2f}; "
        f"tau on all pairs = {guard_taus['tau_all']:+.2f}"
    )
    guard = Row(
        f"{name}, numeric guard + calibrated tau (2-fold)",
        guard_predicted,
        ms,
        calls - sum(guarded),
        scores.shortcuts,
        guard_note,
    )
    return [argmax, calibrated, guard], taus


def table(pairs: Sequence[Pair], rows: Sequence[Row]) -> str:
    """The Markdown result table.

    Args:
        pairs: The labelled pairs.
        rows: The measured options.

    Returns:
        The table text.
    """
    n_same = sum(p.same for p in pairs)
    lines = [
        f"| option | acc (n={len(pairs)}) | acc same (n={n_same}) | acc different (n={len(pairs) - n_same}) "
        "| ms / judged pair | model calls | exact-match short-cuts | notes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        overall, same, different = accuracies(pairs, row.predicted)
        ms = "-" if row.ms_per_pair is None else f"{row.ms_per_pair:.0f}"
        lines.append(
            f"| {row.option} | {overall:.3f} | {same:.3f} | {different:.3f} | {ms} | {row.calls} | {row.shortcuts} | {row.note} |"
        )
    return "\n".join(lines)


def kind_table(pairs: Sequence[Pair], rows: Sequence[Row]) -> str:
    """Accuracy per pair kind (Markdown), one column per row.

    Args:
        pairs: The labelled pairs.
        rows: The measured options.

    Returns:
        The table text.
    """
    kinds = sorted({(p.same, p.kind) for p in pairs}, key=lambda k: (not k[0], k[1]))
    header = "| kind | n | " + " | ".join(r.option for r in rows) + " |"
    lines = [header, "|---|---|" + "---|" * len(rows)]
    for same, kind in kinds:
        idx = [i for i, p in enumerate(pairs) if p.kind == kind and p.same == same]
        cells = [f"{sum(r.predicted[i] == same for i in idx) / len(idx):.2f}" for r in rows]
        lines.append(f"| {'same' if same else 'different'}: {kind} | {len(idx)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def load_llm(name: str, threads: int | None) -> LLM:
    """An embedded model, loaded (the first forward pass happens here, not in the timed calls).

    Args:
        name: Embedded model name (``qwen2.5-0.5b`` or ``qwen2.5-1.5b``).
        threads: llama.cpp threads (None: all cores).

    Returns:
        The loaded :class:`~sunar.models.llama_cpp.EmbeddedLLM`.
    """
    from sunar.models.embedded import EmbeddedLLM

    llm = EmbeddedLLM(name)
    if threads:
        llm.chat.n_threads = threads  # read when the model loads (lazily, below)
    _ = llm.chat.llama
    return llm


def write_dump(path: str, pairs: Sequence[Pair], all_scores: Sequence[Scores]) -> None:
    """Write per-pair margins and call times (JSON Lines; ``None`` margin = exact-match short-cut).

    Args:
        path: Output file.
        pairs: The labelled pairs.
        all_scores: Scores of every (model, prompt) measured so far.
    """
    with open(path, "w", encoding="utf-8") as handle:
        for i, pair in enumerate(pairs):
            record: dict[str, object] = {
                "qid": pair.qid,
                "question": pair.question,
                "a": pair.a,
                "b": pair.b,
                "same": pair.same,
                "kind": pair.kind,
            }
            for s in all_scores:
                record[s.key] = s.margins[i] if math.isfinite(s.margins[i]) else None
                record[f"{s.key}:s"] = s.pair_seconds[i]
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def read_dumps(paths: Sequence[str], pairs: Sequence[Pair]) -> tuple[list[Pair], list[Scores]]:
    """Scores from earlier ``--dump`` files, on the pairs all of them cover (a common prefix).

    Args:
        paths: Dump files written by :func:`write_dump` for the same pair set.
        pairs: The pair set as built now (its order must match the dumps).

    Returns:
        (the covered pairs, the scores of every ``model/prompt`` column found).
    """
    dumps = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            dumps.append([json.loads(line) for line in handle if line.strip()])
    n = min([len(pairs), *map(len, dumps)])
    covered = list(pairs[:n])
    for dump in dumps:
        for pair, record in zip(covered, dump, strict=False):
            if (record["a"], record["b"], record["question"]) != (pair.a, pair.b, pair.question):
                raise SystemExit("a dump does not match the pair set; use the same --data and --per-class")
    found: list[Scores] = []
    for dump in dumps:
        for key in dump[0]:
            if "/" not in key or key.endswith(":s") or any(s.key == key for s in found):
                continue
            model, _, prompt = key.partition("/")
            margins = [math.inf if r[key] is None else float(r[key]) for r in dump[:n]]
            timed = [r.get(f"{key}:s") for r in dump[:n]]
            # old dumps without times: count the model calls, time unknown (nan)
            seconds = [
                None if r[key] is None else (math.nan if t is None else float(t))
                for r, t in zip(dump[:n], timed, strict=True)
            ]
            found.append(Scores(model=model, prompt=prompt, margins=margins, pair_seconds=seconds))
    return covered, found


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the Markdown tables.

    Args:
        argv: Command-line arguments (default: ``sys.argv[1:]``).

    Returns:
        Process exit code.
    """
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_nli", description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="qwen2.5-0.5b,qwen2.5-1.5b", help="comma-separated embedded models")
    parser.add_argument("--prompts", default="current,yesno", help=f"comma-separated, of: {', '.join(PROMPTS)}")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N pairs (a quick check)")
    parser.add_argument("--per-class", type=int, default=80, help="pairs per label in the built set")
    add_data_argument(parser)
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: all cores)")
    parser.add_argument("--dump", default=None, help="write per-pair margins and times to this JSON Lines file")
    parser.add_argument("--from-dump", default=None, help="comma-separated dump files: tables only, no model calls")
    args = parser.parse_args(argv)

    wall = time.perf_counter()
    pairs = build_pairs(data_dir(args.data) / "dev.jsonl", per_class=args.per_class)
    if args.limit:
        pairs = pairs[: args.limit]
    all_scores: list[Scores] = []
    load_seconds: dict[str, float] = {}
    if args.from_dump:
        pairs, all_scores = read_dumps(args.from_dump.split(","), pairs)
    else:
        models = [m for m in args.models.split(",") if m]
        variants = [PROMPTS[p] for p in args.prompts.split(",") if p]
        print(
            f"{len(pairs)} pairs ({sum(p.same for p in pairs)} same), models {models}, prompts {[v.name for v in variants]}",
            file=sys.stderr,
        )
        for model in models:
            start = time.perf_counter()
            llm = load_llm(model, args.threads)
            load_seconds[model] = time.perf_counter() - start
            for variant in variants:
                # the first call evaluates the whole few-shot prefix; later calls reuse it from the KV cache
                warm_up = variant.build("Who wrote Hamlet?", "Shakespeare", "Marlowe")
                llm.judge(warm_up, (variant.same, variant.different))
                all_scores.append(score(llm, variant, pairs, model))
                if args.dump:
                    write_dump(args.dump, pairs, all_scores)
            del llm

    exact_pred = [exact(p) for p in pairs]
    rows = [
        Row("exact match only (normalize_answer)", exact_pred, None, 0, sum(exact_pred)),
        Row("word-subset rule (circular: the set was built with such rules)", [word_subset(p) for p in pairs]),
    ]
    taus: dict[str, dict[str, float]] = {}
    for scores in all_scores:
        judge, taus[scores.key] = judge_rows(pairs, scores)
        rows += judge

    print(table(pairs, rows))
    print()
    print(kind_table(pairs, rows[1:]))
    print()
    for model, seconds in load_seconds.items():
        print(f"- load {model}: {seconds:.1f} s (not in ms / judged pair)")
    for scores in all_scores:
        if scores.seconds:
            median = 1000 * statistics.median(scores.seconds)
            print(f"- {scores.key}: median {median:.0f} ms / judged pair, total {sum(scores.seconds):.0f} s")
    for key, fitted in taus.items():
        print(f"- {key}: " + ", ".join(f"{k} {v:+.3f}" for k, v in fitted.items()))
    print(f"- wall time: {time.perf_counter() - wall:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
