"""A model served by a local Ollama server (through langchain-ollama)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sunar.errors import ModelUnavailable
from sunar.models.llm import LLM

DEFAULT_OLLAMA_MODEL = "llama3.1"
OLLAMA_URL = os.environ.get("OLLAMA_HOST", "http://127.0.0.1:11434")
if not OLLAMA_URL.startswith("http"):
    OLLAMA_URL = "http://" + OLLAMA_URL



def ollama_error(exc: BaseException, model: str) -> ModelUnavailable:
    text = str(exc)
    if "not found" in text.lower() and "model" in text.lower():
        return ModelUnavailable(f"Ollama has no model '{model}'; run: ollama pull {model}")
    return ModelUnavailable(
        f"Ollama server not reachable at {OLLAMA_URL}; start it with 'ollama serve' "
        "or use --llm embedded:qwen2.5-1.5b"
    )


def ollama_models(url: str | None = None, timeout: float = 2.0) -> list[str] | None:
    """Names of the models the Ollama server has, or None when no server answers."""
    import ollama

    url = url or OLLAMA_URL
    try:
        listing = ollama.Client(host=url, timeout=timeout).list()
    except Exception:  # connection refused, timeout, bad answer: no usable server
        return None
    return [m.model for m in listing.models if m.model]


def ollama_has(model: str, names: Sequence[str]) -> bool:
    wanted = model if ":" in model else f"{model}:latest"
    return wanted in names or model in names


class OllamaLLM(LLM):
    """A model served by a local Ollama server (through langchain-ollama). It has no ``loglik``:
    Ollama returns log-probabilities of the tokens it generates, never of a given text."""

    def __init__(self, model: str = DEFAULT_OLLAMA_MODEL, url: str | None = None):
        from langchain_ollama import ChatOllama

        url = url or OLLAMA_URL
        self.name = f"ollama:{model}"
        self.model = model
        self.chat = ChatOllama(model=model, base_url=url, temperature=0.0)

    def _bound(self, temperature: float, max_tokens: int, stop: Sequence[str] | None) -> Any:
        return self.chat.model_copy(
            update={"temperature": temperature, "num_predict": max_tokens, "stop": list(stop or []) or None}
        )

    def generate(self, messages, *, temperature=0.0, max_tokens=256, stop=None, config=None):
        try:
            return self._bound(temperature, max_tokens, stop).invoke(list(messages), config)
        except (ConnectionError, OSError) as exc:
            raise ollama_error(exc, self.model) from exc
        except Exception as exc:
            if type(exc).__name__ in {"ConnectError", "ResponseError", "ConnectTimeout"}:
                raise ollama_error(exc, self.model) from exc
            raise

    def sample(self, messages, m, *, temperature, max_tokens=256, stop=None):
        # Ollama has no `n`: the m requests go out concurrently and the server batches them.
        with ThreadPoolExecutor(max_workers=max(1, m)) as pool:
            return list(
                pool.map(
                    lambda _: self.generate(
                        messages, temperature=temperature, max_tokens=max_tokens, stop=stop
                    ),
                    range(m),
                )
            )
