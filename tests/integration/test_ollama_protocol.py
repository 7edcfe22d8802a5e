"""The ``ollama:<model>`` provider (langchain-ollama, the product's default) against a server that
speaks Ollama's protocol with a real model behind it: ``ollama-proxy`` (PyPI ollama-proxy-plus:
Ollama's /api/tags and /api/chat, streamed as NDJSON or not, with ``options``) in front of
llama-cpp-python's OpenAI-compatible server with the project's embedded GGUF (the 0.5B one, for
speed), both on free loopback ports; the product finds the proxy by OLLAMA_HOST, as it finds Ollama.

No Ollama server installs here, and no package on PyPI serves Ollama's protocol from a GGUF by
itself. What this pair lacks, so what is not tested here: ``format`` with a JSON schema (the
product's structured output) reaches llama-cpp-python's server as OpenAI's ``json_schema``
response format, which that server (0.3.36) refuses, so the runs here set
``structured_output=false`` (the prompts' free-text forms and their parsers); ``seed``, ``top_k``
and ``num_ctx`` are dropped by the proxy, and it garbles concurrent streams; ``oai2ollama``, the package MODELS.md names, serves no
/api/chat at all (only /api/tags, /api/show and OpenAI's /v1) and needs Python 3.12.
"""

import json
import os
import signal
import subprocess
import sys

import pytest
from langchain_core.messages import HumanMessage
from test_openai_llama_server import MODEL, llama_server  # noqa: F401  (the real model's server, a fixture)

from conftest import free_port, wait_until_up
from sunar.models.ollama import OllamaLLM

#: The model's name on the proxy: its provider ("local", the llama.cpp server) and the served alias.
OLLAMA_MODEL = f"local/{MODEL}"
PROXY = os.path.join(os.path.dirname(sys.executable), "ollama-proxy")
Q = "Where was the director of film Ronnie Rocket born?"


@pytest.fixture(scope="module")
def ollama_url(llama_server, tmp_path_factory):  # noqa: F811
    """``ollama-proxy`` on a free loopback port, its one provider the llama.cpp server; its URL.
    PROXY_DEBUG logs each request's endpoint, streaming and format (read by the tests)."""
    if not os.path.exists(PROXY):
        pytest.fail("ollama-proxy is not installed: pip install -e '.[dev]' (ollama-proxy-plus)")
    port = free_port()
    log_path = tmp_path_factory.mktemp("ollama-proxy") / "proxy.log"
    env = {**os.environ, "PROVIDERS_LOCAL_API_KEY": "none", "PROVIDERS_LOCAL_BASE_URL": llama_server,
           "EXTRA_MODELS": OLLAMA_MODEL, "PROXY_DEBUG": "1"}
    with open(log_path, "w") as log:
        proc = subprocess.Popen([PROXY, "--host", "127.0.0.1", "--port", str(port)], env=env,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(proc, f"{url}/api/version", log_path, 60, "ollama-proxy")
        yield url, log_path
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def ask(ollama_host: str, *extra: str, llm: str = f"ollama:{OLLAMA_MODEL}", env: dict[str, str] | None = None,
        timeout: float = 1800) -> subprocess.CompletedProcess:
    """``sunar ask Q --json`` with the Ollama server at ``ollama_host`` (OLLAMA_HOST)."""
    return subprocess.run(
        [sys.executable, "-m", "sunar.cli", "ask", Q, "--json", "--llm", llm, *extra],
        capture_output=True, text=True, timeout=timeout, env={**os.environ, "OLLAMA_HOST": ollama_host, **(env or {})},
    )


def one_error_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    return errors[0]


@pytest.mark.slow
def test_a_question_answered_end_to_end_through_ollamas_protocol(ollama_url, demo_index):
    url, log = ollama_url
    result = ask(url, "--index", str(demo_index), "--nli", "llm", "--scorer", "dense", "--profile", "cpu",
                 "--set", "budget=8", "--set", "samples=2", "--set", "max_hops=2", "--set", "calibration=off", "--set", "hop_samples=0",
                 "--set", "structured_output=false")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["answer"] and 0.0 <= record["confidence"] <= 1.0
    assert len(record["reasoning_path"]) <= 2
    assert "Ronnie Rocket" in {e["title"] for e in record["evidence"]}
    assert record["usage"]["llm_calls"] >= 5
    # every call went through Ollama's chat endpoint, streamed (langchain-ollama streams every call)
    chats = [line for line in log.read_text().splitlines() if "REQ /api/chat" in line]
    assert len(chats) >= 5 and all("stream=True" in line for line in chats)


@pytest.mark.slow
def test_options_reach_the_model_and_replies_stream(ollama_url):
    """``num_predict`` (max_tokens) bounds a reply, ``stop`` ends it, temperature 0 repeats itself,
    and a reply comes in more than one streamed piece."""
    url, _ = ollama_url
    llm = OllamaLLM(OLLAMA_MODEL, url=url)
    counting = [HumanMessage("Count from one to twenty in words, separated by spaces.")]
    short = str(llm.generate(counting, max_tokens=4).content)
    assert short and len(short.split()) <= 4
    full = str(llm.generate(counting, max_tokens=64).content)
    assert len(full.split()) > 4 and full.split()[:2] == short.split()[:2]  # greedy: the same start
    assert str(llm.generate(counting, max_tokens=64).content) == full
    lines = [HumanMessage("Write the numbers one to five, each on its own line.")]
    assert "\n" not in str(llm.generate(lines, max_tokens=40, stop=["\n"]).content).strip()
    pieces = [c.content for c in llm.chat.model_copy(update={"num_predict": 16}).stream(counting)]
    assert len([p for p in pieces if p]) > 1
    # Not checked here: several requests at once (Ollama has no n, so the product samples that way).
    # This proxy garbles concurrent streams (seen: texts empty and token counts missing), which a
    # real Ollama server does not; the end-to-end test above still samples through it.


@pytest.mark.slow
def test_a_timeout_a_server_that_is_down_and_a_missing_model_are_one_clear_line(ollama_url, demo_index):
    url, _ = ollama_url
    timed_out = one_error_line(ask(url, "--index", str(demo_index), "--nli", "llm", "--scorer", "dense",
                                   "--set", "structured_output=false", env={"SUNAR_OLLAMA_TIMEOUT": "0.05"}, timeout=300))
    assert f"Ollama at {url} did not answer within 0.05 s" in timed_out and "SUNAR_OLLAMA_TIMEOUT" in timed_out
    # structured output on (the default): the server refuses the JSON-schema format, and says so
    refused = one_error_line(ask(url, "--index", str(demo_index), "--nli", "llm", "--scorer", "dense", "--profile", "cpu", timeout=600))
    assert refused.startswith(f"error: Ollama at {url} refused the request (") and refused.endswith("set structured_output=false")
    down = f"http://127.0.0.1:{free_port()}"
    assert one_error_line(ask(down, "--index", str(demo_index), timeout=300)) == (
        f"error: Ollama server not reachable at {down}; start it with 'ollama serve' or use --llm embedded:qwen2.5-1.5b"
    )
    assert one_error_line(ask(url, "--index", str(demo_index), llm="ollama:nope", timeout=300)) == (
        "error: Ollama has no model 'nope'; run: ollama pull nope"
    )
