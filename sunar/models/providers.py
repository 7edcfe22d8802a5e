"""Choosing the generative LLM by a configuration string.

  ``ollama:<model>``     a local Ollama server (the product default, ``ollama:llama3.1``)
  ``embedded:<name>``    llama.cpp with a GGUF shipped as PyPI packages
  ``openai:<model>``     any OpenAI-compatible server (llama.cpp's, LM Studio, vLLM, ...) at ``openai_base_url``
  ``auto``               Ollama when its server answers and has llama3.1, else the embedded model

A string names a real model only: test doubles are injected as objects, never by name.
"""

from __future__ import annotations

from sunar.errors import ModelUnavailable
from sunar.models import gguf
from sunar.models.embedded import EmbeddedLLM
from sunar.models.llm import LLM
from sunar.models.ollama import DEFAULT_OLLAMA_MODEL, OLLAMA_URL, OllamaLLM, ollama_error, ollama_has, ollama_models
from sunar.models.openai_compat import DEFAULT_OPENAI_URL, OpenAICompatLLM
from sunar.models.specs import AUTO, chosen


def resolve_llm(spec: str) -> tuple[str, str]:
    """Turn 'auto' into a concrete spec. Returns (spec, reason)."""
    if spec != AUTO:
        return spec, "configured"
    names = ollama_models()
    if names is None:
        return f"embedded:{gguf.DEFAULT_EMBEDDED}", f"no Ollama server at {OLLAMA_URL}"
    if not ollama_has(DEFAULT_OLLAMA_MODEL, names):
        return f"embedded:{gguf.DEFAULT_EMBEDDED}", f"Ollama has no {DEFAULT_OLLAMA_MODEL} model"
    return f"ollama:{DEFAULT_OLLAMA_MODEL}", "Ollama server answers and has the model"


def make_llm(spec: str, openai_base_url: str = DEFAULT_OPENAI_URL) -> LLM:
    """Build the LLM named by ``spec`` (see the module docstring); an ``openai:`` model is asked
    on the server at ``openai_base_url``."""
    kind, name = chosen(spec, resolve_llm, "llm")
    if kind == "ollama":
        model = name or DEFAULT_OLLAMA_MODEL
        names = ollama_models()
        if names is None:
            raise ollama_error(ConnectionError(), model)
        if not ollama_has(model, names):
            raise ModelUnavailable(f"Ollama has no model '{model}'; run: ollama pull {model}")
        return OllamaLLM(model)
    if kind == "embedded":
        return EmbeddedLLM(name or gguf.DEFAULT_EMBEDDED)
    if kind == "openai" and name:
        return OpenAICompatLLM.checked(name, openai_base_url)
    raise ModelUnavailable(f"unknown llm '{spec}'; use auto, ollama:<model> or embedded:<name> (or openai:<model> for an OpenAI-compatible server)")
