"""Index folders and model files that are safe to reopen, without the real embedder: BM25 rows and
any ids, which embedder folder and Chroma server an index may name, the build lock, and the GGUF
cache's partial files. (Building with MiniLM, and killing builds: tests/integration/test_index*.py.)"""

import contextlib
import json
import logging
import os
import re
import socket
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from conftest import free_port
from sunar.errors import IndexNotReady, ModelUnavailable, SunarError
from sunar.models import gguf
from sunar.models.embedder import EMBEDDER_DIRS, spec_for
from sunar.stores.bm25 import BM25Index, has_terms, top_rows
from sunar.stores.build import _build_lock
from sunar.stores.corpus import Document
from sunar.stores.index import BUILD, FORMAT_VERSION, MANIFEST, Index, build_index

# --- the embedder an index names is loaded from the operator's models only ---


def test_a_bundled_model_is_named_by_its_canonical_name():
    assert spec_for("sentence-transformers/all-MiniLM-L6-v2") == "minilm"
    assert spec_for("minilm") == "minilm"


def test_a_folder_named_by_an_index_needs_the_operators_allowance(tmp_path, monkeypatch):
    model = tmp_path / "models" / "my-embedder"
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}")
    monkeypatch.delenv(EMBEDDER_DIRS, raising=False)
    with pytest.raises(ModelUnavailable, match=f"allow it with {EMBEDDER_DIRS}=") as refused:
        spec_for(str(model))
    assert "\n" not in str(refused.value)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelUnavailable):  # a relative name is no different
        spec_for("models/my-embedder")
    monkeypatch.setenv(EMBEDDER_DIRS, str(tmp_path / "elsewhere"))
    with pytest.raises(ModelUnavailable):
        spec_for(str(model))
    with pytest.raises(ModelUnavailable):  # ".." does not climb out of an allowed folder
        spec_for(str(tmp_path / "elsewhere" / ".." / "models" / "my-embedder"))
    monkeypatch.setenv(EMBEDDER_DIRS, os.pathsep.join([str(tmp_path / "elsewhere"), str(tmp_path / "models")]))
    assert spec_for(str(model)) == spec_for("models/my-embedder") == str(model.resolve())
    with pytest.raises(ModelUnavailable):
        spec_for("bad\x00name")


def test_a_hub_name_loads_from_the_hugging_face_cache_not_from_a_folder_of_that_name(tmp_path, monkeypatch):
    from huggingface_hub import constants

    cache = tmp_path / "hub"
    snapshot = cache / "models--someorg--embedder" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (cache / "models--someorg--embedder" / "refs").mkdir()
    (cache / "models--someorg--embedder" / "refs" / "main").write_text("abc123")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "someorg" / "embedder").mkdir(parents=True)  # a same-named folder is not what loads
    assert spec_for("someorg/embedder") == str(snapshot)
    with pytest.raises(ModelUnavailable, match="neither bundled nor in the Hugging Face cache"):
        spec_for("someorg/not-downloaded")


# --- ids are stored once, as JSON; the stores keep rows ---


def test_bm25_rows_map_to_any_ids_and_a_mismatched_order_is_refused(tmp_path):
    docs = [Document(i, "", f"all about {w}") for i, w in (("a b", "apples"), ("c\nd", "pears"), ("é\t\"", "plums"))]
    BM25Index.build(docs).save(tmp_path / "bm25")
    index = BM25Index.load(tmp_path / "bm25", [d.id for d in docs])
    assert [index.search(w, 1)[0][0] for w in ("apples", "pears", "plums")] == ["a b", "c\nd", "é\t\""]
    with pytest.raises(IndexNotReady, match="covers 3 documents, the index 4; rebuild it"):
        BM25Index.load(tmp_path / "bm25", ["a", "b", "c", "d"])  # e.g. ids split at whitespace
    with pytest.raises(IndexNotReady, match="missing or damaged"):
        BM25Index.load(tmp_path / "nothing", ["a"])


