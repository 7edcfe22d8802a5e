"""What the sub-commands share: the model options and the run's configuration from them."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from sunar.errors import SunarError

log = logging.getLogger("sunar")


def model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--llm", default="auto", help="auto, ollama:<model>, embedded:<name> or openai:<model> (a server at openai_base_url)")
    p.add_argument("--scorer", default="auto")
    p.add_argument("--nli", default="auto")
    p.add_argument("--profile", choices=["auto", "paper", "cpu"], help="defaults for the fields not set: the paper's, or the smaller CPU ones (auto: cpu with the embedded model)")
    p.add_argument("--set", action="append", metavar="FIELD=VALUE", help="override a configuration field (repeatable)")


def run_config(args: argparse.Namespace) -> dict[str, Any]:
    """The run's configuration from the command line (--llm/--scorer/--nli/--profile/--index,
    then --set), checked and resolved once: every field, as the ``configurable`` section."""
    from sunar.baselines.configuration import AnyConfiguration as Configuration

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
    cfg = Configuration.resolve(values)  # checked: a typo in a model's name is one line before anything is loaded
    if args.llm == "auto":
        log.info("llm: auto -> %s", cfg.llm)
    return cfg.values()
