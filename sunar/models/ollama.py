"""A model served by a local Ollama server (through langchain-ollama)."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sunar.errors import ModelUnavailable, SunarError
from sunar.models.llm import LLM
from sunar.prompts.structured import is_json_schema

DEFAULT_OLLAMA_MODEL = "llama3.1"
OLLAMA_URL = os.environ.get("OLLAMA_HOST", "http://127.0.0.1:11434")
if not OLLAMA_URL.startswith("http"):
    OLLAMA_URL = "http://" + OLLAMA_URL
#: Seconds a request waits for the server's next bytes before giving up (SUNAR_OLLAMA_TIMEOUT
#: overrides): long enough for a CPU server working through m queued samples of a long prompt,
#: short enough that a stalled server ends the run with an error instead of hanging it.
DEFAULT_TIMEOUT = 600.0
#: The context asked of Ollama (tokens); prompts are never cut.
NUM_CTX = 8192


def ollama_timeout() -> float:
    """The request timeout: SUNAR_OLLAMA_TIMEOUT seconds, or :data:`DEFAULT_TIMEOUT`."""
    raw = os.environ.get("SUNAR_OLLAMA_TIMEOUT", "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise SunarError(f"SUNAR_OLLAMA_TIMEOUT must be a number of seconds above 0 (got {raw!r})")
    return seconds


def ollama_error(exc: BaseException, model: str, url: str = OLLAMA_URL) -> ModelUnavailable:
    """One line for a failed Ollama call: no such model, a request the server refused (it replied),
    or no server at all."""
    text = str(exc)
    if "not found" in text.lower() and "model" in text.lower():
        return ModelUnavailable(f"Ollama has no model '{model}'; run: ollama pull {model}")
    if type(exc).__name__ == "ResponseError":
        said = " ".join(text.split())[:200]
        return ModelUnavailable(
            f"Ollama at {url} refused the request ({said}); if the server takes no JSON-schema format, "
            "set structured_output=false"
        )
    return ModelUnavailable(
        f"Ollama server not reachable at {url}; start it with 'ollama serve' "
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

    def __init__(self, model: str = DEFAULT_OLLAMA_MODEL, url: str | None = None, timeout: float | None = None):
        from langchain_ollama import ChatOllama

        self.url = url or OLLAMA_URL
        self.name = f"ollama:{model}"
        self.model = model
        self.timeout = timeout or ollama_timeout()
        # num_ctx: Ollama's default context (2048-4096 tokens by version) silently cuts the start of a
        # long prompt; the paper's settings (l = 10 documents, few-shot turns, the reasoning path) need more.
        self.chat = ChatOllama(
            model=model, base_url=self.url, temperature=0.0, num_ctx=NUM_CTX, client_kwargs={"timeout": self.timeout}
        )

    def _bound(self, temperature: float, max_tokens: int, stop: Sequence[str] | None, schema: dict | None) -> Any:
        """The chat model with this call's settings; a reply's JSON schema goes as Ollama's ``format``."""
        return self.chat.model_copy(
            update={"temperature": temperature, "num_predict": max_tokens, "stop": list(stop or []) or None, "format": schema if is_json_schema(schema) else None}
        )

    def generate(self, messages, *, temperature=0.0, max_tokens=256, stop=None, config=None, schema=None):
        try:
            return self._bound(temperature, max_tokens, stop, schema).invoke(list(messages), config)
        except (ConnectionError, OSError) as exc:
            raise ollama_error(exc, self.model, self.url) from exc
        except Exception as exc:
            if type(exc).__name__ in {"ConnectError", "ResponseError", "ConnectTimeout"}:
                raise ollama_error(exc, self.model, self.url) from exc
            if type(exc).__name__ in {"ReadTimeout", "WriteTimeout", "PoolTimeout"}:
                raise ModelUnavailable(
                    f"Ollama at {self.url} did not answer within {self.timeout:g} s; check the server "
                    "(ollama ps, or restart it), or allow longer with SUNAR_OLLAMA_TIMEOUT=SECONDS"
                ) from exc
            raise

    def sample(self, messages, m, *, temperature, max_tokens=256, stop=None, schema=None):
        # Ollama has no `n`: the m requests go out concurrently and the server batches them.
        with ThreadPoolExecutor(max_workers=max(1, m)) as pool:
            return list(
                pool.map(
                    lambda _: self.generate(
                        messages, temperature=temperature, max_tokens=max_tokens, stop=stop, schema=schema
                    ),
                    range(m),
                )
            )
