"""Vectors computed elsewhere (``sunar vectors``, ``sunar index --vectors``) and the embedding device,
on tiny corpora with a deterministic stand-in for MiniLM's embed: the bundled model's folder is
real (its name, and its dimension read from its configs), its weights are never loaded."""

import json
import zlib

import numpy as np
import pytest

from sunar.cli import main
from sunar.errors import ModelUnavailable, SunarError
from sunar.models.embedder import Embedder
from sunar.stores.corpus import fingerprint
from sunar.stores.index import BUILD, MANIFEST, Index, build_index

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
DIM = 384
PARAGRAPHS = [
    ("a", "Apples", "apples grow on trees in orchards"),
    ("b", "Pears", "pears grow on trees too"),
    ("c", "Rivers", "rivers flow to the sea"),
    ("d", "Seas", "the sea is salty water"),
    ("e", "Stars", "stars shine at night"),
    ("f", "Moon", "the moon shines at night"),
]
IDS = [p[0] for p in PARAGRAPHS]


def fake_embed(texts):
    """A vector per word (seeded by the word), summed and normalised: texts sharing words are near."""
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in text.lower().split():
            out[row] += np.random.default_rng(zlib.crc32(word.encode())).normal(size=DIM).astype(np.float32)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture(autouse=True)
def embedded(monkeypatch):
    """How many texts were embedded; loading the real weights fails the test."""
    calls = []

    def embed(self, texts):
        calls.append(len(texts))
        return fake_embed(texts)

    monkeypatch.setattr(Embedder, "embed", embed)
    monkeypatch.setattr(Embedder, "model", property(lambda self: pytest.fail("the embedder's weights were loaded")))
    return calls


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"id": i, "title": t, "text": x}) + "\n" for i, t, x in PARAGRAPHS))
    return path


def contents():
    return [f"{title}\n{text}" for _, title, text in PARAGRAPHS]


def save(path, ids=IDS, vectors=None, embedder=MINILM, **extra):
    vectors = fake_embed(contents()) if vectors is None else vectors
    np.savez(path, ids=np.array(ids, dtype=str), vectors=vectors, embedder=np.array(embedder), **extra)
    return path


def test_the_bundled_embedders_dimension_is_read_from_its_configs_not_its_weights():
    assert Embedder("minilm").dim == DIM


def test_an_index_from_given_vectors_answers_dense_queries_with_the_graph_embedding_in_place_gives(tmp_path, corpus, embedded):
    build_index(corpus, tmp_path / "in-place", progress=False)
    assert sum(embedded) == len(PARAGRAPHS)
    given = save(tmp_path / "v.npz", vectors=3.0 * fake_embed(contents()))  # not unit length: normalised on load
    embedded.clear()
    stats = build_index(corpus, tmp_path / "given", vectors=given, progress=False)
    assert embedded == [] and stats.embedded == len(PARAGRAPHS) and not stats.up_to_date
    manifest = json.loads((tmp_path / "given" / MANIFEST).read_text())
    assert manifest["vectors"] == "given" and manifest["vectors_sha256"] == fingerprint(given)
    assert manifest["dim"] == DIM and manifest["embedder"] == MINILM
    assert not (tmp_path / "given" / BUILD).exists()

    index, reference = Index(tmp_path / "given"), Index(tmp_path / "in-place")
    assert np.allclose(np.linalg.norm(index.store.vectors(IDS), axis=1), 1.0, atol=1e-5)
    assert index.first_stage("orchards", 3, "dense")[0][0] == "a"
    assert index.first_stage("salty water", 3, "dense")[0][0] == "d"
    for doc_id in IDS:
        ours, theirs = index.neighbours(doc_id), reference.neighbours(doc_id)
        assert [d for d, _ in ours] == [d for d, _ in theirs]
        assert np.allclose([s for _, s in ours], [s for _, s in theirs], atol=1e-2)
    assert build_index(corpus, tmp_path / "given", vectors=given, progress=False).up_to_date


