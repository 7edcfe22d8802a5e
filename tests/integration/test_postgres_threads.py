"""Threads in one PostgreSQL database shared by several server processes: a throwaway cluster of
Debian's PostgreSQL started here (initdb in a temporary folder, a free loopback port), two
``sunar serve-openai`` processes on it with the scripted gold oracle (tests/oracle.py) as their
LLM, and a thread started on the first, killed with SIGKILL in the middle of its run, then finished
by the second without computing a finished step again. ``sunar ask --thread`` keeps its runs there
too. PostgreSQL missing (or only root to run it as) skips the tests, except under CI=1, where
Debian's package is installed and a missing server fails."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import suppress
from pathlib import Path

import httpx
import pytest
from test_openai_api import Q1, TESTS, start, stop

from conftest import free_port

#: The algorithm's settings of every request here (the demo index, the oracle).
SMALL = {"batch_size": 4, "budget": 8, "samples": 2, "evidence": 3, "first_stage_depth": 20, "max_tokens": 32}
#: The operator's settings of both servers: the oracle stands in for the embedded model.
OPERATOR = {"SUNAR_LLM": "embedded:qwen2.5-1.5b", "SUNAR_NLI": "llm", "SUNAR_SCORER": "dense"}


def unavailable(reason: str) -> None:
    if os.environ.get("CI") == "1":
        pytest.fail(f"{reason} (CI=1: the PostgreSQL tests must run)")
    pytest.skip(reason)


def postgres_bin() -> Path | None:
    """Debian's PostgreSQL programs (the newest version installed); under CI=1, installed first if missing."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: int(p.parent.parent.name))
    if not found and os.environ.get("CI") == "1" and shutil.which("apt-get"):
        sudo = [] if os.getuid() == 0 else ["sudo"]
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run([*sudo, "apt-get", "update", "-qq"], env=env, check=True)
        subprocess.run([*sudo, "apt-get", "install", "-y", "-qq", "postgresql"], env=env, check=True, stdout=subprocess.DEVNULL)
        return postgres_bin()
    return found[-1].parent if found else None


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    """A PostgreSQL server of its own on a free loopback port, its data in a temporary folder:
    the URL of its ``postgres`` database; stopped and removed afterwards. PostgreSQL refuses to
    run as root: as root, it runs as Debian's ``postgres`` user, in a folder that user owns."""
    bin_dir = postgres_bin()
    if bin_dir is None:
        unavailable("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    as_user: list[str] = []
    if os.getuid() == 0:
        if shutil.which("runuser") is None or subprocess.run(["id", "-u", "postgres"], capture_output=True).returncode != 0:
            unavailable("running as root without Debian's postgres user to run PostgreSQL as")
        as_user = ["runuser", "-u", "postgres", "--"]
        folder = Path(tempfile.mkdtemp(prefix="sunar-pg-"))  # pytest's folders are root's alone
        shutil.chown(folder, "postgres")
    else:
        folder = tmp_path_factory.mktemp("postgres")
    data, port = folder / "data", free_port()

    def pg(*args: str, **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run([*as_user, *args], cwd=folder, capture_output=True, text=True, timeout=120, **kwargs)

    made = pg(str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "sunar", "-E", "UTF8", "--no-sync")
    assert made.returncode == 0, made.stderr
    options = f"-k {folder} -p {port} -c listen_addresses=127.0.0.1 -c fsync=off"
    started = pg(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(folder / "server.log"), "-o", options, "-w", "start")
    assert started.returncode == 0, started.stderr + (folder / "server.log").read_text()
    try:
        yield f"postgresql://sunar@127.0.0.1:{port}/postgres"
    finally:
        pg(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        if as_user:
            shutil.rmtree(folder, ignore_errors=True)


def rows(url: str, query: str, *params) -> list[tuple]:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(query, params).fetchall()


def calls(log: Path) -> int:
    """The oracle's generations so far (one line each in SUNAR_ORACLE_LOG). The NLI judge's calls
    are left out: a server process keeps the verdicts it has judged, so B's count of them depends
    on what it ran before, not on what it resumed."""
    return sum(kind != "nli" for kind in log.read_text().split()) if log.exists() else 0


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line]


def server(tmp_path: Path, name: str, database: str, index: Path, **env: str):
    """``sunar serve-openai`` with its threads in ``database`` (SUNAR_CHECKPOINTS), its oracle's
    calls logged to <name>.log: (process, URL)."""
    (tmp_path / name).mkdir()
    return start(tmp_path / name, **OPERATOR, SUNAR_INDEX_DIR=str(index), SUNAR_CHECKPOINTS=database,
                 SUNAR_ORACLE_LOG=str(tmp_path / f"{name}.log"), **env)


def read_steps(url: str, thread: str, seen: list[str]) -> None:
    """Ask on ``thread``, streamed, adding each step's text to ``seen`` until the server goes."""
    body = {"model": "sunar", "messages": [{"role": "user", "content": Q1}], "sunar": SMALL, "stream": True}
    with suppress(httpx.HTTPError), httpx.stream("POST", f"{url}/v1/chat/completions", json=body, headers={"X-Sunar-Thread": thread}, timeout=300) as response:
        for line in response.iter_lines():
            delta = json.loads(line[6:])["choices"][0]["delta"] if line.startswith("data: {") else {}
            if "reasoning_content" in delta:
                seen.append(delta["reasoning_content"])


def ask(url: str, thread: str) -> dict:
    body = {"model": "sunar", "messages": [{"role": "user", "content": Q1}], "sunar": SMALL}
    answer = httpx.post(f"{url}/v1/chat/completions", json=body, headers={"X-Sunar-Thread": thread}, timeout=300)
    assert answer.status_code == 200 and answer.headers["x-sunar-thread"] == thread, answer.text
    return answer.json()["choices"][0]["message"]


@pytest.mark.slow
def test_a_thread_killed_on_one_server_process_is_finished_by_another_without_repeating_a_step(tmp_path, database, demo_index, capsys):
    # A answers slowly (1 s per answer prompt), so the kill lands in the middle of a step
    a, url_a = server(tmp_path, "a", database, demo_index, SUNAR_ORACLE_DELAY="1")
    b, url_b = server(tmp_path, "b", database, demo_index)
    try:
        whole = ask(url_b, "reference")  # the same question run whole, for comparison
        whole_calls = calls(tmp_path / "b.log")

        seen: list[str] = []  # the steps A streamed before it died, read until its connection broke
        reader = threading.Thread(target=read_steps, args=(url_a, "shared-1", seen), daemon=True)
        reader.start()
        deadline = time.time() + 120
        while not any(s.startswith("[answer_hop]") for s in seen) and time.time() < deadline:  # the first sub-question answered
            time.sleep(0.05)
        time.sleep(0.5)  # A is inside the next slow LLM call
        os.killpg(a.pid, signal.SIGKILL)
        reader.join(30)
        a.wait(timeout=30)
        assert a.returncode == -signal.SIGKILL
        killed_calls = calls(tmp_path / "a.log")
        assert rows(database, "SELECT count(*) FROM checkpoints WHERE thread_id = %s", "shared-1")[0][0] > 0

        resumed = ask(url_b, "shared-1")
        resumed_calls = calls(tmp_path / "b.log") - whole_calls
    finally:
        for proc in (a, b):
            if proc.poll() is None:
                stop(proc)

    steps = lines(resumed["reasoning_content"])
    assert steps[0] == "[thread] resuming the unfinished run on thread shared-1 from its last finished step"
    assert resumed["content"] == whole["content"] and resumed["content"].startswith("Missoula, Montana\n")
    # what A finished and B did make the whole run, each step once
    assert lines("".join(seen)) + steps[1:] == lines(whole["reasoning_content"])
    assert not any("follow-up: Who directed film Ronnie Rocket?" in s for s in steps)
    # the model was asked again only what the killed step had asked (the kill landed in one of its calls)
    assert 1 <= killed_calls + resumed_calls - whole_calls <= SMALL["samples"], (killed_calls, resumed_calls, whole_calls)
    assert resumed_calls < whole_calls
    with capsys.disabled():
        print(f"\n[threads] LLM generations: whole run {whole_calls}; killed on A after {killed_calls}, finished on B with {resumed_calls} "
              f"({killed_calls + resumed_calls - whole_calls} asked again: the killed step's)")


@pytest.mark.slow
def test_sunar_ask_keeps_its_thread_in_the_database_named_by_sunar_checkpoints(tmp_path, database, demo_index):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]), "SUNAR_CHECKPOINTS": database}
    command = [sys.executable, str(TESTS / "oracle.py"), "ask", Q1, "--index", str(demo_index), "--nli", "llm", "--scorer", "dense",
               "--profile", "cpu", "--thread", "cli-1", "--json"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["answer"] == "Missoula, Montana"
    assert rows(database, "SELECT count(*) FROM checkpoints WHERE thread_id = %s", "cli-1")[0][0] > 0
