"""How a run's configuration is checked and resolved, the same for every graph's configuration.

Each graph has its own configuration class, its ``context_schema``: SUNAR's is
:class:`sunar.configuration.Configuration`, which holds the fields every graph shares; each
baseline's subclasses it in its own package with the fields only it reads. They all are a
:class:`Settings`, so every entry point builds one the same way, through pydantic validation of
the values the caller gave:

- the CLI (``--llm``, ``--profile``, ``--set FIELD=VALUE``) and ``sunar eval`` call
  :meth:`Settings.resolve`;
- LangGraph (Studio, the API, ``graph.invoke(..., context=...)``) builds it from the run's
  context, and nodes read it with :meth:`Settings.from_runnable_config`, which also takes the
  ``configurable`` section of a ``RunnableConfig`` (Python callers). A node reads the class of
  the fields it needs: the nodes every graph shares read ``Configuration``, a baseline's own
  nodes its subclass; each takes its own fields from whatever the run was given.

Whatever the entry point, a bad value is one :class:`~sunar.errors.ConfigurationError` line
("configuration: rescoring must be one of paper, official (got 'both')"), the checks beyond each
field's own (:meth:`Checked.check`: model names by their form, the calibration file) run as
every instance is built, and the profile is
applied the same way: the ``cpu`` profile's values (each class's ``cpu_profile``, its bases'
included) for the fields the caller did not set, when the LLM is the embedded CPU model
(``profile="auto"``).

The graphs the servers serve take a client's configuration as their context, whose policy lives
with them (:mod:`sunar.server.served`): the context's own ``served_values`` say what the run is given.
"""

from __future__ import annotations

import functools
from contextvars import ContextVar
from typing import Any, ClassVar, Self

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from sunar.errors import ConfigurationError
from sunar.models.providers import resolve_llm
from sunar.models.specs import AUTO

#: Keys LangGraph itself puts beside the configuration in a run's ``configurable``/``context``.
LANGGRAPH_KEYS = frozenset(["thread_id", "checkpoint_id", "checkpoint_ns", "checkpoint_map", "run_id", "assistant_id", "graph_id", "user_id", "cron_id"])
#: The name of the LLM a Python caller injected with ready resources while its run's configuration
#: is resolved: that LLM was not built from a spec, so its name is not checked as one.
INJECTED_LLM: ContextVar[str | None] = ContextVar("injected_llm", default=None)
#: True while the values a past run recorded are resolved (:meth:`Settings.as_recorded`): its
#: models and files need not exist here, so :meth:`Checked.check` is not run for them.
RECORDED: ContextVar[bool] = ContextVar("recorded", default=False)


def group(reads: str = "", env: str = "", common: bool = False) -> dict[str, Any]:
    """A field's groups, declared on the field (its ``json_schema_extra``), so no list of fields is kept
    by hand: ``reads``, which graphs read it ("sunar": SUNAR's graphs, Self-Ask among them; "asu": only
    those with ASU; "mer": only those with MER; none: every graph); ``env``, the environment variable a
    server's operator sets it with (a client of a served graph cannot set it); ``common``, a field
    users set (``sunar config`` lists the others with ``--all``)."""
    return {k: v for k, v in (("reads", reads), ("env", env), ("common", common)) if v}


def fields_where(model: type[BaseModel], key: str, *values: Any) -> dict[str, Any]:
    """The fields of ``model`` whose group ``key`` is set (to one of ``values``, if given): name -> its value."""
    found = {}
    for name, info in model.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if key in extra and (not values or extra[key] in values):
            found[name] = extra[key]
    return found


def own_keys(data: Any) -> Any:
    """A configuration's values without the keys LangGraph puts beside them."""
    if isinstance(data, dict):
        return {k: v for k, v in data.items() if k not in LANGGRAPH_KEYS and not str(k).startswith("__")}
    return data


