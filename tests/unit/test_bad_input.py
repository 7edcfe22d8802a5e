"""Bad input gets one clear line, early, and loses nothing: questions, questions files, corpus files,
model choices and settings, the Ollama timeout, the embedded model's context, and the LLM call cache."""

import json
import logging
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import pytest
from langchain_core.messages import HumanMessage

from conftest import free_port
from scripted import ScriptedLLM
from sunar.errors import ModelUnavailable, SunarError
from sunar.evals.data import read_questions
from sunar.models import ollama
from sunar.models.llama_cpp import EmbeddedChatModel
from sunar.models.llm_cache import CallCache
from sunar.models.recorded import RecordedLLM
from sunar.models.specs import check_specs
from sunar.question import MAX_QUESTION_BYTES, check_question
from sunar.stores.corpus import CorpusReport, read_corpus

GOOD = {"id": "q1", "question": "Who directed Ronnie Rocket?", "answers": ["David Lynch"]}


def line(**changes):
    """A questions-file line: GOOD with ``changes`` (a value None drops the key)."""
    return json.dumps({k: v for k, v in {**GOOD, **changes}.items() if v is not None})


def steps(*questions):
    return [{"question": q, "answer": f"answer {i}"} for i, q in enumerate(questions, start=1)]


def questions_file(tmp_path, *lines):
    path = tmp_path / "q.jsonl"
    path.write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines) + b"\n")
    return path


def attempt(kind, payload, tmp_path, monkeypatch):
    if kind == "question":
        return check_question(payload)
    if kind == "file":
        return read_questions(questions_file(tmp_path, *payload))
    if kind == "specs":
        return check_specs(payload)
    if kind == "env":
        monkeypatch.setenv("SUNAR_OLLAMA_TIMEOUT", payload)
        return ollama.ollama_timeout()
    raise AssertionError(kind)


BAD = [
    # a question, as the CLI and the questions file give it
    ("question", "Who directed\x00 Ronnie Rocket?", "control character U+0000 at character 13"),
    ("question", "Who \x1b[31mdirected it?", "control character U+001B"),
    ("question", "Who directed\x7f it?", "control character U+007F"),
    ("question", "Who directed \udcff?", "not valid UTF-8 text (character 14)"),  # argv bytes 0xff
    ("question", "", "the question is empty"),
    ("question", " \t\n ", "the question is empty"),
    ("question", "?!? ...", "no letters or digits"),
    ("question", "Who " * 300, f"1200 bytes long; keep it under {MAX_QUESTION_BYTES}"),
    ("question", "谁" * 400, f"1200 bytes long; keep it under {MAX_QUESTION_BYTES}"),  # 400 characters, 3 bytes each
    ("question", 42, "must be text, not int"),
    # a questions file: the first bad line stops the run, with its number
    ("file", [line(), b'{"id": "q2", "question": "Who is caf\xe9?", "answers": ["x"]}'], "line 2: not valid UTF-8 (byte 0xe9 at column 37)"),
    ("file", [line(), line(id="q2", question="Who\u0000 is it?")], "line 2: the question holds the control character U+0000"),
    ("file", [line(question="   ")], "line 1: the question is empty"),
    ("file", [line(question="x" * 2000)], "line 1: the question is 2000 bytes long"),
    ("file", [line(), line()], "line 2: question id 'q1' is already used on line 1; ids must be unique"),
    ("file", [line(answers=[])], "line 1: 'answers' must be a non-empty list"),
    ("file", [line(answers=[1990])], "line 1: 'answers' must be a list of strings"),
    ("file", [line(answers=None)], "line 1: no 'answers' field"),
    ("file", [line(id="")], "line 1: 'id' must be a non-empty string"),
    ("file", [line(), "{not json"], "line 2: not JSON"),
    ("file", [json.dumps(["q1", "Who?"])], "line 1: not a JSON object"),
    ("file", [line(decomposition=steps("Who directed #0?"))], "step 1 refers to #0, but no answer comes before it"),
    ("file", [line(decomposition=steps("Who directed it?", "Where was #2 born?"))], "step 2 refers to #2, but only #1 to #1 come before it"),
    ("file", [line(decomposition=steps("Who?", "Where was #1 born?", "When was #0?"))], "step 3 refers to #0, but only #1 to #2"),
    ("file", [line(supporting_ids="d1")], "'supporting_ids' must be a list of strings"),
    ("file", [line(pool_ids=["d1", 2])], "'pool_ids' must be a list of strings"),
    # model choices, by their form alone
    ({"nli": "bogus"}, "unknown nli 'bogus'; use auto, llm or hf:"),
    ({"nli": "hf:"}, "unknown nli 'hf:'"),
    ({"scorer": "bm42"}, "unknown scorer 'bm42'"),
    ({"llm": "gpt4"}, "unknown llm 'gpt4'; use auto, ollama:<model> or embedded:<name>"),
    ({"llm": "embedded:qwen9"}, "unknown embedded model 'qwen9' in llm; choose one of: qwen2.5-1.5b"),
    ({"llm": "embedded:qwen2.5-1.5b", "likelihood_llm": "openai:gpt"}, "unknown likelihood_llm 'openai:gpt'"),
    ({"llm": "embedded:qwen2.5-1.5b", "calibration": "no-such-calibration.json"}, "calibration file not found"),
    # the Ollama timeout's setting
    ("env", "soon", "SUNAR_OLLAMA_TIMEOUT must be a number of seconds above 0 (got 'soon')"),
    ("env", "0", "SUNAR_OLLAMA_TIMEOUT must be a number of seconds above 0"),
    ("env", "inf", "SUNAR_OLLAMA_TIMEOUT must be a number of seconds above 0"),
]
BAD = [("specs", *row) if isinstance(row[0], dict) else row for row in BAD]


