"""`sunar ask` as `./run ask` runs it, in a network namespace with no interface up: nothing can
leave the machine (not even to a local Ollama), so the question must be answered from what is on
disk: the embedded model, the bundled corpus indexed on first use, the MiniLM embedder."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SUNAR = Path(sys.executable).with_name("sunar")


def _no_network() -> list[str] | None:
    """The command prefix that cuts the network (``unshare -rn``, or ``unshare -n`` as root), or
    None where the kernel or the sandbox forbids new namespaces."""
    if not shutil.which("unshare"):
        return None
    for prefix in (["unshare", "-rn"], ["unshare", "-n"]):
        try:
            if subprocess.run([*prefix, "true"], capture_output=True, timeout=10).returncode == 0:
                return prefix
        except (OSError, subprocess.TimeoutExpired):
            pass
    return None


@pytest.mark.slow
def test_ask_answers_with_the_network_cut():
    prefix = _no_network()
    if prefix is None:
        pytest.skip("this kernel or sandbox does not allow a new network namespace (unshare -rn / -n)")
    probe = subprocess.run([*prefix, sys.executable, "-c", "import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)"],
                           capture_output=True, text=True, timeout=30)
    assert probe.returncode != 0, "the namespace still reaches the network"
    # the product's own offline settings, not the test run's
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "OLLAMA_HOST")}
    result = subprocess.run(
        [*prefix, str(SUNAR), "ask", "Where was the director of film Ronnie Rocket born?", "--json"],
        capture_output=True, text=True, timeout=1800, env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads(result.stdout)
    assert record["answer"] and record["reasoning_path"]
    assert "Ronnie Rocket" in {e["title"] for e in record["evidence"]}
