"""What the graph needs from a generative model: one narrow interface.

Nodes only see :class:`LLM`: ``generate`` (one answer), ``sample`` (m answers to one prompt), both
decoded under a JSON ``schema`` where the backend can (:mod:`sunar.prompts.structured`),
``judge`` (log-probabilities of a few label words, for the LLM-as-NLI-judge and RA-ISF's judges)
and ``loglik`` (log-likelihood of a given text, GenSco's scorer) and ``hidden_state`` (a probe's input). Each provider wraps a LangChain
chat model, so LangGraph's ``stream_mode="messages"`` streams tokens from inside nodes.
Providers are in :mod:`sunar.models.ollama` and :mod:`sunar.models.llama_cpp`, chosen by a
string in :mod:`sunar.models.providers`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig

from sunar.errors import ModelUnavailable


class LLM:
    """What the graph needs from a generative model."""

    name: str
    chat: BaseChatModel

    def generate(
        self,
        messages: Sequence[BaseMessage],
        *,
        temperature: float = 0.0,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        config: RunnableConfig | None = None,
        schema: dict | None = None,
    ) -> AIMessage:
        """One completion, decoded under ``schema`` when the backend can constrain its output (a
        backend that cannot ignores it). Token usage is in ``usage_metadata`` of the returned message."""
        raise NotImplementedError

    def sample(
        self,
        messages: Sequence[BaseMessage],
        m: int,
        *,
        temperature: float,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        schema: dict | None = None,
    ) -> list[AIMessage]:
        """m independent completions of the same prompt (the paper's answer sampling), under ``schema``
        as in :meth:`generate`."""
        raise NotImplementedError

    def judge(self, messages: Sequence[BaseMessage], labels: Sequence[str]) -> dict[str, float]:
        """Log-probability of each label as the reply (greedy pick gets 0, others -inf if the
        backend has no log-probabilities)."""
        reply = self.generate(messages, temperature=0.0, max_tokens=4).content
        return pick_label(str(reply), labels)

    def loglik(self, messages: Sequence[BaseMessage], continuation: str) -> float:
        """Sum of the log-probabilities of ``continuation``'s tokens as the beginning of the
        assistant's reply to ``messages`` (GenSco's scorer). Only backends that can read the
        model's distribution over a given text implement it."""
        raise ModelUnavailable(
            f"{self.name} cannot return token log-probabilities of a given text; "
            "set likelihood_llm to an embedded:<name> model (e.g. --set likelihood_llm=embedded:qwen2.5-1.5b)"
        )

    def hidden_state(self, text: str) -> list[float]:
        """The model's last-layer hidden state at the last token of ``text`` (what a probe of
        trust reads, :mod:`sunar.evals.probe`). Only backends that run the model in-process
        implement it."""
        raise ModelUnavailable(f"{self.name} does not expose its hidden states; only embedded:<name> models do")


def pick_label(reply: str, labels: Sequence[str]) -> dict[str, float]:
    """Map a free-text reply onto labels: the first label the reply starts with wins."""
    text = reply.strip().lower().lstrip("*\"' ")
    for label in labels:
        if text.startswith(label.lower()):
            return {lab: (0.0 if lab == label else -math.inf) for lab in labels}
    return {lab: -math.inf for lab in labels}