@pytest.mark.parametrize(("kind", "payload", "message"), BAD, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(BAD)])
def test_bad_input_is_one_clear_line(kind, payload, message, tmp_path, monkeypatch):
    with pytest.raises(SunarError) as caught:
        attempt(kind, payload, tmp_path, monkeypatch)
    text = str(caught.value)
    assert message in text
    assert "\n" not in text and len(text) < 400


def test_good_questions_pass_and_a_single_answer_string_is_one_answer(tmp_path):
    for question in ("Where was the director of film Ronnie Rocket born?", "Who\twrote\nit?", "Wer schrieb „Faust“?", "x" * MAX_QUESTION_BYTES):
        assert check_question(question) == question
    path = questions_file(
        tmp_path,
        "\ufeff" + line(answers="Paris"),  # a byte-order mark is fine too
        "",
        line(id=7, answers=["Missoula"], decomposition=steps("Who directed Ronnie Rocket?", "Where was #1 born?")),
    )
    first, second = read_questions(path)
    assert first.answers == ["Paris"]
    assert second.id == "7" and second.sub_questions[1][0] == "Where was answer 1 born?"


def test_a_corpus_line_that_is_not_utf8_is_reported_and_skipped_never_replaced(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(
        b'{"id": "a", "title": "A", "text": "alpha"}\n'
        b'{"id": "b", "title": "B", "text": "caf\xe9 latin-1"}\n'
        b'{"id": "c", "title": "C", "text": "gamma"}\n'
    )
    report = CorpusReport()
    assert [d.id for d in read_corpus(path, report)] == ["a", "c"]
    assert report.malformed == [(2, "not valid UTF-8 (byte 0xe9 at column 39)")]
    assert "lines 2: not valid UTF-8" in report.summary()


def test_good_model_choices_pass():
    for values in (
        {"llm": "auto", "scorer": "auto", "nli": "auto", "calibration": "auto"},
        {"llm": "ollama:llama3.1", "scorer": "cross-encoder:nreimers/mmarco-mMiniLMv2-L12-H384-v1", "nli": "hf:roberta-large-mnli"},
        {"llm": "embedded:qwen2.5-0.5b", "scorer": "hybrid", "nli": "llm", "likelihood_llm": "embedded:qwen2.5-1.5b", "calibration": "off"},
        {"scorer": "dense"},
        {"scorer": "splade"},
    ):
        check_specs(values)


@pytest.fixture
def stalled_server():
    """A server on a free loopback port that accepts connections and never answers."""
    port = free_port()
    listener = socket.create_server(("127.0.0.1", port))
    held, stop = [], threading.Event()

    def accept():
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    listener.close()


def test_a_stalled_ollama_server_ends_the_call_with_one_clear_line(stalled_server, monkeypatch):
    monkeypatch.setenv("SUNAR_OLLAMA_TIMEOUT", "1.5")
    model = ollama.OllamaLLM("llama3.1", url=stalled_server)
    started = time.monotonic()
    with pytest.raises(ModelUnavailable) as caught:
        model.sample([HumanMessage("Who directed Ronnie Rocket?")], 2, temperature=0.3)
    assert time.monotonic() - started < 15
    assert str(caught.value) == (
        f"Ollama at {stalled_server} did not answer within 1.5 s; check the server (ollama ps, or restart it), "
        "or allow longer with SUNAR_OLLAMA_TIMEOUT=SECONDS"
    )
    monkeypatch.delenv("SUNAR_OLLAMA_TIMEOUT")
    assert ollama.ollama_timeout() == ollama.DEFAULT_TIMEOUT


def test_a_prompt_longer_than_the_embedded_context_is_a_clear_error_not_llama_cpps():
    """llama.cpp itself raises a ValueError mid-run; the check says what to do instead."""

    def too_long(**kwargs):
        raise ValueError("Requested tokens (200) exceed context window of 64")

    chat = EmbeddedChatModel(model_path="unused.gguf", n_ctx=64, keep_prefixes=False)
    chat._llama = SimpleNamespace(
        n_ctx=lambda: 64,
        tokenize=lambda data, add_bos, special: list(data.split()),
        create_chat_completion=too_long,
    )
    chat._formatter = lambda messages: SimpleNamespace(prompt=" ".join(m["content"] for m in messages))
    with pytest.raises(SunarError, match="the prompt needs 200 tokens, more than the model's context of 64; ask a shorter question"):
        chat.invoke([HumanMessage("word " * 200)])


def test_a_failing_cache_write_keeps_the_answer_and_warns_once(tmp_path, caplog):
    path = tmp_path / "c.sqlite"
    cache = CallCache(path)
    cache._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)  # a read-only database
    inner = ScriptedLLM(lambda prompt, i: f"David Lynch {i}")
    llm = RecordedLLM(inner, cache)
    with caplog.at_level(logging.WARNING, logger="sunar"):
        reply = llm.generate([HumanMessage("Who directed Ronnie Rocket?")])
        samples = llm.sample([HumanMessage("Who directed Ronnie Rocket?")], 2, temperature=0.3)
    assert reply.content == "David Lynch 0" and [s.content for s in samples] == ["David Lynch 0", "David Lynch 1"]
    warnings = [r.getMessage() for r in caplog.records if "cannot write to the LLM call cache" in r.getMessage()]
    assert len(warnings) == 1 and "readonly" in warnings[0]
    assert cache.count() == 0


