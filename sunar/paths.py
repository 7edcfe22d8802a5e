"""Where the product keeps its files: caches, the demo index, checkpoints (``$SUNAR_HOME``)."""

from __future__ import annotations

import os
from pathlib import Path

#: The bundled demo corpus (16 two-hop chains and distractors, in the project's own words).
DEMO_CORPUS = Path(__file__).parent / "data" / "demo_corpus.jsonl"


def sunar_home() -> Path:
    """Directory for caches and the demo index (``$SUNAR_HOME``, default ``~/.cache/sunar``)."""
    base = os.environ.get("SUNAR_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "sunar"
    )
    return Path(base)
