"""``sunar index`` killed with SIGKILL at each named step, then run again: the rerun repairs the
index, which then equals one built without interruption (same ids, vectors, neighbour table).

The kill points are the checkpoints of sunar.stores.steps: with ``SUNAR_TEST_KILL_AT=<step>`` in
its environment the process SIGKILLs itself there (the hook is inert otherwise). A kill releases
the build lock too: every rerun here would be refused if it did not.
"""

import json
import os
import shutil
import signal
import subprocess
import sys

import numpy as np
import pytest

from sunar.errors import IndexNotReady
from sunar.paths import DEMO_CORPUS
from sunar.stores.index import BUILD, MANIFEST, Index
from sunar.stores.vectors import write_vectors

pytestmark = pytest.mark.slow

#: The steps of a first build, in order (see sunar.stores.build._build and steps.run_stages; "unpublished" is "planned"
#: when there is no manifest yet).
FRESH = ["planned", "embedded", "bm25", "neighbour-graph", "graph-saved", "published"]
#: A --rebuild of a complete index: the old index is discarded after "unpublished".
REBUILD = ["planned", "unpublished", "collection-deleted", "embedded", "neighbour-graph", "published"]


@pytest.fixture(scope="module")
def vectors(tmp_path_factory):
    """The demo corpus's vectors, embedded once by the real embedder."""
    path = tmp_path_factory.mktemp("vectors") / "demo.npz"
    write_vectors(DEMO_CORPUS, path, progress=False)
    return path


def sunar_index(folder, vectors, *extra, kill_at=""):
    env = {**os.environ, "SUNAR_TEST_KILL_AT": kill_at}
    cmd = [sys.executable, "-m", "sunar.cli", "index", str(DEMO_CORPUS), "--index", str(folder), "--vectors", str(vectors), "--quiet", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)


def snapshot(folder):
    index = Index(folder)
    return {
        "ids": index.doc_ids,
        "vectors": index.store.vectors(index.doc_ids),
        "neighbour_ids": np.asarray(index.graph.ids),
        "neighbour_scores": np.asarray(index.graph.scores, dtype=np.float32),
        "bm25": [index.first_stage(q, 5) for q in ("Ronnie Rocket film", "born in Montana", "director")],
        "manifest": {k: v for k, v in index.manifest.items() if k != "built"},
    }


def assert_same(got, want):
    assert got["ids"] == want["ids"] and got["manifest"] == want["manifest"]
    assert np.allclose(got["vectors"], want["vectors"], atol=1e-5)
    assert (got["neighbour_ids"] == want["neighbour_ids"]).all()
    assert np.allclose(got["neighbour_scores"], want["neighbour_scores"], atol=1e-3)
    assert got["bm25"] == want["bm25"]


@pytest.fixture(scope="module")
def built(tmp_path_factory, vectors):
    """An uninterrupted build (its folder is copied before anything in this process opens it)."""
    folder = tmp_path_factory.mktemp("kill") / "reference"
    done = sunar_index(folder, vectors)
    assert done.returncode == 0, done.stderr
    pristine = folder.with_name("pristine")
    shutil.copytree(folder, pristine)
    return pristine, snapshot(folder)


def kill_at(folder, vectors, step, *args):
    killed = sunar_index(folder, vectors, *args, kill_at=step)
    assert killed.returncode == -signal.SIGKILL, f"never reached step {step}: {killed.stderr[-2000:]}"


def rerun(folder, vectors, *args):
    again = sunar_index(folder, vectors, *args)
    assert again.returncode == 0, again.stderr
    assert not (folder / BUILD).exists()
    assert not [p.name for p in folder.iterdir() if ".tmp" in p.name]
    return again.stdout


@pytest.mark.parametrize("step", FRESH)
def test_a_build_killed_at_any_step_is_finished_by_the_rerun(tmp_path, vectors, built, step):
    _, reference = built
    folder = tmp_path / "idx"
    kill_at(folder, vectors, step)
    if step == "published":
        assert_same(snapshot(folder), reference)
    else:
        with pytest.raises(IndexNotReady, match="incomplete"):  # never an index that opens half-built
            Index(folder)
    out = rerun(folder, vectors)
    assert ("up to date" in out) == (step == "published")
    assert_same(snapshot(folder), reference)


@pytest.mark.parametrize(
    ("step", "again"),
    [pytest.param(step, [], id=step) for step in REBUILD] + [pytest.param("collection-deleted", ["--rebuild"], id="collection-deleted-rerun-rebuild")],
)
def test_a_rebuild_killed_at_any_step_is_finished_by_the_rerun(tmp_path, vectors, built, step, again):
    """Whether or not the rerun says --rebuild, a killed rebuild goes on: an index that lost its
    Chroma collection never reads as complete or up to date."""
    pristine, reference = built
    folder = tmp_path / "idx"
    shutil.copytree(pristine, folder)
    old = json.loads((folder / MANIFEST).read_text())
    kill_at(folder, vectors, step, "--rebuild")
    if step in ("planned", "published"):  # before: the old index, untouched; after: the new one
        assert_same(snapshot(folder), reference)
        assert (json.loads((folder / MANIFEST).read_text()) == old) == (step == "planned")
    else:
        with pytest.raises(IndexNotReady, match="incomplete"):
            Index(folder)
    out = rerun(folder, vectors, *again)
    assert ("up to date" in out) == (step == "published")
    if step in ("planned", "unpublished", "collection-deleted"):
        assert f"{len(reference['ids'])} stored from {vectors}" in out  # the old vectors were discarded, as asked
    assert_same(snapshot(folder), reference)