def test_a_full_disk_is_told_apart_from_other_errors():
    import errno
    import sqlite3

    from sunar.errors import DiskFull, disk_full

    full = disk_full(OSError(errno.ENOSPC, "No space left on device", "/data/run/predictions.jsonl"))
    assert isinstance(full, DiskFull) and str(full).startswith("the disk is full writing /data/run/predictions.jsonl: free some space")
    assert str(disk_full(OSError(errno.EDQUOT, "Disk quota exceeded"))).startswith("the disk is full: ")
    assert "SQLite" in str(disk_full(sqlite3.OperationalError("database or disk is full")))
    assert disk_full(OSError(errno.EACCES, "Permission denied", "/data")) is None
    assert disk_full(sqlite3.OperationalError("database is locked")) is None
    assert disk_full(ValueError("disk is full")) is None


def test_the_cli_and_the_eval_harness_load_no_library_that_takes_seconds_to_import():
    """A mistyped command answers at once: importing the CLI and the eval harness and building the
    parser loads none of scipy, transformers, torch, chromadb or sentence-transformers (each takes
    seconds to import), so input is checked before any of them loads."""
    code = ("import sys, sunar.cli, sunar.evals.run; sunar.cli.build_parser(); "
            "print(','.join(m for m in ('scipy', 'transformers', 'torch', 'chromadb', 'sentence_transformers') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout.strip()
    assert loaded == ""
