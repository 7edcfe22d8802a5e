"""Measurement scripts (``python -m benchmarks.<name> --help``); their figures are in RESULTS.md.

The scripts that read the multi-hop data (``dev.jsonl`` and ``corpus.jsonl``) take its folder from
``--data DIR`` or, without it, from the environment variable ``SUNAR_DATA``. Results kept with
``--out`` go under ``benchmarks/results/<name>/``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

#: The repository's test folder (the scripted LLM test double lives there).
TESTS = Path(__file__).resolve().parents[1] / "tests"

DATA_HELP = "the folder with dev.jsonl and corpus.jsonl (default: $SUNAR_DATA)"


def add_data_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--data DIR`` option every script that reads the shared data takes."""
    parser.add_argument("--data", type=Path, default=None, metavar="DIR", help=DATA_HELP)


def add_index_arguments(parser: argparse.ArgumentParser, *, questions: bool = True) -> None:
    """``--index DIR`` and ``--data DIR``, and with ``questions`` ``--questions FILE``: what every
    script that retrieves from an index of the shared data takes (:func:`questions_file` reads them)."""
    parser.add_argument("--index", required=True, help="index directory of the corpus (sunar index)")
    add_data_argument(parser)
    if questions:
        parser.add_argument("--questions", type=Path, default=None, help="questions JSONL (default: DIR/dev.jsonl)")


def questions_file(args: argparse.Namespace) -> Path:
    """``--questions FILE``, else the data folder's dev.jsonl (:func:`add_index_arguments`)."""
    return getattr(args, "questions", None) or data_dir(args.data) / "dev.jsonl"


def data_dir(arg: str | Path | None) -> Path:
    """The data folder: ``--data DIR``, else ``$SUNAR_DATA``; exits with one line when neither is
    given or the folder does not exist."""
    given = arg or os.environ.get("SUNAR_DATA")
    if not given:
        raise SystemExit("error: give --data DIR (the folder with dev.jsonl and corpus.jsonl) or set SUNAR_DATA")
    folder = Path(given).expanduser()
    if not folder.is_dir():
        raise SystemExit(f"error: the data folder {str(folder)!r} does not exist (give --data DIR or set SUNAR_DATA)")
    return folder


def scripted_llm(script: Any, name: str = "scripted") -> Any:
    """The scripted LLM test double (``tests/scripted.py``) over ``script(prompt, i) -> reply``."""
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    from scripted import ScriptedLLM

    return ScriptedLLM(script, name)
