"""A scripted LLM that follows the demo questions' gold decomposition: every answer is right, so
tests of the harness, the server and the CLI can check results exactly. It replies in the formats
the prompts ask for (Self-Ask's lines, JSON objects), as a model decoding under their grammars does.

In the test process, :func:`use_oracle` makes it every LLM the product builds. In a child process:
``python tests/oracle.py ARGS`` is the ``sunar`` CLI with the oracle as its LLM, and
``tests/served.py`` holds the graphs as ``langgraph dev`` serves them with it.

``SUNAR_ORACLE_DELAY`` (seconds) slows the answer prompts, to catch a run in the middle of NAR;
``SUNAR_ORACLE_LOG`` names a file that gets one line per call (the kind of prompt).
"""

from __future__ import annotations

import functools
import os
import sys
import time
from pathlib import Path

from fakes import prompt_kind, question_of
from scripted import ScriptedLLM
from sunar.evals.data import Question, read_questions
from sunar.prompts.plan import template
from sunar.prompts.structured import as_reply
from sunar.resources import POOL

QUESTIONS = Path(__file__).resolve().parents[1] / "sunar" / "data" / "demo_questions.jsonl"


@functools.cache
def _gold() -> tuple[dict[str, Question], dict[str, str]]:
    questions = {q.question: q for q in read_questions(QUESTIONS)}
    answers = {sub: ans for q in questions.values() for sub, ans, _ in q.sub_questions}
    return questions, answers


def script(prompt: str, i: int) -> str:
    questions, answers = _gold()
    kind = prompt_kind(prompt)
    if os.environ.get("SUNAR_ORACLE_LOG"):
        with open(os.environ["SUNAR_ORACLE_LOG"], "a", encoding="utf-8") as log:
            log.write(kind + "\n")
    if kind == "nli":
        return "yes"
    if kind == "self_ask":
        transcript = prompt.rsplit("Question:", 1)[1]
        q = questions[transcript.splitlines()[0].strip()]
        n = transcript.count("Intermediate answer:")
        return f"Follow up: {q.sub_questions[n][0]}" if n < len(q.sub_questions) else f"So the final answer is: {q.answers[0]}"
    if kind == "plan":  # the gold sub-questions, each earlier answer written as #k
        steps = [(sub, ans) for sub, ans, _ in questions[question_of(prompt)].sub_questions]
        return "\n".join(f"{k}. {step}" for k, step in enumerate(template(steps), start=1))
    if kind == "mer":
        return as_reply(rationale="from the evidence.", answer=questions[question_of(prompt)].answers[0])
    time.sleep(float(os.environ.get("SUNAR_ORACLE_DELAY", "0")))
    return as_reply(answer=answers.get(question_of(prompt), "unknown"))


def use_oracle() -> ScriptedLLM:
    """Make the oracle every LLM this process builds, whatever the configured model; returns it."""
    llm = ScriptedLLM(script, "oracle")
    POOL.clear()
    POOL.llm_factory = lambda spec: llm
    return llm


if __name__ == "__main__":
    from sunar.cli import main

    use_oracle()
    sys.exit(main())