class Checked(BaseModel):
    """A model whose bad values are one :class:`ConfigurationError` line (LangGraph builds the
    context this way from what Studio and API clients send)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=False)

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise ConfigurationError(one_line(exc, type(self))) from None
        if not RECORDED.get():
            self.check()

    def check(self) -> None:
        """Checks beyond each field's own, run as every instance is built (so by every entry point):
        a :class:`~sunar.errors.SunarError` line for what is wrong. None here."""


class Settings(Checked):
    """A graph's configuration: its fields, resolved with the profile. Subclasses declare the
    fields (with ``profile`` and ``llm`` among them) and their ``cpu_profile``."""

    #: The ``cpu`` profile's values for this class's own fields (its bases' come with them, see
    #: :meth:`profiles`). The ``paper`` profile is the field defaults.
    cpu_profile: ClassVar[dict[str, Any]] = {}
    #: Fields removed, each with the value the code now always has (a recorded run may still name them).
    retired: ClassVar[dict[str, Any]] = {}

    @classmethod
    def profiles(cls) -> dict[str, dict[str, Any]]:
        """Each profile's values for the fields not set: every class's ``cpu_profile`` down to this one."""
        cpu: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            cpu.update(vars(klass).get("cpu_profile") or {})
        return {"paper": {}, "cpu": cpu}

    @model_validator(mode="before")
    @classmethod
    def _profiled(cls, data: Any) -> Any:
        """LangGraph's own keys dropped, and the profile applied to the fields not given."""
        data = own_keys(data)
        return cls._with_profile(data) if isinstance(data, dict) else data

    @classmethod
    def _with_profile(cls, data: dict[str, Any]) -> dict[str, Any]:
        """The profile's values for the fields ``data`` does not set; ``profile`` resolved."""
        profile = data.get("profile", AUTO)
        if profile == AUTO:
            llm = data.get("llm", AUTO)
            if llm == AUTO:
                llm = data["llm"] = _auto_llm()
            profile = "cpu" if isinstance(llm, str) and llm.startswith("embedded:") else "paper"
        profiles = cls.profiles()
        if profile not in profiles:
            return data  # validation reports it
        return {**profiles[profile], **data, "profile": profile}

    @classmethod
    def known(cls, values: dict[str, Any]) -> dict[str, Any]:
        """The values of this class's fields (another graph's fields left out)."""
        return {k: v for k, v in values.items() if k in cls.model_fields}

    @classmethod
    def resolve(cls, values: dict[str, Any] | None = None) -> Self:
        """The configuration for ``values`` (field -> value, strings allowed as from ``--set``);
        unknown fields and bad values are a :class:`ConfigurationError`."""
        try:
            return _resolve(cls, frozen(values or {}), INJECTED_LLM.get(), RECORDED.get())
        except TypeError:  # an unhashable value (a list, a dict): validation says what is wrong
            return cls(**(values or {}))

    @classmethod
    def from_runnable_config(cls, config: RunnableConfig | None = None) -> Self:
        """The run's configuration, inside a node: the run's context (LangGraph Studio, the API,
        ``invoke(context=...)``), then this class's fields of ``configurable`` (which win). When
        the caller injected ready :class:`~sunar.resources.Resources` and named no LLM, the
        injected LLM decides the profile. In a served graph's run (its context a client's,
        :mod:`sunar.server.served`), the context's ``served_values`` say what the run is given."""
        configurable = (config or {}).get("configurable") or {}
        context = _runtime_context()
        if hasattr(context, "served_values"):  # a served graph's run: the server's policy (sunar.server.served)
            return cls.resolve(cls.known(context.served_values(configurable)))
        values: dict[str, Any] = {}
        if isinstance(context, Settings):
            values.update(cls.known(context.given()))
        elif isinstance(context, dict):
            values.update(context)
        values.update(cls.known(configurable))
        injected = getattr(getattr(configurable.get("resources"), "llm", None), "name", None)
        if injected and "llm" not in values:
            values["llm"] = injected
        token = INJECTED_LLM.set(injected)
        try:
            return cls.resolve(values)
        finally:
            INJECTED_LLM.reset(token)

    @classmethod
    def as_recorded(cls, recorded: dict[str, Any]) -> dict[str, Any]:
        """Every field of a run that recorded these values (say, a calibration's runs): its known
        fields as given, a field it did not record (a newer switch) at its field default, what the
        run did without it, even where the run's profile now sets that field. Values written by
        hand (no resolved ``profile`` among them) get the profile's, as a run given them would."""
        token = RECORDED.set(True)
        known = cls.known(cls.without_retired(recorded))
        if known.get("profile") in ("paper", "cpu"):  # a run's record: every field it had; one it lacks came later
            newer = {k: f.get_default(call_default_factory=True) for k, f in cls.model_fields.items() if k not in known}
            known = {**newer, **known}
        try:
            return cls.resolve(known).values()
        finally:
            RECORDED.reset(token)

    @classmethod
    def without_retired(cls, recorded: dict[str, Any]) -> dict[str, Any]:
        """``recorded`` without the retired fields it holds at the value the code now always has; one at
        another value is a :class:`ConfigurationError` (that behaviour is gone)."""
        for name, value in recorded.items():
            if name in cls.retired and str(value).lower() != str(cls.retired[name]).lower():
                raise ConfigurationError(f"configuration: {name}={value} was measured, not kept and removed (benchmarks/RESULTS.md, "
                                         "Tried and not kept; git tag experiments-2026-12 has its code)")
        return {k: v for k, v in recorded.items() if k not in cls.retired}

    def given(self) -> dict[str, Any]:
        """The fields set explicitly or by the profile (not left at the paper's default)."""
        return {name: getattr(self, name) for name in self.model_fields_set}

    def values(self) -> dict[str, Any]:
        """Every field, as a plain dict (what a run records, and a ``configurable`` section)."""
        return self.model_dump()


