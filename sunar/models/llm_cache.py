"""A persistent cache of LLM calls, so an interrupted evaluation continues where it stopped and a
rerun of finished work costs nothing.

One SQLite file; a row per call keyed by (model, kind, prompt messages, parameters, sample index),
holding the reply as JSON and the seconds the call took when it was computed (so cost figures stay
those of computing, not of reading the cache). Safe to share between threads; writes are committed
one by one, so a killed run loses at most the call in flight. A write that fails (disk full, a
read-only file) loses only that row: the call's result is still returned, and a warning is logged
once. Threads that ask the same call at once (parallel chains) compute it once: ``claim(key)`` makes
the later ones wait for the first, so a first run and its replay give the same records.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sunar.errors import SunarError

log = logging.getLogger("sunar")
SCHEMA = "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, value TEXT NOT NULL, seconds REAL NOT NULL)"


def call_key(*parts: Any) -> str:
    """A stable key for JSON-serialisable parts."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class CallCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(SCHEMA)
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            raise SunarError(f"{self.path} is not an LLM call cache ({exc}); move it away or choose another cache file") from None
        self.write_failed = False  # warned once
        self._claims: dict[str, list] = {}  # key in flight -> [its lock, threads holding or waiting]

    @contextmanager
    def claim(self, key: str) -> Iterator[None]:
        """Hold ``key`` while it is looked up and computed; another thread claiming it waits."""
        with self._lock:
            entry = self._claims.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self._lock:
                entry[1] -= 1
                if entry[1] == 0:
                    del self._claims[key]

    def get(self, key: str) -> tuple[Any, float] | None:
        """(value, seconds it took to compute) or None."""
        with self._lock:
            row = self._db.execute("SELECT value, seconds FROM calls WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
        return json.loads(row[0]), float(row[1])

    def put(self, key: str, value: Any, seconds: float) -> None:
        with self._lock:
            try:
                self._db.execute("INSERT OR REPLACE INTO calls VALUES (?, ?, ?)", (key, json.dumps(value), seconds))
                self._db.commit()
            except sqlite3.Error as exc:
                self._db.rollback()
                if not self.write_failed:
                    self.write_failed = True
                    log.warning("cannot write to the LLM call cache %s (%s); answers go on, but calls are not kept for a rerun", self.path, exc)

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
