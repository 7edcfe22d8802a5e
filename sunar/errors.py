"""The one exception type users see.

Every failure a user can fix (bad input, missing index, model server down) is raised as a
:class:`SunarError` whose message is one line that says what to do. The CLI prints it without a
traceback; anything else is a bug.
"""


class SunarError(Exception):
    """A user-facing error: one line, with the fix."""


class ModelUnavailable(SunarError):
    """A configured model cannot be reached or loaded."""


class IndexNotReady(SunarError):
    """The index is missing, incomplete or incompatible."""


class ConfigurationError(SunarError, ValueError):
    """A configuration value is unknown, of the wrong type or out of range. (A ValueError too: the
    LangGraph server shows a ValueError's message to its client and hides other errors'.)"""


class RunCancelled(SunarError):
    """A run stopped before its end because its client went away or the server is shutting down
    (:mod:`sunar.cancel`)."""
