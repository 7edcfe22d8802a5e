"""The ``openai:<model>`` provider against a real OpenAI-compatible server: llama-cpp-python's own
(``python -m llama_cpp.server``) serving the project's embedded GGUF (the 0.5B one, for speed),
started on a free loopback port with its prompt cache on (as one would serve the product: a prompt
that begins as an earlier one did, with the worked examples, reads only the rest) and stopped after.
Label log-probabilities agree with llama.cpp's own distribution read in-process, samples honour
max_tokens, an unknown model lists the served one, and a whole question is answered through
``sunar ask --llm openai:...``."""

import json
import math
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest
from langchain_core.messages import HumanMessage

from conftest import free_port
from sunar.errors import ModelUnavailable
from sunar.models import gguf
from sunar.models.openai_compat import OpenAICompatLLM

MODEL = "qwen2.5-0.5b"
ASK = [HumanMessage("Is Paris the capital of France? Answer yes or no.")]
# The server, with llama.cpp's extra CPU buffer types off while the model loads, as the embedded
# provider loads it (they crash llama_decode on AMX CPUs such as this machine's, and the server
# has no option for them): otherwise `python -m llama_cpp.server` unchanged.
SERVER = (
    "import runpy\n"
    "from sunar.models.llama_api import without_extra_buffer_types as _without_extra_buffer_types\n"
    "with _without_extra_buffer_types():\n"
    "    runpy.run_module('llama_cpp.server', run_name='__main__')\n"
)


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    path = gguf.ensure_gguf(gguf.model_spec(MODEL))
    port = free_port()
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, "--model", str(path), "--model_alias", MODEL, "--host", "127.0.0.1", "--port", str(port),
             "--n_ctx", "4096", "--n_threads", str(os.cpu_count() or 2), "--cache", "true"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.time() + 180
        while True:
            if proc.poll() is not None or time.time() > deadline:
                pytest.fail(f"the llama.cpp server did not start: {log_path.read_text()[-3000:]}")
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(1)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


@pytest.mark.slow
def test_judge_sample_and_an_unknown_model_against_llama_cpps_server(llama_server):
    from sunar.models.embedded import EmbeddedLLM

    llm = OpenAICompatLLM.checked(MODEL, llama_server)
    served = llm.judge(ASK, ["yes", "no"])
    local = EmbeddedLLM(MODEL).judge(ASK, ["yes", "no"])  # llama.cpp's own distribution, read in this process
    assert served["yes"] > served["no"] > -math.inf and math.exp(served["yes"]) + math.exp(served["no"]) <= 1.0 + 1e-6
    assert served == pytest.approx(local, abs=0.05)

    replies = llm.sample([HumanMessage("Name a colour.")], 3, temperature=1.0, max_tokens=6)
    assert len(replies) == 3 and all(str(r.content).strip() for r in replies)
    assert all(0 < r.usage_metadata["output_tokens"] <= 6 for r in replies)

    with pytest.raises(ModelUnavailable, match=f"has no model 'gpt-4o'; it offers: {MODEL}"):
        OpenAICompatLLM.checked("gpt-4o", llama_server)


@pytest.mark.slow
def test_a_question_answered_through_the_server(llama_server, demo_index):
    result = subprocess.run(
        [sys.executable, "-m", "sunar.cli", "ask", "Where was the director of film Ronnie Rocket born?", "--json",
         "--llm", f"openai:{MODEL}", "--set", f"openai_base_url={llama_server}", "--index", str(demo_index),
         "--nli", "llm", "--scorer", "dense", "--profile", "cpu",
         "--set", "budget=8", "--set", "samples=2", "--set", "max_hops=2", "--set", "calibration=off", "--set", "hop_samples=0"],
        capture_output=True, text=True, timeout=1800,
    )
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["answer"] and 0.0 <= record["confidence"] <= 1.0
    assert 1 <= len(record["reasoning_path"]) <= 2
    assert "Ronnie Rocket" in {e["title"] for e in record["evidence"]}
    assert record["usage"]["llm_calls"] >= 5 and record["usage"]["prompt_tokens"] > 0
    # Every reply came back as its JSON object: the server took the schemas (as json_object).
    assert record["usage"]["parse_fallbacks"] == 0
