"""``sunar eval``: run variants over questions, write predictions, metrics, a report and plots.

    OUT/run.json           the settings (a rerun with other settings into OUT is refused)
    OUT/predictions.jsonl  one line per (question, variant), appended as each finishes
    OUT/llm-cache.sqlite   every LLM call made (a rerun reads it instead of calling the model)
    OUT/metrics.json, OUT/report.md, OUT/*.png   written at the end (see sunar.evals.report)

Resumable: (question, variant) pairs already in predictions.jsonl are skipped, and a question
interrupted half-way replays its finished LLM calls from the cache. A pair that ended in an error is
recorded with it (``error`` field; counted in the report) and the run goes on; a rerun skips it too
unless ``retry_errors`` is set. The records and the predictions file are :mod:`sunar.evals.predictions`. Everything the caller chose is checked before the index is built,
and one run at a time writes to OUT (OUT/eval.lock, held with flock until the process ends).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import Any

from sunar.baselines.configuration import AnyConfiguration
from sunar.errors import ModelUnavailable, SunarError, disk_full, unexpected
from sunar.evals.data import Question, read_questions
from sunar.evals.predictions import end_cleanly, error_record, latest, prediction, read_predictions, unpack
from sunar.files import pid_lock, write_json
from sunar.paths import sunar_home
from sunar.stores.corpus import fingerprint, read_corpus

log = logging.getLogger("sunar")
#: Fields one variant of a run may not set apart from the others: the run's index, its LLM call
#: cache and Chroma server are the run's own, and a profile only fills fields already set here.
RUN_FIELDS = frozenset({"index_dir", "llm_cache", "chroma_url", "profile"})


@dataclass
class EvalSettings:
    questions: str
    corpus: str
    variants: list[str]
    out: str
    limit: int = 0
    #: Questions passed over first (datasets interleaved), so a run can take the next ones: held
    #: out from an earlier run's, for example to check a calibration fitted on those.
    skip: int = 0
    index: str = ""
    #: Configuration fields the run sets, any graph's (resolved by :meth:`AnyConfiguration.resolve`;
    #: the profile fills the rest). Default: the embedded model, with its cpu profile.
    configuration: dict[str, Any] = field(default_factory=lambda: {"llm": "embedded:qwen2.5-1.5b"})
    workers: int = 1
    #: Run again the pairs whose earlier attempt ended in an error (else a rerun skips them).
    retry_errors: bool = False
    #: The graphs that take a candidate pool (GenSco, rag) choose from each question's ``pool_ids``
    #: (the GenSco paper's setting) instead of the first stage over the corpus.
    given_pools: bool = False


def interleave(questions: Sequence[Question]) -> list[Question]:
    """Alternate between datasets (MuSiQue, 2Wiki, ...) so any prefix is balanced."""
    groups: dict[str, list[Question]] = {}
    for q in questions:
        groups.setdefault(q.dataset, []).append(q)
    return [q for row in zip_longest(*groups.values()) for q in row if q is not None]


def variant_graph(variant: str) -> str:
    """The graph a variant runs: ``sunar+first_stage=bm25`` runs ``sunar``."""
    return variant.split("+", 1)[0].strip()


def variant_settings(variant: str) -> dict[str, str]:
    """The configuration fields a variant sets on top of the run's: ``graph+FIELD=VALUE+...``
    (an ablation: one switch turned, compared in the same run from the same LLM cache)."""
    settings: dict[str, str] = {}
    for item in variant.split("+")[1:]:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise SunarError(f"variant {variant!r}: write GRAPH+FIELD=VALUE (for example sunar+first_stage=bm25)")
        if key.strip() in RUN_FIELDS:
            raise SunarError(f"variant {variant!r}: {key.strip()} is the run's, not one variant's; set it with --set (or --index)")
        settings[key.strip()] = raw.strip()
    return settings


def default_index_dir(corpus: str | Path) -> Path:
    path = Path(corpus).resolve()
    return sunar_home() / "indexes" / f"{path.stem}-{hashlib.sha1(str(path).encode()).hexdigest()[:10]}"


def exclusive(out: Path) -> AbstractContextManager[None]:
    """Hold OUT/eval.lock while the run writes to OUT: a second run into OUT is refused with one
    line (:func:`sunar.files.pid_lock`)."""
    return pid_lock(out / "eval.lock", f"another sunar eval (pid {{pid}}) is writing to {out}; wait for it to end or choose another --out")


def run_config(settings: EvalSettings, out: Path, variant: str = "") -> dict[str, Any]:
    """Every configuration field of the run (or of one of its variants, with the fields it sets):
    the settings', its index and its LLM call cache."""
    own = variant_settings(variant)
    values = {**settings.configuration, **own, "index_dir": str(settings.index), "llm_cache": str(out / "llm-cache.sqlite")}
    try:
        configurable = AnyConfiguration.resolve(values).values()
    except SunarError as exc:
        if not own:
            raise
        raise type(exc)(f"variant {variant!r}: {exc}") from None
    return configurable