BAD = {
    "dimension": (dict(vectors=np.ones((6, 8), dtype=np.float32)), rf"holds float32 vectors of shape \(6, 8\), but {MINILM} gives {DIM} dimensions"),
    "count": (dict(ids=IDS[:5], vectors=fake_embed(contents()[:5])), "holds 5 ids and 5 vectors for a corpus of 6 paragraphs"),
    "order": (dict(ids=["a", "c", "b", "d", "e", "f"]), "is not in the corpus's order: row 1 is 'c', the corpus has 'b'"),
    "embedder": (dict(embedder="someorg/other-model"), f"holds someorg/other-model vectors, but this index embeds queries with {MINILM}"),
    "finite": (dict(vectors=np.where(np.arange(6)[:, None] == 4, np.nan, fake_embed(contents())).astype(np.float32)), r"the vector of 'e' \(row 4\) is not finite"),
    "keys": (dict(embedder=None), "lacks embedder"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_wrong_vectors_file_is_one_line_and_leaves_nothing(tmp_path, corpus, case):
    fields, message = BAD[case]
    path = tmp_path / "v.npz"
    if fields.get("embedder", "") is None:
        np.savez(path, ids=np.array(IDS), vectors=fake_embed(contents()))
    else:
        save(path, **fields)
    with pytest.raises(SunarError, match=message) as refused:
        build_index(corpus, tmp_path / "idx", vectors=path, progress=False)
    assert "\n" not in str(refused.value) and "sunar vectors CORPUS" in str(refused.value)
    assert not (tmp_path / "idx").exists()  # not even a folder


def test_a_file_that_is_no_vectors_file_or_holds_pickles_is_one_line(tmp_path, corpus):
    (tmp_path / "junk.npz").write_text("not a zip")
    with pytest.raises(SunarError, match="cannot read vectors file") as refused:
        build_index(corpus, tmp_path / "idx", vectors=tmp_path / "junk.npz", progress=False)
    assert "\n" not in str(refused.value)
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, ids=np.array(IDS, dtype=object), vectors=fake_embed(contents()), embedder=np.array(MINILM))
    with pytest.raises(SunarError, match="cannot read vectors file"):  # objects are never unpickled
        build_index(corpus, tmp_path / "idx", vectors=pickled, progress=False)
    assert not (tmp_path / "idx").exists()


def test_a_wrong_file_leaves_a_complete_index_as_it_was_even_with_rebuild(tmp_path, corpus):
    build_index(corpus, tmp_path / "idx", progress=False)
    before = (tmp_path / "idx" / MANIFEST).read_text()
    with pytest.raises(SunarError, match="not in the corpus's order"):
        build_index(corpus, tmp_path / "idx", vectors=save(tmp_path / "v.npz", ids=IDS[::-1]), rebuild=True, progress=False)
    assert (tmp_path / "idx" / MANIFEST).read_text() == before and not (tmp_path / "idx" / BUILD).exists()


def test_sunar_vectors_then_sunar_index_round_trips(tmp_path, corpus, embedded, capsys):
    out, folder = tmp_path / "elsewhere.npz", tmp_path / "idx"
    assert main(["vectors", str(corpus), str(out), "--quiet"]) == 0
    assert f"wrote 6 vectors of {DIM} dimensions ({MINILM}) to {out}" in capsys.readouterr().out
    with np.load(out) as data:
        assert list(data["ids"]) == IDS and str(data["embedder"]) == MINILM and data["vectors"].dtype == np.float32
        assert np.allclose(data["vectors"], fake_embed(contents()))
    embedded.clear()
    assert main(["index", str(corpus), "--index", str(folder), "--vectors", str(out), "--quiet"]) == 0
    assert f"6 stored from {out}" in capsys.readouterr().out
    assert embedded == []
    assert json.loads((folder / MANIFEST).read_text())["vectors"] == "given"
    assert Index(folder).first_stage("moon", 1, "dense")[0][0] == "f"


def test_a_wrong_vectors_file_through_the_command_is_one_line(tmp_path, corpus, capsys):
    path = save(tmp_path / "v.npz", vectors=np.ones((6, 8), dtype=np.float32))
    assert main(["index", str(corpus), "--index", str(tmp_path / "idx"), "--vectors", str(path), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: vectors file") and err.count("\n") == 1
    assert not (tmp_path / "idx").exists()


def test_a_device_torch_does_not_have_is_one_line(tmp_path, corpus, capsys, monkeypatch):
    import torch

    out = tmp_path / "v.npz"
    assert main(["vectors", str(corpus), str(out), "--device", "warp9"]) == 1
    err = capsys.readouterr().err
    assert err == "error: unknown device 'warp9'; use --device cpu, cuda (or cuda:N) or mps\n"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main(["index", str(corpus), "--index", str(tmp_path / "idx"), "--device", "cuda"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: this machine's torch") and "has no cuda device; use --device cpu" in err and err.count("\n") == 1
    assert not out.exists() and not (tmp_path / "idx").exists()
    with pytest.raises(ModelUnavailable, match="has no mps device"):
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
        Embedder("minilm", device="mps")
    assert Embedder("minilm", device="cpu").device == "cpu"
