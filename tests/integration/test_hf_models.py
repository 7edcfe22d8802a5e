"""The real Hugging Face loading paths (CrossEncoder, NLI classifier, embedder by path, SPLADE),
run on tiny randomly initialised models that the fixtures build and save."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from sunar.errors import ModelUnavailable
from sunar.models.embedder import Embedder
from sunar.models.nli import HFNLI, make_nli, semantic_sets
from sunar.models.scorer import (
    PAPER_CROSS_ENCODER,
    CrossEncoderScorer,
    DenseScorer,
    HybridScorer,
    SpladeScorer,
    make_scorer,
)
from sunar.stores.corpus import Document

DOCS = [
    Document("1", "David Lynch", "David Lynch was born in Missoula, Montana."),
    Document("2", "Eraserhead", "Eraserhead is a 1977 film by David Lynch."),
    Document("3", "Venus", "Venus is the second planet from the Sun."),
]


def test_cross_encoder_by_path(tiny_cross_encoder):
    scorer = make_scorer(f"cross-encoder:{tiny_cross_encoder}")
    assert isinstance(scorer, CrossEncoderScorer)
    scores = scorer.score("where was lynch born", DOCS)
    assert len(scores) == 3 and all(isinstance(s, float) for s in scores)
    assert scorer.score("q", []) == []
    # deterministic: the same pair scores the same in another batch
    assert scorer.score("where was lynch born", DOCS[:1])[0] == pytest.approx(scores[0], abs=1e-5)


def test_cross_encoder_not_cached_is_a_clear_error():
    with pytest.raises(ModelUnavailable, match="not in the Hugging Face cache"):
        CrossEncoderScorer("nreimers/mmarco-mMiniLMv2-L12-H384-v1-not-here")


def auto_scorer(hf_home) -> list[str]:
    """What ``scorer=auto`` resolves to in a fresh process whose Hugging Face cache is under
    ``hf_home`` (the user's own cache, wherever it is, plays no part)."""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE")}
    code = "import json; from sunar.models.scorer import resolve_scorer; print(json.dumps(resolve_scorer('auto')))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env={**env, "HF_HOME": str(hf_home)})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_auto_scorer_is_the_papers_cross_encoder_once_cached_else_hybrid(tmp_path):
    assert auto_scorer(tmp_path) == ["hybrid", f"{PAPER_CROSS_ENCODER} not in the Hugging Face cache"]
    # the cache layout huggingface_hub writes: refs/main names the snapshot that holds the files
    repo = tmp_path / "hub" / f"models--{PAPER_CROSS_ENCODER.replace('/', '--')}"
    (repo / "snapshots" / "0123abcd").mkdir(parents=True)
    (repo / "snapshots" / "0123abcd" / "config.json").write_text("{}")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    assert auto_scorer(tmp_path) == [f"cross-encoder:{PAPER_CROSS_ENCODER}", "the paper's cross-encoder is cached"]


def test_hf_nli_by_path_classifies_both_directions(tiny_nli):
    nli = make_nli(f"hf:{tiny_nli}", None)
    assert isinstance(nli, HFNLI)
    relation = nli.relation("Where was Lynch born?", "Missoula", "Helena")
    assert relation in {"equivalent", "neutral", "contradiction"}
    assert nli.relation("q", "Missoula", "missoula.") == "equivalent"  # exact-match short-cut
    # "A" joins "a" by the short-cut; "b" joins them only if the (random) model judges it equivalent
    joined = nli.relation("q", "a", "b") == "equivalent"
    assert semantic_sets("q", ["a", "b", "A"], nli) == ([[0, 1, 2]] if joined else [[0, 2], [1]])


def test_hf_nli_needs_entailment_labels(tmp_path_factory):
    from conftest import _tiny_bert

    folder = _tiny_bert(tmp_path_factory.mktemp("bad-nli"), 2, {0: "POSITIVE", 1: "NEGATIVE"})
    with pytest.raises(ModelUnavailable, match="needs entailment and contradiction labels"):
        HFNLI(str(folder))


def test_embedder_by_path(tiny_embedder):
    emb = Embedder(str(tiny_embedder))
    vectors = emb.embed(["one", "two words"])
    assert vectors.shape == (2, 32) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    with pytest.raises(ModelUnavailable, match="neither a folder nor in the Hugging Face cache"):
        Embedder("no-such-org/no-such-model")


@pytest.mark.slow
def test_bundled_scorers_rank_the_obvious_document_first():
    query = "Where was David Lynch born?"
    for scorer in (DenseScorer(), SpladeScorer(), HybridScorer()):
        scores = scorer.score(query, DOCS)
        assert int(np.argmax(scores)) == 0, scorer.name
        assert scores[2] < scores[0]


def test_splade_chunks_give_the_same_scores():
    whole = SpladeScorer(chunk=16).score("Where was David Lynch born?", DOCS)
    assert SpladeScorer(chunk=1).score("Where was David Lynch born?", DOCS) == pytest.approx(whole, abs=1e-4)
