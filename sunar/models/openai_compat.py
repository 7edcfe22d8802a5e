"""A model served by any OpenAI-compatible local server (through langchain-openai): llama.cpp's
server, llama-cpp-python's ``python -m llama_cpp.server``, LM Studio, vLLM, Ollama's ``/v1``,
LocalAI. The spec is ``openai:<model>``, the model's id as the server's ``/v1/models`` lists it.

The server's URL is the configuration's ``openai_base_url`` (``--set openai_base_url=URL``; for
served graphs SUNAR_OPENAI_BASE_URL in the server's environment); the resource pool keeps one LLM
per model and URL. An API key is taken from OPENAI_API_KEY; local servers ignore it.

A reply's JSON schema goes as ``response_format`` (:data:`RESPONSE_FORMATS`, the first one the
server takes). ``sample`` sends the m requests at once, as the Ollama provider does: the chat API's ``n`` is
ignored by llama-cpp-python's server (it returns one choice for n=3), and servers that batch
(vLLM, llama.cpp's ``--parallel``) run concurrent requests together. ``judge`` asks for the
``top_logprobs`` of the first generated token and reads the labels' log-probabilities from them;
a server that returns none gets the greedy label (:func:`~sunar.models.llm.pick_label`). There is
no ``loglik``: the chat API returns log-probabilities of generated tokens, never of a given text.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from sunar.errors import ModelUnavailable, SunarError
from sunar.models.llm import LLM, pick_label
from sunar.models.ollama import DEFAULT_TIMEOUT
from sunar.prompts.structured import is_json_schema

DEFAULT_OPENAI_URL = "http://127.0.0.1:8080/v1"
#: Candidates read for the first token of a judge's reply (the most OpenAI's API allows).
TOP_LOGPROBS = 20


def api_key() -> str:
    """OPENAI_API_KEY, or a placeholder (local servers ignore the key, the client needs one)."""
    return os.environ.get("OPENAI_API_KEY") or "sunar-local"


def openai_models(url: str, timeout: float = 3.0) -> list[str] | None:
    """Ids of the models the server at ``url`` offers (``GET /models``), or None when none answers."""
    try:
        answer = httpx.get(f"{url.rstrip('/')}/models", headers={"Authorization": f"Bearer {api_key()}"}, timeout=timeout)
        answer.raise_for_status()
        return [str(m["id"]) for m in answer.json()["data"]]
    except (httpx.HTTPError, ValueError, KeyError, TypeError):  # down, not an OpenAI-style listing
        return None


def unreachable(url: str) -> ModelUnavailable:
    return ModelUnavailable(
        f"no OpenAI-compatible server answers at {url}; start it (e.g. python -m llama_cpp.server --model FILE.gguf --port 8080) "
        "or point openai_base_url at it (--set openai_base_url=URL, or SUNAR_OPENAI_BASE_URL for served graphs)"
    )


class RefusedFormat(Exception):
    """The server refused a request for its ``response_format``."""


#: How a reply's JSON schema is asked for, in order: OpenAI's own ``json_schema`` (llama.cpp's
#: server, vLLM, LM Studio, Ollama's /v1), then llama-cpp-python's server's ``json_object`` with
#: a ``schema`` (it refuses the first, with a 500).
RESPONSE_FORMATS = (
    lambda schema: {"type": "json_schema", "json_schema": {"name": "reply", "strict": True, "schema": schema}},
    lambda schema: {"type": "json_object", "schema": schema},
)


def _about_format(exc: Any) -> bool:
    """Whether a refusal names the response format (a prompt too long for the context does not)."""
    said = f"{exc.body} {exc.message}".lower()
    return any(word in said for word in ("response_format", "json_schema", "json_object", "schema", "format"))


class OpenAICompatLLM(LLM):
    """``openai:<model>`` on the OpenAI-compatible server at ``base_url``."""

    def __init__(self, model: str, base_url: str = DEFAULT_OPENAI_URL, timeout: float = DEFAULT_TIMEOUT):
        from langchain_openai import ChatOpenAI

        self.model, self.timeout, self.name = model, timeout, f"openai:{model}"
        self._formats, self._settled = list(RESPONSE_FORMATS), False
        self.url = (base_url or DEFAULT_OPENAI_URL).rstrip("/")
        self.chat = ChatOpenAI(
            model=model, base_url=self.url, api_key=api_key(), temperature=0.0, timeout=timeout, max_retries=0, stream_usage=True
        )

    @classmethod
    def checked(cls, model: str, base_url: str = DEFAULT_OPENAI_URL) -> OpenAICompatLLM:
        """The LLM, once its server answered and listed ``model``."""
        llm = cls(model, base_url)
        names = openai_models(llm.url)
        if names is None:
            raise unreachable(llm.url)
        if model not in names:
            raise ModelUnavailable(f"the server at {llm.url} has no model '{model}'; it offers: {', '.join(names) or 'none'} (use --llm openai:<one of them>)")
        return llm

    def _call(self, messages: Sequence[Any], config: Any = None, *, max_tokens: int, response_format: dict | None = None, **params: Any) -> Any:
        """One chat completion; the server's failures as one :class:`SunarError` line.
        ``max_tokens`` goes as such: langchain-openai sends OpenAI's newer ``max_completion_tokens``,
        which llama-cpp-python's server ignores (measured: it generated past the limit).
        ``response_format`` goes in the body as given (the ``openai`` client types only OpenAI's own)."""
        import openai

        body: dict[str, Any] = {"max_tokens": max_tokens, **({"response_format": response_format} if response_format else {})}
        try:
            return self.chat.model_copy(update={**params, "extra_body": body}).invoke(list(messages), config)
        except openai.APITimeoutError as exc:
            raise ModelUnavailable(f"the OpenAI-compatible server at {self.url} did not answer within {self.timeout:g} s; check it, or use a smaller model") from exc
        except openai.APIConnectionError as exc:
            raise unreachable(self.url) from exc
        except openai.NotFoundError as exc:
            names = openai_models(self.url)
            offers = f"; it offers: {', '.join(names)}" if names else ""
            raise ModelUnavailable(f"the server at {self.url} has no model '{self.model}'{offers} (use --llm openai:<one of them>)") from exc
        except openai.APIStatusError as exc:  # llama-cpp-python's server refuses a format with 500, others 400/422
            if response_format and _about_format(exc):
                raise RefusedFormat() from exc
            raise self._refused(exc) from exc

    def _refused(self, exc: Any) -> SunarError:
        said = exc.body.get("message") if isinstance(exc.body, dict) else None  # the server's own words
        detail = " ".join(str(said or exc.message).split())[:300]
        return SunarError(f"the OpenAI-compatible server at {self.url} refused the request ({exc.status_code}: {detail})")

    def _structured(self, messages: Sequence[Any], config: Any, schema: dict | None, **params: Any) -> Any:
        """A call whose reply follows ``schema``, in the first of :data:`RESPONSE_FORMATS` the
        server takes; a server that refuses them all is asked without one from then on (the prompt
        still asks for the JSON object, and its reader falls back to free text)."""
        if not is_json_schema(schema):  # none, or a text format (no JSON schema to send)
            return self._call(messages, config, **params)
        while self._formats:
            try:
                reply = self._call(messages, config, response_format=self._formats[0](schema), **params)
                self._settled = True
                return reply
            except RefusedFormat:
                self._formats.pop(0)
        self._settled = True
        return self._call(messages, config, **params)

    def generate(self, messages, *, temperature=0.0, max_tokens=256, stop=None, config=None, schema=None):
        return self._structured(messages, config, schema, temperature=temperature, max_tokens=max_tokens, stop=list(stop or []) or None)

    def sample(self, messages, m, *, temperature, max_tokens=256, stop=None, schema=None):
        def one(_: int) -> Any:
            return self._structured(messages, None, schema, temperature=temperature, max_tokens=max_tokens, stop=list(stop or []) or None)

        first = [one(0)] if is_json_schema(schema) and not self._settled else []  # learn which format the server takes, once
        with ThreadPoolExecutor(max_workers=max(1, m - len(first))) as pool:
            return [*first, *pool.map(one, range(m - len(first)))]

    def judge(self, messages, labels):
        """The labels' log-probabilities as the reply's first token, from the server's
        ``top_logprobs``; where it returns none, the greedy label."""
        reply = self._call(messages, temperature=0.0, max_tokens=4, logprobs=True, top_logprobs=TOP_LOGPROBS)
        scores = label_logprobs(reply.response_metadata.get("logprobs"), labels)
        return scores if scores is not None else pick_label(str(reply.content), labels)


def label_logprobs(logprobs: Any, labels: Sequence[str]) -> dict[str, float] | None:
    """Each label's log-probability as the first token of the reply: the best candidate among the
    first token's ``top_logprobs`` that begins the label ("yes", " Yes"); -inf for a label none
    begins. None when there are no log-probabilities or no candidate begins any label."""
    content = (logprobs or {}).get("content") or []
    if not content:
        return None
    scores = {label: -math.inf for label in labels}
    for candidate in content[0].get("top_logprobs") or [content[0]]:
        token = str(candidate.get("token", "")).strip().lower()
        for label in labels:
            if token and label.lower().startswith(token):
                scores[label] = max(scores[label], float(candidate["logprob"]))
    return scores if any(v > -math.inf for v in scores.values()) else None
