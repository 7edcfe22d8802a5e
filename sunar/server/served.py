"""The graphs ``langgraph dev`` serves (langgraph.json points here), and who may talk to them.

The graphs are :data:`sunar.graph.GRAPHS`' own, each with a client's view of its own configuration
as its context (:func:`client_configuration`; :data:`ClientConfiguration` holds every graph's fields
for the OpenAI endpoint): the served-client policy, here with the servers. A remote
client (LangGraph Studio, a chat app, the SDK) sets the algorithm's numbers and choices, never a
path, a URL or a model to load. The server's operator sets those with environment variables
(:data:`OPERATOR_ENV`: SUNAR_LLM, SUNAR_INDEX_DIR, ...). Python callers and the CLI use
:mod:`sunar.graph` and set every field.

:data:`auth` refuses a request addressed to a name other than this machine's loopback (a DNS
rebinding page) or sent by a web page of another origin than LangGraph Studio's or a local app's
(the browser sends the page's ``Origin``); langgraph.json's CORS policy allows the same origins.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Any, ClassVar

from langgraph_sdk import Auth
from pydantic import Field, create_model, model_validator

from sunar.baselines.configuration import AnyConfiguration
from sunar.cancel import stop_when_cancelled
from sunar.errors import ConfigurationError
from sunar.graph import build_graph
from sunar.settings import LANGGRAPH_KEYS, Checked, Settings, fields_where, frozen, own_keys

#: The server operator's fields (a path, a URL or a model to load) and the environment variables
#: that set them for the graphs ``langgraph dev`` serves (:mod:`sunar.server.served`). A remote client of
#: those graphs sets only the other fields; Python callers and the CLI set every field.
OPERATOR_ENV: dict[str, str] = fields_where(AnyConfiguration, "env")


class _ClientFields(Checked):
    """What a remote client of the served graphs may set: a configuration's bounded numbers
    and choices. Each operator field is there only to say so when a client sends it (a value of
    null is taken as not sent); the operator sets them with :data:`OPERATOR_ENV`."""

    #: Named in a client's error as not the client's (the field list of an unknown-field error leaves them out).
    operator_fields: ClassVar[frozenset[str]] = frozenset(OPERATOR_ENV)

    def __init__(self, **values: Any) -> None:
        for name, variable in OPERATOR_ENV.items():
            if values.get(name) is not None:
                raise ConfigurationError(f"configuration: {name} is the server operator's setting ({variable}), a client cannot set it")
        super().__init__(**values)

    @model_validator(mode="before")
    @classmethod
    def _own(cls, data: Any) -> Any:
        """LangGraph's own keys dropped."""
        return own_keys(data)

    def given(self) -> dict[str, Any]:
        """The fields the client set."""
        return {name: getattr(self, name) for name in self.model_fields_set if getattr(self, name) is not None}

    def served_values(self, configurable: dict[str, Any]) -> dict[str, Any]:
        """A served run's values (what :meth:`~sunar.settings.Settings.from_runnable_config` resolves): the
        operator's from the environment, then what the client set in this context and in
        ``configurable``, checked as the context was (the graph's own fields). The client's keys in
        ``configurable`` are the field-like ones that are not LangGraph's (it also holds HTTP
        headers and the server's own keys)."""
        sent = {k: v for k, v in configurable.items() if _client_key(k)}
        try:
            given = _client_given(type(self), frozen({**self.given(), **sent}))
        except TypeError:  # an unhashable value (a list, a dict): validation says what is wrong
            given = type(self)(**{**self.given(), **sent}).given()
        return {**operator_settings(), **given}


@functools.lru_cache(maxsize=512)
def _client_given(kind: type[_ClientFields], values: tuple[tuple[str, str, Any], ...]) -> dict[str, Any]:
    """A client's values checked once (a bad, operator or other graph's field: one line), not at every node of its run."""
    return kind(**{k: v for k, _, v in values}).given()


def _operator_field(name: str, variable: str) -> tuple[Any, Any]:
    return None, Field(None, description=f"The server operator's setting ({variable} in the server's environment); a client cannot set it.")


@functools.cache
def client_configuration(schema: type[Settings]) -> type[_ClientFields]:
    """What a client may send to a graph whose configuration is ``schema``: a served graph's
    ``context_schema``, so LangGraph Studio shows that graph's own fields."""
    return create_model(
        f"Client{schema.__name__}",
        __base__=_ClientFields,
        **{
            name: _operator_field(name, OPERATOR_ENV[name]) if name in OPERATOR_ENV else (info.annotation, info)
            for name, info in schema.model_fields.items()
        },
    )


#: What a client may send to any graph: every graph's fields (the OpenAI endpoint's settings, for
#: whichever graph a request names).
ClientConfiguration = client_configuration(AnyConfiguration)


def operator_settings() -> dict[str, str]:
    """The operator's fields for the served graphs, from this process's environment (SUNAR_LLM, ...)."""
    return {name: os.environ[variable] for name, variable in OPERATOR_ENV.items() if os.environ.get(variable)}


def _client_key(key: Any) -> bool:
    if not isinstance(key, str) or not key.isidentifier():
        return False
    return key not in LANGGRAPH_KEYS and key != "resources" and not key.startswith(("_", "langgraph_", "langsmith", "checkpoint_"))


#: Web origins whose pages may drive the server: LangGraph Studio's, and apps on this machine
#: (agent-chat-ui on http://localhost:3000, say). langgraph.json's ``http.cors`` says the same.
STUDIO_ORIGINS = ("https://smith.langchain.com", "https://eu.smith.langchain.com")
LOCAL_ORIGIN = r"^https?://(localhost|127\.0\.0\.1|\[::1\])(:[0-9]+)?$"
_LOOPBACK_HOST = re.compile(r"^(localhost|127\.0\.0\.1|\[::1\])(:[0-9]+)?$")


def served(name: str) -> Any:
    """The named graph as served: the same nodes and edges, a client's context schema of its own
    fields, and a stop flag per run that the server's cancellation sets (:func:`sunar.cancel.stop_when_cancelled`)."""
    graph = build_graph(name)
    # a run the server cancels (Studio's Stop, a client gone) stops at its model's next token
    return stop_when_cancelled(graph.copy({"context_schema": client_configuration(graph.context_schema)}))


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
