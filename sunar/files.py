"""Files the product writes so that a kill at any moment leaves them whole: JSON written under a
temporary name and renamed, and an exclusive lock that names its holder."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sunar.errors import SunarError


def write_json(path: Path, data: Any) -> None:
    """``data`` as indented JSON at ``path``, whole or not at all (a temporary file, then a rename)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


@contextmanager
def pid_lock(path: Path, busy: str) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` for the block, with this process's pid written in the
    file. Held by another process: a :class:`SunarError` of ``busy`` with ``{pid}`` filled in with
    the holder's. The lock is the kernel's (flock), so it ends with the process, however it ends."""
    with open(path, "a+", encoding="utf-8") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            raise SunarError(busy.format(pid=f.read().strip() or "unknown")) from None
        f.truncate(0)
        f.write(str(os.getpid()))
        f.flush()
        yield
