"""The scripted LLM: a deterministic test double that drives every branch of the graphs.

A script is a function from the prompt text (and the sample index) to the reply, so a test states
plainly what the "model" answers to each kind of prompt. Tests hand it to the product as an object
(``Resources(llm=...)`` or ``POOL.llm_factory``); no configuration string can name it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict

from sunar.cancel import raise_if_stopped
from sunar.models.llm import LLM, pick_label

Script = Callable[[str, int], str]
#: (prompt text, continuation) -> log-likelihood of the continuation as the reply
LoglikScript = Callable[[str, str], float]


def prompt_text(messages: Sequence[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


def _count(text: str) -> int:
    return len(text.split())


class ScriptedChatModel(BaseChatModel):
    """A chat model whose replies come from a Python function."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    script: Any  # Script; Any keeps pydantic from validating the callable's signature
    calls: list[str] = []
    #: Seconds before each streamed token: a generation slow enough for a test to stop midway.
    delay: float = 0.0
    #: The streamed tokens, in order, across calls.
    streamed: list[str] = []

    @property
    def _llm_type(self) -> str:
        return "sunar-scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        prompt = prompt_text(messages)
        generations = []
        for i in range(int(kwargs.get("n", 1))):
            raise_if_stopped()  # a stopped run starts no more samples (sunar.cancel)
            self.calls.append(prompt)
            reply = self.script(prompt, i)
            for s in stop or []:
                reply = reply.split(s)[0]
            generations.append(
                ChatGeneration(
                    message=AIMessage(
                        content=reply,
                        usage_metadata={
                            "input_tokens": _count(prompt),
                            "output_tokens": _count(reply),
                            "total_tokens": _count(prompt) + _count(reply),
                        },
                    )
                )
            )
        return ChatResult(generations=generations)


    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """The reply word by word, like a model streaming tokens; like the embedded model, it stops
        between two tokens once its run is stopped (:mod:`sunar.cancel`)."""
        reply = self._generate(messages, stop, run_manager, **kwargs).generations[0].message
        words = re.findall(r"\S+\s*", str(reply.content))
        for n, word in enumerate(words):
            if self.delay:
                time.sleep(self.delay)
            raise_if_stopped()
            self.streamed.append(word)
            last = n == len(words) - 1
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=word, usage_metadata=reply.usage_metadata if last else None))
            if run_manager:
                run_manager.on_llm_new_token(word, chunk=chunk)
            yield chunk


class ScriptedLLM(LLM):
    """:class:`LLM` over a :class:`ScriptedChatModel`."""

    def __init__(self, script: Script, name: str = "scripted", loglik: LoglikScript | None = None, hidden: Callable[[str], list[float]] | None = None):
        self.name = f"scripted:{name}"
        self.chat = ScriptedChatModel(script=script, calls=[])
        self.loglik_script = loglik
        self.hidden_script = hidden
        self.hidden_calls: list[str] = []
        self.judge_calls: list[str] = []
        self.loglik_calls: list[tuple[str, str]] = []
        #: The JSON schema each generated reply was asked under (None: free text), call by call.
        self.schemas: list[dict | None] = []
        #: The token cap of each reply, call by call (as ``schemas``).
        self.caps: list[int] = []

    @property
    def calls(self) -> list[str]:
        return self.chat.calls

    def generate(self, messages, *, temperature=0.0, max_tokens=256, stop=None, config=None, schema=None):
        self.schemas.append(schema)
        self.caps.append(max_tokens)
        msg = self.chat.invoke(list(messages), config, stop=list(stop or []) or None)
        return AIMessage(content=str(msg.content), usage_metadata=msg.usage_metadata)

    def sample(self, messages, m, *, temperature, max_tokens=256, stop=None, schema=None):
        self.schemas += [schema] * m
        self.caps += [max_tokens] * m
        result = self.chat.generate([list(messages)], n=m, stop=list(stop or []) or None)
        return [g.message for g in result.generations[0]]  # type: ignore[attr-defined]

    def judge(self, messages, labels):
        self.judge_calls.append(prompt_text(messages))
        return pick_label(self.chat.script(self.judge_calls[-1], 0), labels)

    def loglik(self, messages, continuation):
        """The scripted log-likelihood; without a script, like a backend that has none."""
        if self.loglik_script is None:
            return super().loglik(messages, continuation)
        prompt = prompt_text(messages)
        self.loglik_calls.append((prompt, continuation))
        return float(self.loglik_script(prompt, continuation))

    def hidden_state(self, text):
        """The scripted hidden state; without a script, like a backend that hides its states."""
        if self.hidden_script is None:
            return super().hidden_state(text)
        self.hidden_calls.append(text)
        return list(self.hidden_script(text))
