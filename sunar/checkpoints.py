"""Where threads live between runs of the CLI: a SQLite checkpointer (LangGraph's SqliteSaver).

The LangGraph server (``langgraph dev``) brings its own persistence; this is for ``sunar ask
--thread ID``, so a run killed half-way resumes from its last checkpoint and a thread keeps its
history of questions.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

from sunar.errors import SunarError
from sunar.paths import sunar_home


def default_path() -> Path:
    return sunar_home() / "checkpoints.sqlite"


@contextmanager
def open_checkpointer(path: str | Path | None = None, saver_class: type[SqliteSaver] = SqliteSaver) -> Iterator[SqliteSaver]:
    path = Path(path or default_path())
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
    try:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            saver = saver_class(conn)
            saver.setup()
        except sqlite3.DatabaseError as exc:
            raise SunarError(f"{path} is not a checkpoint database ({exc}); move it away or pass another --checkpoints file") from None
        yield saver
    finally:
        conn.close()
