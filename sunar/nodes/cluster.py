"""NLI clustering: the sampled answers' semantic sets (bidirectional entailment); s = their number."""

from __future__ import annotations

from itertools import combinations
from typing import Any

from langchain_core.runnables import RunnableConfig

from sunar.configuration import Configuration
from sunar.models.nli import semantic_sets
from sunar.resources import resources
from sunar.usage import node


@node("cluster")
def cluster(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    cfg = Configuration.from_runnable_config(config)
    nli = resources(config).nli
    batch = dict(state["batch"])
    answers, question = batch.get("answers") or [], state["sub_question"]
    batch["sets"] = semantic_sets(question, answers, nli)
    if cfg.rescoring == "official":
        # The official code's penalty counts answer pairs that NLI finds contradictory.
        batch["contradictions"] = sum(
            nli.relation(question, a, b) == "contradiction" for a, b in combinations(answers, 2)
        )
    return {"batch": batch}
