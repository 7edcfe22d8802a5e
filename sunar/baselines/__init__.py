"""The other systems of the source papers, each its own graph on the same stores, models and
configuration as SUNAR, so the approaches compare on one corpus with one command.

    gensco/   GenSco: greedy passage selection guided by a step-by-step decomposition
    ra_isf/   RA-ISF: retrieval-augmented iterative self-feedback

Each folder holds the same four files: ``graph.py``, ``nodes.py``, ``state.py``, ``prompts.py``.
"""
