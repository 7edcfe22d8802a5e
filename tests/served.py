"""The product's graphs as ``langgraph dev`` serves them (sunar.server.served), with the oracle
(tests/oracle.py) as the LLM of every run: the server test's langgraph.json points here."""

from oracle import use_oracle

use_oracle()

from sunar.server.served import gensco, gensco_stop, ra_isf, rag, self_ask, sunar, sunar_no_asu, sunar_r  # noqa: E402

__all__ = ["gensco", "gensco_stop", "ra_isf", "rag", "self_ask", "sunar", "sunar_no_asu", "sunar_r"]
