"""The ``sunar`` command: the sub-commands of :mod:`sunar.commands` (ask, config, data, evals, serve) on one
parser. Errors are one line on stderr, never a traceback (``--debug`` shows it)."""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
import sys
from collections.abc import Callable, Sequence

from sunar.commands import ask, config, data, evals, serve
from sunar.commands.serve import cmd_serve_openai  # noqa: F401  (the server command, as tests and users reach it)
from sunar.errors import SunarError, disk_full, unexpected


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sunar", description="SUNAR multi-hop question answering (LangGraph).")
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    sub = parser.add_subparsers(dest="command", required=True)
    for group in (data, ask, config, evals, serve):
        group.add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.INFO, format="%(message)s", stream=sys.stderr)
    # transformers' "Loading weights" bars say nothing useful to a user; transformers takes the
    # setting from huggingface_hub when it loads (importing transformers here would cost a second)
    from huggingface_hub.utils import disable_progress_bars

    disable_progress_bars()
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
    except Exception as exc:  # a full disk, else a bug: still one line, with the way to the details
        if args.debug:
            raise
        full = disk_full(exc)
        if full is not None:
            print(f"error: {full}", file=sys.stderr)
            return 1
        print(f"error: {unexpected(exc)} (rerun with --debug for details)", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
