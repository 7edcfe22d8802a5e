"""Every graph's fields in one configuration, for the entry points that run any graph or several:
the CLI's ``--set``, ``sunar eval`` (one run's settings, recorded in its run.json, serve all its
variants) and the OpenAI endpoint's client settings.

Each graph reads only its own class's fields from it (:meth:`~sunar.settings.Settings.from_runnable_config`),
so a field another graph reads is accepted and left alone, as ``--set ra_isf_depth=2`` is by a
``sunar`` run.
"""

from __future__ import annotations

from sunar.baselines.gensco.configuration import GenscoConfiguration
from sunar.baselines.ra_isf.configuration import RaIsfConfiguration


class AnyConfiguration(GenscoConfiguration, RaIsfConfiguration):
    """SUNAR's configuration with every baseline's own fields (``rag``'s are GenSco's pool)."""
