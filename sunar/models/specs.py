"""The model choices of a configuration checked by their form alone (nothing is loaded, no server
asked), so a typo in ``--llm``, ``--scorer``, ``--nli``, ``likelihood_llm``, ``escalate_llm`` or ``calibration`` is one
clear line before an index is built or a model loaded. What each form means is in
:mod:`sunar.models.providers`, :func:`sunar.models.scorer.make_scorer` and
:func:`sunar.models.nli.make_nli`; this module accepts exactly what they build.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from sunar.errors import ConfigurationError
from sunar.models import gguf

log = logging.getLogger("sunar")

SCORER_KINDS = ("cross-encoder", "hybrid", "splade", "dense")
#: The model choice that picks the best one available here (each role says how, and logs its pick).
AUTO = "auto"


class Spec(NamedTuple):
    """A model choice (``llm``, ``scorer``, ``nli``, ...) parsed once: ``kind:name`` ("embedded:qwen2.5-1.5b",
    "cross-encoder:<name>", "hybrid", "auto")."""

    kind: str
    name: str

    @classmethod
    def parse(cls, spec: str) -> Spec:
        kind, _, name = spec.partition(":")
        return cls(kind, name)


def chosen(spec: str, resolve: Callable[[str], tuple[str, str]], role: str) -> Spec:
    """``spec`` with ``auto`` resolved by ``resolve`` (-> (spec, why)), the pick logged, and parsed."""
    resolved, reason = resolve(spec)
    if spec == AUTO:
        log.info("%s auto -> %s (%s)", role, resolved, reason)
    return Spec.parse(resolved)


def check_llm(spec: str, field: str = "llm") -> None:
    kind, name = Spec.parse(spec)
    if spec == AUTO or kind == "ollama":
        return
    if kind == "openai":
        if not name.strip():
            raise ConfigurationError(f"{field} '{spec}' names no model; use openai:<model> with a model id the server lists at /v1/models")
        if field == "likelihood_llm":
            raise ConfigurationError(f"unknown likelihood_llm '{spec}' for log-likelihoods: an OpenAI-compatible server returns none of a given text; use embedded:<name>")
        return
    if kind != "embedded":
        raise ConfigurationError(f"unknown {field} '{spec}'; use auto, ollama:<model> or embedded:<name> (or openai:<model> for an OpenAI-compatible server)")
    if name and name not in gguf.EMBEDDED_MODELS:
        raise ConfigurationError(f"unknown embedded model '{name}' in {field}; choose one of: {', '.join(gguf.EMBEDDED_MODELS)}")


def check_specs(values: Mapping[str, Any], injected: str | None = None) -> None:
    """A :class:`ConfigurationError` for the first model choice in ``values`` (a configuration's
    fields) that names nothing the product can build, or a :class:`SunarError` when the
    calibration file is missing or is none. An ``llm`` that is the ``injected`` LLM's name (a
    ready model a Python caller passed in) is not a spec and is not checked."""
    if values.get("llm", AUTO) != injected:
        check_llm(str(values.get("llm", AUTO)))
    if values.get("likelihood_llm"):
        check_llm(str(values["likelihood_llm"]), "likelihood_llm")
    if values.get("escalate_llm"):
        check_llm(str(values["escalate_llm"]), "escalate_llm")
    elif (field := next((f for f in ("hop_support", "unfit_answer") if str(values.get(f, "")).startswith("escalate")), None)) is not None:
        raise ConfigurationError(f"{field}={values[field]} needs escalate_llm, the larger model that reads a doubted answer again "
                                 "(e.g. --set escalate_llm=ollama:llama3.1)")
    scorer = str(values.get("scorer", AUTO))
    if scorer != AUTO and Spec.parse(scorer).kind not in SCORER_KINDS:
        raise ConfigurationError(f"unknown scorer '{scorer}'; use auto, cross-encoder:<name>, hybrid, splade or dense")
    nli = str(values.get("nli", AUTO))
    kind, name = Spec.parse(nli)
    if nli != AUTO and kind != "llm" and not (kind == "hf" and name.strip()):
        raise ConfigurationError(f"unknown nli '{nli}'; use auto, llm or hf:<name or path of an MNLI classifier>")
    calibration = values.get("calibration", AUTO)
    if calibration not in ("", "off", AUTO):
        from sunar import trust

        trust.read(str(calibration))
