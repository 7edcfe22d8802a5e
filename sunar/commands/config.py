"""``sunar config``: a graph's configuration as a run with the same options would resolve it. Each
field the graph reads, with its value, its default (the paper's) where that differs, and its description
(the same text LangGraph Studio shows). The fields users set (their group ``common``,
:func:`sunar.settings.group`) are listed; ``--all`` lists every one."""

from __future__ import annotations

import argparse
import json
import textwrap
from typing import Any

from sunar.commands.common import model_options, run_config


def rows_of(name: str, values: dict[str, Any], every: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
    """The fields graph ``name`` reads, in its configuration's order, each with its value in ``values``
    (a resolved run's), the paper's default and its description; and the names left out (all but the
    common ones, unless ``every``; a baseline's own fields are always shown with it)."""
    from sunar.configuration import Configuration
    from sunar.graph import build_graph, unread_fields
    from sunar.settings import fields_where

    schema, unread = build_graph(name).context_schema, unread_fields(name)
    common = set(fields_where(schema, "common")) | (set(schema.model_fields) - set(Configuration.model_fields))
    rows, left_out = [], []
    for field, info in schema.model_fields.items():
        if field in unread:
            continue
        if field not in common and not every:
            left_out.append(field)
            continue
        rows.append({"field": field, "value": values[field], "paper": info.default, "description": info.description or ""})
    return rows, left_out


def shown(value: Any) -> str:
    """A value as ``--set FIELD=VALUE`` takes it."""
    if isinstance(value, bool):
        return str(value).lower()
    return '""' if value == "" else str(value)


def cmd_config(args: argparse.Namespace) -> int:
    from sunar.graph import check_graph

    values = run_config(args)
    rows, left_out = rows_of(check_graph(args.variant), values, args.all)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, default=str))
        return 0
    print(f"{args.variant}: profile {values['profile']}, LLM {values['llm']} (the defaults are the paper's; --set FIELD=VALUE sets one)")
    for row in rows:
        paper = "" if shown(row["value"]) == shown(row["paper"]) else f"   (default: {shown(row['paper'])})"
        print(f"  {row['field']} = {shown(row['value'])}{paper}")
        print(textwrap.fill(row["description"], width=100, initial_indent="      ", subsequent_indent="      "))
    if left_out:
        print(f"{len(left_out)} more fields: --all lists them ({', '.join(left_out)})")
    return 0


def add(sub: Any) -> None:
    """Its sub-command, on the ``sunar`` parser."""
    p = sub.add_parser("config", help="a graph's configuration fields: each value as a run would resolve it, the paper's default, what it does")
    p.add_argument("--variant", default="sunar", help="the graph whose fields to list (default: sunar)")
    model_options(p)
    p.add_argument("--all", action="store_true", help="every field the graph reads, not only the ones users usually set")
    p.add_argument("--json", action="store_true", help="print one JSON list of {field, value, paper, description}")
    p.set_defaults(func=cmd_config)