def bm25s_ranking(index, query, k):
    """(score, row) of bm25s's own retrieve, best first (its order of equal scores is its partition's)."""
    terms = [t for t in query.split() if t in index.retriever.vocab_dict]
    if not terms:
        return []
    rows, scores = index.retriever.retrieve([terms], k=k, show_progress=False)
    return [(float(s), int(r)) for r, s in zip(rows[0], scores[0], strict=True) if s > 0]


def test_bm25_search_scores_as_bm25s_does_with_ties_in_corpus_order(tmp_path):
    words = ["river", "stone", "bridge", "mill", "tower", "field", "market", "harbour"]
    rng = np.random.default_rng(0)
    docs = [Document(f"d{i}", "", " ".join(rng.choice(words, int(rng.integers(3, 9))))) for i in range(300)]
    BM25Index.build(docs).save(tmp_path / "bm25")
    index = BM25Index.load(tmp_path / "bm25", [d.id for d in docs])
    row = {d.id: i for i, d in enumerate(docs)}
    for query in ("river", "stone bridge", "mill mill tower", "harbour the field", "unknown"):
        got, want = index.search(query, 40), bm25s_ranking(index, query, 40)
        assert [s for _, s in got] == [s for s, _ in want]  # bm25s's scores, to the bit
        pairs = zip(got, got[1:], strict=False)
        assert all(a[1] > b[1] or (a[1] == b[1] and row[a[0]] < row[b[0]]) for a, b in pairs)  # ties in corpus order
        boundary = got[-1][1] if got else None  # which of the documents tied there make the cut may differ
        assert {d for d, s in got if s != boundary} == {docs[r].id for s, r in want if s != boundary}
    assert len(index.search("river", 1000)) == sum("river" in d.text.split() for d in docs)  # every match, no more
    assert index.search("river", 0) == [] and index.search("", 5) == []


def test_top_rows_takes_the_largest_positive_scores_ties_in_row_order():
    scores = np.array([0.0, 2.0, 1.0, 2.0, 0.0, 3.0, 1.0, -1.0], dtype=np.float32)
    assert top_rows(scores, 3).tolist() == [5, 1, 3]
    assert top_rows(scores, 4).tolist() == [5, 1, 3, 2]  # of the tied 1.0s, the first row
    assert top_rows(scores, 10).tolist() == [5, 1, 3, 2, 6]  # zero and negative scores never rank
    assert top_rows(np.zeros(5, dtype=np.float32), 3).tolist() == []


def test_a_corpus_id_that_is_not_valid_unicode_is_a_clear_error(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "ok", "text": "fine"}\n{"id": "bad\\ud800", "text": "lone surrogate"}\n')
    with pytest.raises(SunarError, match=r"document 'bad\\ud800' holds a lone surrogate escape .*; fix that line"):
        build_index(corpus, tmp_path / "idx", progress=False)
    assert not (tmp_path / "idx" / BUILD).exists()


