"""SUNAR: Semantic Uncertainty based Neighborhood Aware Retrieval for multi-hop QA, as LangGraph graphs."""

import os

# Hub look-ups retry for ~70 s before failing offline; everything here loads from disk or the cache.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

#: The variables with which langsmith and langchain_core turn tracing on (LangSmith's namespaces
#: LANGSMITH_ and LANGCHAIN_, TRACING_V2 and TRACING; LANGCHAIN_HANDLER is langchain_core's old one).
TRACING_VARIABLES = ("LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING")


def _tracing_off() -> None:
    """Questions, evidence and answers stay on this machine: LangSmith/LangChain tracing is off in
    every entry point (CLI, ``langgraph dev``, Python) unless the user opts in with SUNAR_TRACING=1,
    which leaves the tracing variables as they are."""
    if os.environ.get("SUNAR_TRACING", "").strip().lower() in ("1", "true", "yes"):
        return
    for name in TRACING_VARIABLES:
        os.environ[name] = "false"
    os.environ.pop("LANGCHAIN_HANDLER", None)
    import langsmith
    from langsmith import utils

    utils.get_env_var.cache_clear()  # a process that read the variables before (langgraph dev) reads them again
    langsmith.configure(enabled=False)


_tracing_off()

__version__ = "0.1.0"
