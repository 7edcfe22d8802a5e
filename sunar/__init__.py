"""SUNAR: Semantic Uncertainty based Neighborhood Aware Retrieval for multi-hop QA, as LangGraph graphs."""

import os

# Hub look-ups retry for ~70 s before failing offline; everything here loads from disk or the cache.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

__version__ = "0.1.0"
