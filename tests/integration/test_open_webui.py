"""A chat app a user would install, in a real browser: Open WebUI (its own venv, from ``./run setup-webui
--browser``) started by ``./run webui`` against ``sunar serve-openai``, and headless Chromium (Debian's)
driven by Playwright as a person would use it: pick the model, type the question, send, read the answer
with its citations and its thinking back from the page. The endpoint runs with the scripted gold oracle
(tests/oracle.py) as its LLM and the demo index, as in test_openai_api.py; the real LLM through the endpoint
is tested there and in test_openai_llama_server.py. Without the venv or Chromium the test is skipped,
except under CI, where it fails."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from test_openai_api import Q1, start, stop

from conftest import free_port, wait_until_up

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("open_webui_browser.py")
VENV = Path(os.environ.get("SUNAR_WEBUI_VENV") or ROOT / ".venv-webui")  # as in ./run
CHROMIUM = Path("/usr/bin/chromium")


def missing() -> str:
    """What the test lacks, or ''."""
    if not (VENV / "bin" / "open-webui").exists():
        return f"Open WebUI is not installed in {VENV}"
    if not any(VENV.glob("lib/python3*/site-packages/playwright")):
        return f"Playwright is not installed in {VENV}"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing"
    return ""


def ended(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return True
    return False


def stop_group(proc: subprocess.Popen) -> None:
    """SIGTERM to the process and everything it started, SIGKILL after 30 s; none may be left."""
    if ended(proc.pid):
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    deadline = time.time() + 10
    while not ended(proc.pid) and time.time() < deadline:  # what it started, after it
        time.sleep(0.2)
    if not ended(proc.pid):
        os.killpg(proc.pid, signal.SIGKILL)
        time.sleep(1)
    assert ended(proc.pid), f"processes of group {proc.pid} are left"


@pytest.fixture(scope="module")
def tools():
    reason = missing()
    if reason and os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(f"{reason}; .ci/run installs it with ./run setup-webui --browser")
    if reason:
        pytest.skip(f"{reason}: install it with ./run setup-webui --browser")


@pytest.fixture(scope="module")
def endpoint(tools, tmp_path_factory, demo_index):
    proc, url = start(tmp_path_factory.mktemp("openai-api"), SUNAR_LLM="embedded:qwen2.5-1.5b", SUNAR_INDEX_DIR=str(demo_index),
                      SUNAR_NLI="llm", SUNAR_SCORER="dense")
    yield url
    stop(proc)


@pytest.fixture(scope="module")
def webui(tmp_path_factory, endpoint):
    """``./run webui`` on a free loopback port with a fresh data folder; its URL once it answers."""
    folder = tmp_path_factory.mktemp("open-webui")
    port = free_port()
    env = {**os.environ, "DATA_DIR": str(folder / "data"), "SUNAR_WEBUI_VENV": str(VENV)}
    log = open(folder / "webui.log", "w")  # noqa: SIM115 - the server writes to it until stopped
    started = time.perf_counter()
    proc = subprocess.Popen([str(ROOT / "run"), "webui", "--port", str(port), "--api", f"{endpoint}/v1"],
                            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(proc, f"{url}/health", folder / "webui.log", 300, "Open WebUI")
        yield url, folder, time.perf_counter() - started
    finally:
        stop_group(proc)
        log.close()


@pytest.mark.slow
def test_a_question_typed_in_open_webui_gets_the_answer_with_its_citations_and_steps(webui, capsys):
    url, folder, startup = webui
    out = folder / "chat.json"
    driver = subprocess.Popen([str(VENV / "bin" / "python"), str(DRIVER), url, "sunar", Q1, "Ronnie Rocket", str(out)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = driver.communicate(timeout=300)
    finally:
        stop_group(driver)  # Chromium too, whatever happened
    page_text = out.with_suffix(".txt")
    assert driver.returncode == 0, f"{output[-3000:]}\npage: {page_text.read_text() if page_text.exists() else '-'}\nscreenshot: {out.with_suffix('.png')}"
    seen = json.loads(out.read_text())

    assert "sunar" in seen["offered"] and "self_ask" in seen["offered"]  # the graphs, as the app lists them
    assert seen["model"] == "sunar" and Q1 in seen["chat"]
    reply = seen["reply"]
    assert reply.lstrip().startswith("Missoula, Montana"), reply  # the answer first
    assert "Sampled answers agreeing with it: " in reply and "not a probability of being right" in reply  # no calibration for the demo corpus
    assert "Who directed film Ronnie Rocket? -> David Lynch" in reply and "Where was David Lynch born? -> Missoula, Montana" in reply
    assert "Evidence:" in reply and "Ronnie Rocket" in reply.split("Evidence:", 1)[1]  # the numbered list, for every client
    assert any("Ronnie Rocket" in b for b in seen["buttons"]), seen["buttons"]  # Open WebUI's own citation chips
    assert "Ronnie Rocket is" in seen["opened"], seen["opened"]  # a chip opens the passage behind it
    assert "follow-up: Who directed film Ronnie Rocket?" in seen["thinking"]  # the steps, as the model's thinking
    with capsys.disabled():
        print(f"\n[open-webui] started in {startup:.1f} s; page ready in {seen['seconds']['page']} s; "
              f"answer on the page {seen['seconds']['answer']} s after sending")
