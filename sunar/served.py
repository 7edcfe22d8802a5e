"""The graphs ``langgraph dev`` serves (langgraph.json points here), and who may talk to them.

The graphs are :data:`sunar.graph.GRAPHS`' own, with :data:`~sunar.configuration.ClientConfiguration`
as their context: a remote client (LangGraph Studio, a chat app, the SDK) sets the algorithm's
numbers and choices, never a path, a URL or a model to load. The server's operator sets those
with environment variables (:data:`~sunar.configuration.OPERATOR_ENV`: SUNAR_LLM, SUNAR_INDEX_DIR,
...). Python callers and the CLI use :mod:`sunar.graph` and set every field.

:data:`auth` refuses a request addressed to a name other than this machine's loopback (a DNS
rebinding page) or sent by a web page of another origin than LangGraph Studio's or a local app's
(the browser sends the page's ``Origin``); langgraph.json's CORS policy allows the same origins.
"""

from __future__ import annotations

import re
from typing import Any

from langgraph_sdk import Auth

from sunar.configuration import ClientConfiguration
from sunar.graph import build_graph

#: Web origins whose pages may drive the server: LangGraph Studio's, and apps on this machine
#: (agent-chat-ui on http://localhost:3000, say). langgraph.json's ``http.cors`` says the same.
STUDIO_ORIGINS = ("https://smith.langchain.com", "https://eu.smith.langchain.com")
LOCAL_ORIGIN = r"^https?://(localhost|127\.0\.0\.1|\[::1\])(:[0-9]+)?$"
_LOOPBACK_HOST = re.compile(r"^(localhost|127\.0\.0\.1|\[::1\])(:[0-9]+)?$")


def served(name: str) -> Any:
    """The named graph as served: the same nodes and edges, a client's context schema."""
    return build_graph(name).copy({"context_schema": ClientConfiguration})


sunar = served("sunar")
sunar_no_asu = served("sunar_no_asu")
sunar_r = served("sunar_r")
self_ask = served("self_ask")
gensco = served("gensco")
gensco_stop = served("gensco_stop")
ra_isf = served("ra_isf")
rag = served("rag")


def allowed_origin(origin: str) -> bool:
    return origin in STUDIO_ORIGINS or re.match(LOCAL_ORIGIN, origin) is not None


auth = Auth()


@auth.authenticate
async def local_only(headers: dict[bytes, bytes]) -> str:
    """Every request: addressed to the loopback, and from no web page or an allowed one's."""
    host = headers.get(b"host", b"").decode("latin-1")
    origin = headers.get(b"origin", b"").decode("latin-1")
    if not _LOOPBACK_HOST.match(host):
        raise Auth.exceptions.HTTPException(403, f"this server answers on 127.0.0.1 only (request for {host!r})")
    if origin and not allowed_origin(origin):
        raise Auth.exceptions.HTTPException(403, f"web pages from {origin} may not use this server")
    return "local-user"
