"""Bad input on the command line: one `error:` line on stderr, no traceback, and nothing done first
(for `sunar eval`, no index built and no output directory made). The CLI runs with the scripted
oracle as its LLM (tests/oracle.py), so a check that let bad input through would not load a model."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ORACLE = Path(__file__).resolve().parents[1] / "oracle.py"
DEMO = Path(__file__).resolve().parents[2] / "sunar" / "data"
GOOD = {"id": "q1", "question": "Where was the director of film Ronnie Rocket born?", "answers": ["Missoula"]}


def oracle_cli(*args, env=None):
    return subprocess.run(
        [sys.executable, str(ORACLE), *args], capture_output=True, timeout=300,
        env={**os.environ, "OLLAMA_HOST": "http://127.0.0.1:9", **(env or {})},
    )


def one_error_line(result) -> str:
    stderr = result.stderr.decode("utf-8", errors="replace")
    assert result.returncode == 1, stderr
    assert "Traceback" not in stderr
    errors = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, stderr
    return errors[0]


ASK = [
    ([b"Who directed \xff Ronnie Rocket?"], "the question is not valid UTF-8 text (character 14)"),
    (["Who \x1b[31mdirected Ronnie Rocket?"], "control character U+001B at character 5"),
    (["Who directed it? " * 90], "1530 bytes long; keep it under 1024"),
    (["  \t "], "the question is empty"),
    (["Who?", "--nli", "bogus"], "unknown nli 'bogus'"),
    (["Who?", "--scorer", "bm42"], "unknown scorer 'bm42'"),
    (["Who?", "--llm", "gpt4"], "unknown llm 'gpt4'"),
    (["Who?", "--llm", "embedded:qwen9"], "unknown embedded model 'qwen9'"),
    (["Who?", "--set", "calibration=no-such-calibration.json"], "calibration file not found"),
]


@pytest.mark.parametrize(("args", "message"), ASK, ids=[f"ask-{i}" for i in range(len(ASK))])
def test_ask_refuses_bad_input_in_one_line(args, message):
    assert message in one_error_line(oracle_cli("ask", *args))


def lines(*records):
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n"


EVAL = [
    ({}, ["--nli", "bogus"], "unknown nli 'bogus'"),
    ({}, ["--set", "samples=0"], "configuration: samples must be from 1 to 100 (got '0')"),
    ({}, ["--limit", "-1"], "--limit must be 0 (all questions) or more"),
    ({}, ["--skip", "-1"], "--skip must be 0 or more"),
    ({}, ["--skip", "9"], "q.jsonl after the first 9"),
    ({}, ["--workers", "0"], "--workers must be 1 or more"),
    ({}, ["--variants", "sunar,nope"], "unknown variant(s) nope"),
    ({}, ["--variants", "sunar,sunar+sampels=3"], "variant 'sunar+sampels=3': configuration: unknown field 'sampels'"),
    ({}, ["--variants", "sunar+profile=paper"], "variant 'sunar+profile=paper': profile is the run's, not one variant's"),
    ({}, ["--corpus", "no-such-corpus.jsonl"], "corpus file not found: no-such-corpus.jsonl"),
    ({"q.jsonl": lines(GOOD, {**GOOD, "id": "q2", "answers": 5})}, [], "q.jsonl line 2: 'answers' must be a list of strings"),
    ({"q.jsonl": lines(GOOD, GOOD)}, [], "q.jsonl line 2: question id 'q1' is already used on line 1"),
    ({"q.jsonl": lines({**GOOD, "decomposition": [{"question": "Who is #0?", "answer": "x"}]})}, [], "line 1: decomposition step 1 refers to #0"),
    ({"q.jsonl": lines(GOOD, {**GOOD, "id": "q2", "question": "Who\u0007 is it?"})}, [], "line 2: the question holds the control character U+0007"),
    ({"q.jsonl": lines(GOOD, "", "{half a line")}, [], "q.jsonl line 3: not JSON"),
]


@pytest.mark.parametrize(("files", "args", "message"), EVAL, ids=[f"eval-{i}" for i in range(len(EVAL))])
def test_eval_refuses_bad_input_before_indexing(files, args, message, tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text(lines(GOOD))
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    index, out = tmp_path / "index", tmp_path / "out"
    base = ["eval", "--questions", str(questions), "--corpus", str(DEMO / "demo_corpus.jsonl"), "--index", str(index), "--out", str(out), "--quiet"]
    # the last of a repeated option wins, so args may replace the base's
    assert message in one_error_line(oracle_cli(*base, *args))
    assert not index.exists() and not out.exists()


def test_eval_with_an_invalid_utf8_questions_file_names_the_line(tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_bytes(lines(GOOD).encode() + b'{"id": "q2", "question": "Qui est n\xe9?", "answers": ["x"]}\n')
    result = oracle_cli("eval", "--questions", str(questions), "--corpus", str(DEMO / "demo_corpus.jsonl"),
                        "--index", str(tmp_path / "index"), "--out", str(tmp_path / "out"))
    assert "q.jsonl line 2: not valid UTF-8 (byte 0xe9" in one_error_line(result)
    assert not (tmp_path / "index").exists()


@pytest.mark.parametrize("step", [["setup"], ["setup-webui"]])
def test_run_setup_on_a_full_disk_says_so_and_installs_nothing(tmp_path, step):
    """``./run`` on a disk with 1 GB free (a ``df`` on PATH says so): one error line before pip
    starts, rather than pip's OSError half way through an install."""
    root = Path(__file__).resolve().parents[2]
    (tmp_path / "run").write_bytes((root / "run").read_bytes())
    (tmp_path / "run").chmod(0o755)
    (tmp_path / "pyproject.toml").write_text("")
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "df").write_text("#!/bin/sh\necho 'Filesystem 1024-blocks Used Available Capacity Mounted on'\necho '/dev/x 9999999 8999999 1048576 90% /'\n")
    (shims / "df").chmod(0o755)
    env = {**os.environ, "PATH": f"{shims}:{os.environ['PATH']}", "SUNAR_VENV": str(tmp_path / "venv"), "SUNAR_WEBUI_VENV": str(tmp_path / "webui")}
    result = subprocess.run([str(tmp_path / "run"), *step], capture_output=True, timeout=60, env=env)
    line = one_error_line(result)
    assert "needs about" in line and "which has 1 GB" in line, line
    assert not (tmp_path / "venv").exists() and not (tmp_path / "webui").exists()
