"""The product's graphs as ``langgraph dev`` serves them, with the oracle (tests/oracle.py) as the
LLM of every run: the server test's langgraph.json points here."""

from oracle import use_oracle

use_oracle()

from sunar.baselines.gensco.graph import gensco, gensco_stop  # noqa: E402
from sunar.baselines.ra_isf.graph import ra_isf  # noqa: E402
from sunar.graph import self_ask, sunar, sunar_no_asu, sunar_r  # noqa: E402

__all__ = ["gensco", "gensco_stop", "ra_isf", "self_ask", "sunar", "sunar_no_asu", "sunar_r"]