def _runtime_context() -> Any:
    """The LangGraph runtime context of the node being run, or None outside a graph."""
    try:
        from langgraph.runtime import get_runtime

        return get_runtime().context
    except Exception:  # not inside a LangGraph run
        return None


@functools.cache
def _auto_llm() -> str:
    """What ``llm="auto"`` means in this process (decided once: the Ollama probe takes a moment)."""
    return resolve_llm(AUTO)[0]


def frozen(values: dict[str, Any]) -> tuple[tuple[str, str, Any], ...]:
    """``values`` as a hashable key (each value's type kept: 1 and True stay apart); a TypeError for an unhashable value."""
    return tuple(sorted((str(k), type(v).__name__, v) for k, v in values.items()))


@functools.lru_cache(maxsize=512)
def _resolve(cls: type[Settings], items: tuple[tuple[str, str, Any], ...], injected: str | None, recorded: bool) -> Settings:
    return cls(**{k: v for k, _, v in items})


def one_line(exc: ValidationError, model: type[BaseModel]) -> str:
    """pydantic's errors as one line a user can act on."""
    parts = []
    for error in exc.errors():
        field = ".".join(str(p) for p in error.get("loc") or ()) or "configuration"
        kind, ctx, got = error.get("type", ""), error.get("ctx") or {}, error.get("input")
        if kind == "extra_forbidden" and field in getattr(model, "retired", {}):
            parts.append(f"{field} was measured, not kept and removed (benchmarks/RESULTS.md, Tried and not kept)")
            continue
        if kind == "extra_forbidden":
            fields = [name for name in model.model_fields if name not in getattr(model, "operator_fields", ())]
            parts.append(f"unknown field '{field}' (fields: {', '.join(fields)})")
            continue
        if kind == "literal_error":
            choices = ", ".join(a.strip("'") for a in str(ctx.get("expected", "")).replace(" or ", ", ").split(", "))
            rule = f"must be one of {choices}"
        elif kind in ("int_parsing", "int_type", "int_from_float"):
            rule = "must be a whole number"
        elif kind in ("float_parsing", "float_type", "finite_number"):
            rule = "must be a number"
        elif kind in ("bool_parsing", "bool_type"):
            rule = "must be true or false"
        elif kind == "string_type":
            rule = "must be text"
        elif kind in ("greater_than_equal", "less_than_equal"):
            field_info = model.model_fields.get(field)
            bounds = {type(m).__name__: m for m in (field_info.metadata if field_info else [])}
            low, high = getattr(bounds.get("Ge"), "ge", None), getattr(bounds.get("Le"), "le", None)
            rule = f"must be from {low} to {high}" if low is not None and high is not None else error.get("msg", "").lower()
        else:
            rule = str(error.get("msg", "is not valid")).lower()
        parts.append(f"{field} {rule} (got {got!r})")
    return "configuration: " + "; ".join(parts)
