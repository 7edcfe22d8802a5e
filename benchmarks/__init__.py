"""Measurement scripts (``python -m benchmarks.<name> --help``); their figures are in RESULTS.md.

The scripts that read the multi-hop data (``dev.jsonl`` and ``corpus.jsonl``) take its folder from
``--data DIR`` or, without it, from the environment variable ``SUNAR_DATA``. Results kept with
``--out`` go under ``benchmarks/results/<name>/``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
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


def add_chain_arguments(parser: argparse.ArgumentParser, out: str, what: str) -> None:
    """The arguments of a script that reads a development run's chains again: the run (``what`` says
    what of it is read), its ``--variant``, the ``--index`` it read, ``--llm``, ``--out`` and ``--data``."""
    parser.add_argument("run", type=Path, help=f"a development run (evals/results/RUN) whose {what}")
    parser.add_argument("--variant", required=True, help="the variant, as recorded, whose chains are read")
    parser.add_argument("--index", required=True, type=Path, help="the index the run read (the pages are found again)")
    parser.add_argument("--llm", default="embedded:qwen2.5-1.5b")
    parser.add_argument("--out", type=Path, default=Path(out))
    add_data_argument(parser)


def chains_of(run: Path, variant: str) -> list[dict[str, Any]]:
    """The committed records of ``variant`` in ``run`` that hold a chain; exits with one line when none does."""
    from benchmarks.results_runs import of, read_records

    records = [r for r in of(read_records(run, committed=True), variant) if r.get("reasoning_path") and not r.get("error")]
    if not records:
        raise SystemExit(f"error: {run} holds no chains of {variant!r}")
    return records


def resumed(args: argparse.Namespace) -> dict[str, Any]:
    """What an earlier run of the script kept in ``--out``, or a new record of the run it reads (:func:`add_chain_arguments`)."""
    if args.out.exists():
        return json.loads(args.out.read_text())
    return {"run": str(args.run), "variant": args.variant, "llm": args.llm, "rows": {}}


def kept(done: dict[str, Any], out: Path, summarise: Callable[[list[Any]], Any]) -> None:
    """The rows and their summary (``summarise`` of the rows), written to ``out``."""
    done["summary"] = summarise(list(done["rows"].values()))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(done, indent=1, ensure_ascii=False) + "\n")


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