def test_a_corpus_without_a_word_to_search_by_is_refused_before_embedding(tmp_path):
    """bm25s cannot build from no term at all (it raised "max() arg is an empty sequence" after the
    embedding); such a corpus is refused with one line before anything is written."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "a", "title": "y", "text": "y"}\nnot json\n{"id": "b", "text": "the of 7 !"}\n')
    with pytest.raises(SunarError, match=r"none of its 2 paragraph\(s\) has a word to search by .*; give paragraphs of text"):
        build_index(corpus, tmp_path / "idx", progress=False)
    assert not (tmp_path / "idx").exists()
    assert has_terms([Document("a", "y", "the"), Document("b", "", "Ronnie Rocket")])


def test_opening_what_is_not_a_complete_index_says_how_to_build_it(tmp_path):
    folder = tmp_path / "idx"
    build = f"; build it with: sunar index CORPUS --index {folder}"
    with pytest.raises(IndexNotReady, match=re.escape(f"index {folder} does not exist{build}")):
        Index(folder)
    folder.mkdir()
    with pytest.raises(IndexNotReady, match=re.escape(f"{folder} holds no index (no manifest.json){build}")):
        Index(folder)
    (folder / BUILD).write_text("{}")
    with pytest.raises(IndexNotReady, match=re.escape(f"index {folder} is incomplete (a build was interrupted or is running){build}")):
        Index(folder)


# --- an index never chooses where to connect ---


def test_an_index_never_connects_where_its_manifest_says(tmp_path):
    """A manifest naming a Chroma server is refused unless the operator passes a URL; then that
    URL (the operator's) is used, not the manifest's."""
    listener = socket.create_server(("127.0.0.1", 0))
    contacted = []

    def accept():
        with contextlib.suppress(OSError):
            while True:
                conn, _ = listener.accept()
                contacted.append(1)
                conn.close()

    threading.Thread(target=accept, daemon=True).start()
    manifest = {"format": FORMAT_VERSION, "collection": "sunar-x", "embedder": "e", "neighbours_stored": 1,
                "chroma_url": f"http://127.0.0.1:{listener.getsockname()[1]}"}
    (tmp_path / MANIFEST).write_text(json.dumps(manifest))
    (tmp_path / "doc_ids.json").write_text("[]")
    try:
        with pytest.raises(IndexNotReady, match=r"was built on a Chroma server \(\"http://127.0.0.1:\d+\"\); pass that server's URL with --chroma-url URL") as refused:
            Index(tmp_path)
        assert "\n" not in str(refused.value)
        other = f"http://127.0.0.1:{free_port()}"
        with pytest.raises(SunarError, match=f"no Chroma server answers at {other}"):
            Index(tmp_path, chroma_url=other)
        time.sleep(0.2)
        assert contacted == []
    finally:
        listener.close()


# --- one builder per index folder ---


def _hold_lock(folder):
    """A child process holding the build lock of ``folder`` until it is killed."""
    code = textwrap.dedent("""
        import sys, time
        from pathlib import Path
        from sunar.stores.build import _build_lock
        with _build_lock(Path(sys.argv[1])):
            print("locked", flush=True)
            time.sleep(600)
    """)
    child = subprocess.Popen([sys.executable, "-c", code, str(folder)], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "locked"
    return child


def test_a_second_builder_is_refused_until_the_first_dies(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "a", "title": "A", "text": "alpha"}) + "\n")
    folder = tmp_path / "idx"
    folder.mkdir()
    child = _hold_lock(folder)
    try:
        with pytest.raises(SunarError, match=rf"index {folder} is being built by another process \(pid {child.pid}\); wait") as refused:
            build_index(corpus, folder, progress=False)
        assert "\n" not in str(refused.value)
        assert [p.name for p in folder.iterdir()] == ["build.lock"]  # nothing was touched
        with pytest.raises(SunarError, match="being built by another process"), _build_lock(folder):
            pass  # another open file in this process is refused too
    finally:
        child.kill()  # SIGKILL: no chance to unlock; the kernel releases the lock
        child.wait()
    with _build_lock(folder):
        assert (folder / "build.lock").read_text() == str(os.getpid())


# --- the GGUF cache never keeps a partial file ---


def _parts(tmp_path):
    parts = [tmp_path / "p1.bin", tmp_path / "p2.bin"]
    parts[0].write_bytes(b"GGUF-head-")
    parts[1].write_bytes(b"tail")
    return parts


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def test_a_failing_copy_leaves_no_partial_file(tmp_path, monkeypatch):
    parts = _parts(tmp_path)
    cache = tmp_path / "cache"
    target = cache / "m.gguf"
    with pytest.raises(ModelUnavailable, match="assembling .* failed") as failed:
        gguf.assemble([parts[0], tmp_path / "vanished.bin"], target, _sha(b"GGUF-head-tail"), "m")
    assert "\n" not in str(failed.value)
    assert list(cache.iterdir()) == []

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(gguf.os, "replace", broken_replace)
        with pytest.raises(ModelUnavailable, match="No space left"):
            gguf.assemble(parts, target, _sha(b"GGUF-head-tail"), "m")
    assert list(cache.iterdir()) == []
    assert gguf.assemble(parts, target, _sha(b"GGUF-head-tail"), "m").read_bytes() == b"GGUF-head-tail"
    assert [p.name for p in cache.iterdir()] == ["m.gguf"]


def test_a_killed_runs_partial_file_is_removed_and_a_running_ones_kept(tmp_path):
    parts = _parts(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (cache / f"m.part-{dead.pid}").write_bytes(b"GGUF-half")  # killed half way
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        (cache / f"m.part-{alive.pid}").write_bytes(b"GGUF-writing")  # another process, still at work
        (cache / "other.part-1").write_bytes(b"x")  # another model's file: not ours to judge
        gguf.assemble(parts, cache / "m.gguf", _sha(b"GGUF-head-tail"), "m")
        assert sorted(p.name for p in cache.iterdir()) == sorted(["m.gguf", f"m.part-{alive.pid}", "other.part-1"])
    finally:
        alive.kill()
        alive.wait()


def test_reciprocal_rank_fusion_rewards_documents_both_rankings_find():
    from sunar.stores.index import RRF_K, fuse

    bm25 = [("a", 9.0), ("b", 8.0), ("c", 7.0)]
    dense = [("c", 0.9), ("d", 0.8), ("a", 0.7)]
    fused = fuse([bm25, dense], 3)
    assert [d for d, _ in fused] == ["a", "c", "b"]  # a: ranks 1 and 3; c: 3 and 1 (tie, bm25's order); b: 2
    assert fused[0][1] == pytest.approx(1 / (RRF_K + 1) + 1 / (RRF_K + 3))
    assert fuse([bm25, []], 2) == [("a", 1 / (RRF_K + 1)), ("b", 1 / (RRF_K + 2))]
    assert fuse([[], []], 5) == []


def test_stored_vectors_come_back_in_the_order_asked_and_a_missing_one_is_named(tmp_path):
    from sunar.stores.chroma import MAX_BATCH, ChromaStore, make_client

    store = ChromaStore(make_client(str(tmp_path / "chroma")), "sunar-0000000000000000", "minilm", create=True)
    n = MAX_BATCH + 7  # two batches
    vectors = np.random.default_rng(0).normal(size=(n, 8)).astype(np.float32)
    docs = [Document(f"d{i}", "", f"text {i}") for i in range(n)]
    for start in range(0, n, 1000):
        store.add(docs[start : start + 1000], vectors[start : start + 1000])
    order = np.random.default_rng(1).permutation(n)
    got = store.vectors([docs[i].id for i in order])
    assert got.dtype == np.float32 and np.allclose(got, vectors[order], atol=1e-6)
    with pytest.raises(IndexNotReady, match=r"lacks vectors for 1 documents \(e.g. nowhere\)"):
        store.vectors(["d3", "nowhere", "d1"])


def test_building_bm25_logs_at_the_level_chosen_before_bm25s_is_imported():
    """bm25s sets its own logger to DEBUG when imported, so a quiet CLI printed "Building index from IDs
    objects" on every first run; checked in a fresh interpreter, where bm25s is not imported yet."""
    script = textwrap.dedent("""
        import logging, sys
        logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        from sunar.stores.bm25 import BM25Index
        from sunar.stores.corpus import Document
        BM25Index.build([Document(id="a", title="Kalmar", text="Kalmar Castle is in Sweden.")])
        print(logging.getLogger("bm25s").level)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert "Building index" not in done.stderr and done.stdout.strip() == str(logging.WARNING)
