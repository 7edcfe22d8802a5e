"""The one exception type users see.

Every failure a user can fix (bad input, missing index, model server down) is raised as a
:class:`SunarError` whose message is one line that says what to do. The CLI prints it without a
traceback; anything else is a bug.
"""

import errno
import sqlite3


class SunarError(RuntimeError):
    """A user-facing error: one line, with the fix. (A RuntimeError: the LangGraph server shows the
    message of a builtin error type such as RuntimeError or ValueError to its client, Studio or MCP,
    and replaces any other's with "An internal error occurred".)"""


class ModelUnavailable(SunarError):
    """A configured model cannot be reached or loaded."""


class IndexNotReady(SunarError):
    """The index is missing, incomplete or incompatible."""


class ConfigurationError(SunarError, ValueError):
    """A configuration value is unknown, of the wrong type or out of range (a ValueError too)."""


class RunCancelled(SunarError):
    """A run stopped before its end because its client went away or the server is shutting down
    (:mod:`sunar.cancel`)."""


class DiskFull(SunarError):
    """The disk ran out of space: nothing more can be written until some is freed."""


#: What to do once space is freed, on the command line.
RERUN = "run the same command again (an eval or an index build goes on where it stopped)"


def disk_full(exc: BaseException, then: str = RERUN) -> DiskFull | None:
    """The :class:`DiskFull` error for ``exc`` when it says the disk is full (an OSError with ENOSPC or
    EDQUOT, SQLite's "database or disk is full"), else None; its message ends with ``then``."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        where = f" writing {exc.filename}" if exc.filename else ""
    elif isinstance(exc, sqlite3.OperationalError) and "disk is full" in str(exc):
        where = " writing a SQLite database"
    else:
        return None
    return DiskFull(f"the disk is full{where}: free some space and {then}")


def unexpected(exc: BaseException) -> str:
    """One line for an error no one foresaw (a bug): its type and its message's first line."""
    first = str(exc).splitlines()[0] if str(exc) else ""
    return f"unexpected {type(exc).__name__}: {first}"