def _value(v: Any) -> str:
    """A setting as ``--set`` takes it (true/false for a switch)."""
    return str(v).lower() if isinstance(v, bool) else str(v)


def check_settings(out: Path, settings: EvalSettings, configurable: dict[str, Any]) -> None:
    """Write OUT/run.json, or check that a previous run into OUT used the same settings
    (variants may be added)."""
    described = {  # files by name and content, so a run is the same wherever its data lies
        "questions": {"file": Path(settings.questions).name, "sha256": fingerprint(Path(settings.questions))},
        "corpus": {"file": Path(settings.corpus).name, "sha256": fingerprint(Path(settings.corpus))},
        "configuration": {k: v for k, v in configurable.items() if k not in {"llm_cache", "index_dir"}},
        "given_pools": settings.given_pools,
    }
    path = out / "run.json"
    variants = list(settings.variants)
    if path.exists():
        try:
            before = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise SunarError(f"{path} is damaged ({exc}); restore it, or delete it to record this run's settings afresh") from None
        # a field the configuration gained (or lost) since the run started leaves its default's behaviour
        earlier = before.get("configuration") or {}
        same_fields = {k: earlier.get(k, v) for k, v in described["configuration"].items()}
        before = {"given_pools": False, **before}  # a run from before the setting used none
        files = [k for k in ("questions", "corpus", "given_pools") if before.get(k) != described[k]]
        fields = {k: earlier[k] for k, v in described["configuration"].items() if same_fields[k] != v}
        if files or fields:
            said = ", ".join([*(f"{k} differ" for k in files), *(f"{k}={_value(described['configuration'][k])} (the run: {_value(v)})" for k, v in fields.items())][:4])
            match = f"resume it with {' '.join(f'--set {k}={_value(v)}' for k, v in fields.items())}, or " if fields and not files and "llm" not in fields else ""
            raise SunarError(f"{out} holds a run with other settings: {said} (see {path}); {match}choose another --out or delete it")
        described["configuration"] = {**earlier, **described["configuration"]}
        variants = list(dict.fromkeys(before.get("variants", []) + variants))
    # written whole or not at all: a run killed (or a disk full) mid-write leaves the old file
    write_json(path, {**described, "variants": variants})


def run_eval(settings: EvalSettings, progress: bool = True, on_record: Callable[[dict[str, Any]], None] | None = None) -> Path:
    """Run every variant on every question (resuming), then write metrics, report and plots."""
    from sunar.graph import GRAPH_NAMES

    unknown = [v for v in settings.variants if variant_graph(v) not in GRAPH_NAMES]
    if unknown or not settings.variants:
        raise SunarError(
            f"unknown variant(s) {', '.join(unknown) or '(none given)'}; choose from: {', '.join(GRAPH_NAMES)} "
            "(each may add +FIELD=VALUE, e.g. sunar+first_stage=bm25)"
        )
    if settings.limit < 0:
        raise SunarError(f"--limit must be 0 (all questions) or more (got {settings.limit})")
    if settings.skip < 0:
        raise SunarError(f"--skip must be 0 or more (got {settings.skip})")
    if settings.workers < 1:
        raise SunarError(f"--workers must be 1 or more (got {settings.workers})")
    questions = interleave(read_questions(settings.questions))[settings.skip :]
    if settings.limit:
        questions = questions[: settings.limit]
    if not questions:
        past = f" after the first {settings.skip}" if settings.skip else ""
        raise SunarError(f"no questions in {settings.questions}{past}")
    if not Path(settings.corpus).is_file():
        raise SunarError(f"corpus file not found: {settings.corpus}")
    out = Path(settings.out)
    if out.exists() and not out.is_dir():
        raise SunarError(f"--out {out} is a file; choose a directory")
    settings.index = settings.index or str(default_index_dir(settings.corpus))
    configurable = run_config(settings, out)  # every choice checked before the index is built
    per_variant = {v: run_config(settings, out, v) for v in settings.variants}
    out.mkdir(parents=True, exist_ok=True)
    with exclusive(out):
        return _run(settings, questions, configurable, per_variant, out, progress, on_record)


