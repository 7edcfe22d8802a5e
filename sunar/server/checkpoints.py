"""Where threads live between runs: a SQLite file (LangGraph's SqliteSaver), the default, for one
process; or a PostgreSQL database (LangGraph's PostgresSaver) that several processes share.

``sunar ask --thread ID`` and ``sunar serve-openai`` (a request that names a thread) keep each run's
checkpoints there, written before the next step starts, so a run killed half-way resumes from its
last finished step: on the same machine with the SQLite file, on any server process that reaches
the database with PostgreSQL. The LangGraph server (``langgraph dev``) keeps its own threads in
memory; this is not for it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from langgraph.checkpoint.sqlite import SqliteSaver

from sunar.errors import SunarError
from sunar.paths import sunar_home

#: The checkpoint file or database URL when no ``--checkpoints`` option names one.
ENV = "SUNAR_CHECKPOINTS"
#: Checkpoints are written before the next step starts: a killed run resumes from its last finished
#: node. Measured overhead (python -m benchmarks.bench_checkpoint) is ms per node against seconds of
#: LLM work, so the safest mode costs nothing noticeable.
DURABILITY = "sync"
#: Connections a server process keeps to PostgreSQL: one per run writing at the same moment.
POOL_SIZE = 8
#: The advisory lock under which a process creates or migrates the tables (two starting at once
#: would otherwise both try).
SETUP_LOCK = 7_356_127


def default_path() -> Path:
    return sunar_home() / "checkpoints.sqlite"


def configured(option: str | None) -> str:
    """The checkpoints a command uses: its ``--checkpoints`` option, else ``$SUNAR_CHECKPOINTS``
    ("" when neither is set)."""
    return option or os.environ.get(ENV, "")


def is_database_url(target: str | Path | None) -> bool:
    return str(target or "").startswith(("postgresql://", "postgres://"))


def shown(url: str) -> str:
    """A database URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@", 1)).geturl()


@contextmanager
def open_checkpointer(target: str | Path | None = None, saver_class: type[SqliteSaver] = SqliteSaver) -> Iterator[Any]:
    """A checkpointer on ``target``: a ``postgresql://`` URL, else a SQLite file (default:
    ``$SUNAR_HOME/checkpoints.sqlite``), its tables set up. A database that cannot be used is one
    :class:`SunarError` line saying what to do."""
    if is_database_url(target):
        with _postgres(str(target)) as saver:
            yield saver
        return
    path = Path(target or default_path())
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


@contextmanager
def _postgres(url: str) -> Iterator[Any]:
    """A PostgresSaver on a pool of connections (the runs of a server write at once). The tables
    are set up first on a connection of its own, under :data:`SETUP_LOCK`; a database that does
    not answer fails there, at once."""
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool
    except ImportError as exc:
        raise SunarError(f"a postgresql:// checkpoint database needs the postgres extra ({exc.name} is not installed): "
                         "pip install 'sunar-graph[postgres]'") from None
    options: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    try:
        with psycopg.connect(url, connect_timeout=10, **options) as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (SETUP_LOCK,))  # released when the connection closes
            PostgresSaver(conn).setup()
    except psycopg.Error as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise SunarError(f"cannot use the checkpoint database {shown(url)} ({reason}); start PostgreSQL there, "
                         f"or pass another --checkpoints URL or file ({ENV})") from None
    pool = ConnectionPool(url, min_size=1, max_size=POOL_SIZE, kwargs=options, check=ConnectionPool.check_connection, open=True)
    try:
        yield PostgresSaver(pool)
    finally:
        pool.close()


def unfinished(snapshot: Any, question: str) -> bool:
    """Whether the thread's last run asked ``question`` and did not reply yet. (A run killed
    after a node finished but before the next checkpoint has no ``next`` and its node's writes
    pending, so the reply message, written last, is what tells.)"""
    values = snapshot.values or {}
    messages = values.get("messages") or []
    return values.get("question") == question and not (messages and messages[-1].type == "ai")
