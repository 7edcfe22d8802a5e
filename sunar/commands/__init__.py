"""The ``sunar`` sub-commands, one module per group (:mod:`sunar.cli` assembles them)."""
