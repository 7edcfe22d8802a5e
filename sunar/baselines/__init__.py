"""The other systems of the source papers, each its own graph on the same stores, models and
configuration as SUNAR, so the approaches compare on one corpus with one command.

    gensco/   GenSco: greedy passage selection guided by a step-by-step decomposition
    ra_isf/   RA-ISF: retrieval-augmented iterative self-feedback
    rag/      retrieve-then-read, the plain baseline of both papers (GenSco's pool and reader)

GenSco and RA-ISF each hold ``graph.py``, ``nodes.py``, ``state.py``, ``prompts.py`` and
``configuration.py`` (their own settings, a subclass of the shared
:class:`~sunar.configuration.Configuration` and the graph's context schema; RA-ISF's work-list of
frames is ``frames.py``); ``rag`` only ``graph.py`` and ``nodes.py``, as it borrows the rest from
GenSco. ``configuration.py`` here holds every graph's fields in one, for the entry points that run
any graph.
"""