def _run(
    settings: EvalSettings, questions: list[Question], configurable: dict[str, Any], per_variant: dict[str, dict[str, Any]],
    out: Path, progress: bool, on_record: Callable[[dict[str, Any]], None] | None,
) -> Path:
    from sunar.evals.report import write_report
    from sunar.graph import GRAPHS, build_graph
    from sunar.stores.index import build_index

    stats = build_index(settings.corpus, settings.index, progress=progress)
    if not stats.up_to_date:
        log.info("indexed %d documents into %s", stats.documents, settings.index)
    check_settings(out, settings, configurable)

    predictions_path = out / "predictions.jsonl"
    unpack(predictions_path)
    end_cleanly(predictions_path)
    done = {key for key, r in latest(read_predictions(predictions_path)).items() if not (r.get("error") and settings.retry_errors)}
    todo = [(q, [v for v in settings.variants if (q.id, v) not in done]) for q in questions]
    todo = [(q, vs) for q, vs in todo if vs]
    graphs = {v: build_graph(variant_graph(v)) for v in settings.variants}
    pooled = {v for v in settings.variants if settings.given_pools and GRAPHS[variant_graph(v)].pooled}
    lock = threading.Lock()
    bar = _progress_bar(sum(len(vs) for _, vs in todo), len(done), progress)

    def one(q: Question, variants: list[str]) -> None:
        for variant in variants:
            started = time.perf_counter()
            try:
                given = {"question": q.question, **({"pool_ids": q.pool_ids} if variant in pooled and q.pool_ids else {})}
                result = graphs[variant].invoke(given, {"configurable": per_variant[variant], "recursion_limit": 1000})
                record = prediction(q, variant, result, time.perf_counter() - started)
            except ModelUnavailable:  # no model, no answers: stop (a rerun resumes)
                raise
            except SunarError as exc:  # this question fails; the run goes on
                record = error_record(q, variant, str(exc))
            except Exception as exc:  # a bug met by this question alone: recorded too, the run goes on
                full = disk_full(exc)
                if full is not None:  # so would every question after it: stop (a rerun resumes)
                    raise full from None
                record = error_record(q, variant, unexpected(exc))
                log.warning("%s (%s): %s; recorded, going on", q.id, variant, record["error"], exc_info=log.isEnabledFor(logging.DEBUG))
            with lock:
                with open(predictions_path, "a", encoding="utf-8") as sink:
                    sink.write(json.dumps(record, ensure_ascii=False) + "\n")
                bar.update(1)
                bar.set_postfix_str(f"{variant}: {str(record.get('answer', 'error'))[:30]}")
            if on_record:
                on_record(record)

    workers = settings.workers
    if workers > 1 and str(configurable.get("llm", "")).startswith("embedded:"):
        log.info("the embedded model answers one request at a time; running with 1 worker")
        workers = 1
    try:
        if workers == 1:
            for q, vs in todo:
                one(q, vs)
        else:
            with ThreadPoolExecutor(workers) as pool:
                for future in [pool.submit(one, q, vs) for q, vs in todo]:
                    future.result()
    finally:
        bar.close()
    wanted = {(q.id, v) for q in questions for v in settings.variants}
    records = [r for key, r in latest(read_predictions(predictions_path)).items() if key in wanted]
    texts = {d.id: d.content for d in read_corpus(settings.corpus)}
    write_report(out, records, configurable, texts)
    return out


def _progress_bar(total: int, initial: int, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total + initial, initial=initial, unit="answer", desc="eval", disable=not enabled, dynamic_ncols=True)
