"""Building and opening indexes on the shipped demo corpus with the real MiniLM embedder."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import free_port
from sunar.errors import IndexNotReady, ModelUnavailable, SunarError
from sunar.models.embedder import Embedder
from sunar.stores.chroma import ChromaStore, make_client
from sunar.stores.corpus import read_corpus
from sunar.stores.index import BUILD, MANIFEST, Index, build_index, collection_name, fuse


def test_demo_index_is_complete_and_answers(demo_index, demo_corpus):
    index = Index(demo_index)
    docs = read_corpus(demo_corpus)
    assert index.size == len(docs) == index.manifest["documents"]
    assert index.manifest["neighbours_stored"] == len(docs) - 1  # k=100 capped by a 55-doc corpus
    hits = index.first_stage("Ronnie Rocket unfinished film", 5)
    assert index.documents([hits[0][0]])[0].title == "Ronnie Rocket"
    dense = index.first_stage("Where was David Lynch born?", 5, kind="dense")
    assert "David Lynch" in [d.title for d in index.documents([i for i, _ in dense])]
    fused = index.first_stage("Where was David Lynch born?", 5, kind="fused")
    bm25 = index.first_stage("Where was David Lynch born?", 5)
    assert fused == fuse([bm25, dense], 5) and len(fused) == 5
    lynch = next(d.id for d in docs if d.title == "David Lynch")
    neighbours = index.neighbours(lynch)
    assert len(neighbours) == 10 and lynch not in [n for n, _ in neighbours]
    assert [s for _, s in neighbours] == sorted((s for _, s in neighbours), reverse=True)
    assert index.neighbours("not-a-doc") == []
    assert index.documents(["not-a-doc"]) == []


def test_rerun_is_idempotent(demo_index, demo_corpus):
    before = (demo_index / MANIFEST).read_text()
    stats = build_index(demo_corpus, demo_index, progress=False)
    assert stats.up_to_date and (demo_index / MANIFEST).read_text() == before
    assert Index(demo_index).store.count() == stats.documents


def test_refuses_another_corpus_or_embedder(demo_index, tmp_path, tiny_embedder):
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"id": "x", "title": "X", "text": "something else"}) + "\n")
    with pytest.raises(SunarError, match="built from another corpus"):
        build_index(other, demo_index, progress=False)
    with pytest.raises(SunarError, match="never mixes embedding models"):
        build_index(other, demo_index, embedder=str(tiny_embedder), progress=False)


def test_rebuild_replaces(tmp_path, tiny_embedder):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "title": f"T{i}", "text": f"text number {i}"}) + "\n" for i in range(6)))
    folder = tmp_path / "idx"
    build_index(corpus, folder, embedder=str(tiny_embedder), neighbours=3, progress=False)
    corpus.write_text(corpus.read_text() + json.dumps({"id": "d6", "title": "T6", "text": "new"}) + "\n")
    with pytest.raises(SunarError, match="another corpus"):
        build_index(corpus, folder, embedder=str(tiny_embedder), progress=False)
    build_index(corpus, folder, embedder=str(tiny_embedder), neighbours=3, rebuild=True, progress=False)
    assert Index(folder).size == 7 and Index(folder).store.count() == 7


def test_resume_embeds_only_what_is_missing(tmp_path, demo_corpus):
    """A build killed after some batches left documents in Chroma and build.json, no manifest."""
    from sunar.stores.corpus import fingerprint

    docs = read_corpus(demo_corpus)
    folder = tmp_path / "idx"
    folder.mkdir()
    emb = Embedder("minilm")
    fp = fingerprint(demo_corpus)
    (folder / BUILD).write_text(json.dumps({"corpus_fingerprint": fp, "embedder": emb.name}))
    store = ChromaStore(make_client(str(folder / "chroma")), collection_name(fp, emb.name), emb.name, create=True)
    store.add(docs[:20], emb.embed([d.content for d in docs[:20]]))
    with pytest.raises(IndexNotReady, match="incomplete"):
        Index(folder)
    stats = build_index(demo_corpus, folder, progress=False)
    assert stats.embedded == len(docs) - 20
    index = Index(folder)
    assert index.store.count() == len(docs) and not (folder / BUILD).exists()


def test_a_complete_index_is_read_and_confirmed_while_another_process_holds_the_build_lock(demo_index, demo_corpus):
    """Readers and the up-to-date check take no lock; only work to do is refused while a build runs."""
    code = textwrap.dedent("""
        import sys, time
        from pathlib import Path
        from sunar.stores.build import _build_lock
        with _build_lock(Path(sys.argv[1])):
            print("locked", flush=True)
            time.sleep(600)
    """)
    child = subprocess.Popen([sys.executable, "-c", code, str(demo_index)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "locked"
        assert build_index(demo_corpus, demo_index, progress=False).up_to_date
        assert Index(demo_index).size == len(read_corpus(demo_corpus))
        with pytest.raises(SunarError, match=f"being built by another process \\(pid {child.pid}\\)"):
            build_index(demo_corpus, demo_index, rebuild=True, progress=False)  # work to do: needs the lock
    finally:
        child.kill()
        child.wait()


def test_missing_index_names_the_command(tmp_path):
    with pytest.raises(IndexNotReady, match="sunar index CORPUS --index"):
        Index(tmp_path / "nothing")


def test_damaged_manifest_is_a_clear_error(tmp_path):
    (tmp_path / MANIFEST).write_text("{half")
    with pytest.raises(IndexNotReady, match="damaged"):
        Index(tmp_path)


@pytest.mark.slow
def test_kill_9_half_way_then_rerun_gives_the_same_index(tmp_path, demo_index):
    """A real kill -9 during embedding of ~1,300 documents, then a rerun: no duplicates, complete."""
    corpus = tmp_path / "big.jsonl"
    with open(corpus, "w") as f:
        for i in range(1300):
            f.write(json.dumps({"id": f"d{i}", "title": f"Topic {i % 97}", "text": f"Paragraph {i} about topic {i % 97} and item {i * 7 % 131}."}) + "\n")
    folder = tmp_path / "idx"
    cmd = [sys.executable, "-m", "sunar.cli", "index", str(corpus), "--index", str(folder)]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    seen = ""
    deadline = time.time() + 300
    while time.time() < deadline:
        seen += proc.stderr.read(1) or ""
        if "512/1300" in seen or "768/1300" in seen:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (folder / MANIFEST).exists()
    with pytest.raises(IndexNotReady, match="incomplete"):
        Index(folder)
    stats = build_index(corpus, folder, progress=False)
    assert 0 < stats.embedded < 1300
    index = Index(folder)
    assert index.store.count() == 1300 == index.size
    assert sorted(index.doc_ids) == sorted(f"d{i}" for i in range(1300))


@pytest.mark.slow
def test_chroma_server_mode(tmp_path, demo_corpus):
    port = free_port()
    chroma = os.path.join(os.path.dirname(sys.executable), "chroma")
    server = subprocess.Popen(
        [chroma, "run", "--path", str(tmp_path / "server-data"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.time() + 60
        while True:
            try:
                make_client(url=url)
                break
            except SunarError:
                if time.time() > deadline:
                    raise
                time.sleep(0.5)
        folder = tmp_path / "idx"
        build_index(demo_corpus, folder, chroma_url=url, progress=False)
        assert not (folder / "chroma").exists()
        with pytest.raises(IndexNotReady, match="pass that server's URL with --chroma-url"):
            Index(folder)
        index = Index(folder, chroma_url=url)
        assert index.store.count() == index.size
        hit = index.first_stage("Where was David Lynch born?", 3, kind="dense")[0][0]
        assert index.documents([hit])[0].title == "David Lynch"
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    with pytest.raises(SunarError, match="no Chroma server answers"):
        Index(folder, chroma_url=url)


ODD_IDS = ["doc one", "tab\there", "new\nline", "a\r\nb", "ünïcödé 漢字 🎉", "quo\"te's", "back\\slash", "[1, 2]", "nul\x00byte", "line\u2028sep"]


def test_any_id_a_json_string_holds_round_trips(tmp_path):
    words = ["apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel", "ivy", "juniper"]
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "title": w.title(), "text": f"All about the {w} tree and its fruit."}) + "\n" for i, w in zip(ODD_IDS, words, strict=True)))
    folder = tmp_path / "idx"
    build_index(corpus, folder, neighbours=3, progress=False)
    index = Index(folder)
    assert index.doc_ids == ODD_IDS and index.store.count() == len(ODD_IDS)
    for doc_id, word in zip(ODD_IDS, words, strict=True):
        assert index.first_stage(word, 1)[0][0] == doc_id  # BM25 rows
        assert index.documents([doc_id])[0].title == word.title()  # Chroma
        assert {n for n, _ in index.neighbours(doc_id)} <= set(ODD_IDS) - {doc_id}  # graph rows
        assert len(index.neighbours(doc_id)) == 3
    assert index.first_stage("the elder tree", 1, kind="dense")[0][0] == "ünïcödé 漢字 🎉"  # Chroma's HNSW
    assert build_index(corpus, folder, neighbours=3, progress=False).up_to_date


def _as_format_1(folder: Path, ids: list[str]) -> None:
    manifest = json.loads((folder / MANIFEST).read_text())
    (folder / MANIFEST).write_text(json.dumps({**manifest, "format": 1}))
    (folder / "doc_ids.json").unlink()
    (folder / "doc_ids.txt").write_text("\n".join(ids) + "\n")


def test_a_format_1_index_asks_for_an_upgrade_which_rewrites_only_its_ids(tmp_path, demo_corpus):
    folder = tmp_path / "idx"
    build_index(demo_corpus, folder, neighbours=5, progress=False)
    ids = Index(folder).doc_ids
    kept = {name: (folder / name).stat().st_mtime_ns for name in ("neighbours.ids.npy", "neighbours.scores.npy")}
    _as_format_1(folder, ids)
    with pytest.raises(IndexNotReady, match=f"upgrade it with: sunar index CORPUS --index {folder}"):
        Index(folder)
    assert build_index(demo_corpus, folder, neighbours=5, progress=False).up_to_date  # no build: the ids file only
    assert Index(folder).doc_ids == ids and not (folder / "doc_ids.txt").exists()
    assert {name: (folder / name).stat().st_mtime_ns for name in kept} == kept


def test_a_format_1_index_whose_ids_held_whitespace_is_rebuilt(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "title": i, "text": f"text about {i}"}) + "\n" for i in ["a b", "c", "d"]))
    folder = tmp_path / "idx"
    build_index(corpus, folder, neighbours=2, progress=False)
    _as_format_1(folder, ["a b", "c", "d"])  # as format 1 wrote them: "a b" reads back as two ids
    stats = build_index(corpus, folder, neighbours=2, progress=False)
    assert not stats.up_to_date and stats.embedded == 0  # rebuilt from Chroma's vectors
    assert Index(folder).doc_ids == ["a b", "c", "d"]


def test_an_embedder_folder_named_by_an_index_loads_only_if_the_operator_allows_it(tmp_path, tiny_embedder, monkeypatch):
    from sunar.models.embedder import EMBEDDER_DIRS

    corpus = tmp_path / "c.jsonl"
    words = ["alpha", "beta", "gamma", "delta"]
    corpus.write_text("".join(json.dumps({"id": w, "title": w.title(), "text": f"text about {w}"}) + "\n" for w in words))
    folder = tmp_path / "idx"
    build_index(corpus, folder, embedder=str(tiny_embedder), neighbours=2, progress=False)
    monkeypatch.delenv(EMBEDDER_DIRS, raising=False)
    index = Index(folder)
    assert index.first_stage("gamma", 1)[0][0] == "gamma"  # BM25 needs no embedder
    with pytest.raises(ModelUnavailable, match=f"allow it with {EMBEDDER_DIRS}="):
        index.first_stage("gamma", 1, kind="dense")
    monkeypatch.setenv(EMBEDDER_DIRS, str(tiny_embedder))
    assert len(Index(folder).first_stage("gamma", 2, kind="dense")) == 2
