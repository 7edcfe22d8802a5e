"""Model providers without real model weights: selection, errors, scripted models, NLI logic."""

import hashlib
import http.server
import json
import math
import threading

import pytest
from langchain_core.messages import HumanMessage

from conftest import free_port
from scripted import ScriptedLLM
from sunar.errors import ModelUnavailable
from sunar.models import gguf
from sunar.models import ollama as llm_mod
from sunar.models.llm import pick_label
from sunar.models.nli import LLMJudgeNLI, semantic_sets
from sunar.models.providers import make_llm, resolve_llm
from sunar.text import normalize_answer
from sunar.usage import usage


def test_assemble_verifies_sha256_and_is_atomic(tmp_path):
    parts = []
    for i, chunk in enumerate([b"GGUF-head", b"-middle-", b"tail"]):
        p = tmp_path / f"part{i}.bin"
        p.write_bytes(chunk)
        parts.append(p)
    good = hashlib.sha256(b"GGUF-head-middle-tail").hexdigest()
    target = tmp_path / "cache" / "m.gguf"
    assert gguf.assemble(parts, target, good, "m").read_bytes() == b"GGUF-head-middle-tail"
    bad_target = tmp_path / "cache" / "bad.gguf"
    with pytest.raises(ModelUnavailable, match="wrong sha256"):
        gguf.assemble(parts, bad_target, "0" * 64, "bad")
    assert not bad_target.exists() and list(bad_target.parent.glob("bad.part-*")) == []


def test_missing_chunk_packages_say_how_to_install():
    spec = gguf.ChunkedModel("ghost", "none", "no-such-package-part", 2, "1.0", 10, "0" * 64)
    assert gguf.chunk_paths(spec) is None and gguf.status(spec) == "missing"
    with pytest.raises(ModelUnavailable, match="pip install no-such-package-part"):
        gguf.ensure_gguf(spec)
    with pytest.raises(ModelUnavailable, match="unknown embedded model"):
        gguf.model_spec("gpt-9")


def test_shipped_chunk_packages_are_located_without_importing_them():
    for spec in gguf.EMBEDDED_MODELS.values():
        paths = gguf.chunk_paths(spec)
        assert paths is not None and len(paths) == spec.parts
        assert sum(p.stat().st_size for p in paths) == spec.size


def test_pick_label():
    assert pick_label(" Same.", ["same", "different"]) == {"same": 0.0, "different": -math.inf}
    assert pick_label("**different**", ["same", "different"])["different"] == 0.0
    assert set(pick_label("maybe", ["same", "different"]).values()) == {-math.inf}


class _FakeOllama(http.server.BaseHTTPRequestHandler):
    """Answers /api/tags like an Ollama server that has pulled no llama3.1."""

    def do_GET(self):  # noqa: N802
        body = json.dumps({"models": [{"model": "mistral:latest", "name": "mistral:latest"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):  # noqa: N802
        """/api/chat: one reply, "Paris"; the request is kept for the test to read."""
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _FakeOllama.requests.append(request)
        done = {"model": request["model"], "created_at": "2026-01-01T00:00:00Z", "message": {"role": "assistant", "content": "Paris"},
                "done": True, "done_reason": "stop", "prompt_eval_count": 5, "eval_count": 1}
        body = (json.dumps(done) + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    requests: list[dict] = []

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_ollama(monkeypatch):
    port = free_port()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), _FakeOllama)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(llm_mod, "OLLAMA_URL", f"http://127.0.0.1:{port}")
    yield
    server.shutdown()


def test_ollama_down_is_one_clear_message(monkeypatch):
    monkeypatch.setattr(llm_mod, "OLLAMA_URL", f"http://127.0.0.1:{free_port()}")
    assert llm_mod.ollama_models(llm_mod.OLLAMA_URL) is None
    with pytest.raises(ModelUnavailable, match="ollama serve"):
        make_llm("ollama:llama3.1")
    spec, reason = resolve_llm("auto")
    assert spec == "embedded:qwen2.5-1.5b" and "no Ollama server" in reason


def test_ollama_chat_call_to_a_dead_server_is_translated(monkeypatch):
    dead = f"http://127.0.0.1:{free_port()}"
    model = llm_mod.OllamaLLM("llama3.1", url=dead)
    with pytest.raises(ModelUnavailable, match="ollama serve"):
        model.generate([HumanMessage("hi")])


def test_a_request_the_ollama_server_refuses_is_said_as_such():
    from ollama import ResponseError

    said = str(llm_mod.ollama_error(ResponseError("response_format: json_schema is not supported", 400), "llama3.1", "http://127.0.0.1:9"))
    assert said.startswith("Ollama at http://127.0.0.1:9 refused the request (response_format: json_schema is not supported")
    assert "structured_output=false" in said and "not reachable" not in said
    assert "ollama pull llama3.1" in str(llm_mod.ollama_error(ResponseError("model 'llama3.1' not found", 404), "llama3.1"))


def test_ollama_without_the_model_says_which_pull(fake_ollama):
    assert llm_mod.ollama_models(llm_mod.OLLAMA_URL) == ["mistral:latest"]
    with pytest.raises(ModelUnavailable, match="ollama pull llama3.1"):
        make_llm("ollama:llama3.1")
    assert resolve_llm("auto")[0].startswith("embedded:")
    assert make_llm("ollama:mistral").name == "ollama:mistral"


def test_ollama_is_asked_for_a_context_that_holds_the_prompts(fake_ollama):
    """Ollama's default context silently cuts long prompts: every request names num_ctx."""
    _FakeOllama.requests.clear()
    reply = llm_mod.OllamaLLM("mistral", url=llm_mod.OLLAMA_URL).generate([HumanMessage("Capital of France?")])
    assert reply.content == "Paris"
    assert _FakeOllama.requests[-1]["options"]["num_ctx"] == llm_mod.NUM_CTX >= 8192


def test_unknown_llm_spec():
    with pytest.raises(ModelUnavailable, match="unknown llm"):
        make_llm("gpt:4")


def test_scripted_llm_generate_sample_and_usage():
    model = ScriptedLLM(lambda prompt, i: f"answer {i} to [{prompt}] STOP extra")
    reply = model.generate([HumanMessage("q")], stop=["STOP"])
    assert reply.content == "answer 0 to [q] "
    assert usage(reply) == (1, 4)
    samples = model.sample([HumanMessage("q")], 3, temperature=0.7)
    assert [s.content for s in samples] == [f"answer {i} to [q] STOP extra" for i in range(3)]
    assert len(model.calls) == 4


def test_no_configuration_string_names_a_test_double():
    """LLM specs name real models only: the scripted model and importable functions are not reachable."""
    for spec in ("scripted:echo", "scripted:oracle:script", "scripted:os:system"):
        with pytest.raises(ModelUnavailable, match="unknown llm"):
            make_llm(spec)


def test_normalize_answer():
    assert normalize_answer("The  Eiffel Tower!") == "eiffel tower"
    assert normalize_answer("An apple, a day") == "apple day"


def test_llm_judge_nli_shortcut_cache_and_clusters():
    def judge(prompt, i):
        last = prompt.rsplit("Question:", 1)[1]
        a = last.split("Answer 1:")[1].split("\n")[0].strip()
        b = last.split("Answer 2:")[1].split("\n")[0].strip()
        same = {frozenset({"Missoula", "Missoula, Montana"})}
        return "yes" if frozenset({a, b}) in same else "no"

    nli = LLMJudgeNLI(ScriptedLLM(judge))
    answers = ["Missoula", "the missoula", "Missoula, Montana", "Helena", "Missoula"]
    sets = semantic_sets("Where was Lynch born?", answers, nli)
    assert sets == [[0, 1, 2, 4], [3]]
    # "the missoula" and the repeated "Missoula" never reach the model; 2 judged pairs
    assert nli.model_calls == 2
    assert nli.relation("Where was Lynch born?", "Helena", "Missoula") == "contradiction"
    assert nli.model_calls == 2  # cached in either order


def test_numeric_guard_and_calibrated_threshold():
    from sunar.models.nli import numeric_conflict

    assert numeric_conflict("1998", "1999") and numeric_conflict("29 November 1999", "30 November 1999")
    assert not numeric_conflict("1889", "March 1889") and not numeric_conflict("Missoula", "1999")
    assert not numeric_conflict("1,200", "1200")

    class LogprobLLM(ScriptedLLM):
        def judge(self, messages, labels):
            return {"yes": -0.3, "no": -1.5}  # margin 1.2

    assert LLMJudgeNLI(LogprobLLM(lambda p, i: ""), threshold=1.0).relation("q", "a", "b") == "equivalent"
    assert LLMJudgeNLI(LogprobLLM(lambda p, i: ""), threshold=1.5).relation("q", "a", "b") == "contradiction"
    llm = LogprobLLM(lambda p, i: "")
    llm.name = "embedded:qwen2.5-1.5b"
    assert LLMJudgeNLI(llm).threshold == 1.0
    assert LLMJudgeNLI(ScriptedLLM(lambda p, i: "")).relation("q", "1998", "1999") == "contradiction"


def test_llm_judge_without_a_label_is_neutral():
    nli = LLMJudgeNLI(ScriptedLLM(lambda p, i: "I cannot tell"))
    assert nli.relation("q", "x", "y") == "neutral"


@pytest.mark.parametrize("spec", ["hf:{folder}", "cross-encoder:{folder}"])
def test_a_folder_that_is_no_model_is_one_clear_line(tmp_path, spec):
    from sunar.models.nli import make_nli
    from sunar.models.scorer import make_scorer

    folder = tmp_path / "not-a-model"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "no-such-architecture"}')
    make = make_nli if spec.startswith("hf:") else make_scorer
    with pytest.raises(ModelUnavailable) as caught:
        make(spec.format(folder=folder), None)
    assert "\n" not in str(caught.value) and str(folder) in str(caught.value)


def test_ollama_is_asked_for_the_replys_json_schema_as_its_format(fake_ollama):
    from sunar.prompts.answer import SCHEMA

    _FakeOllama.requests.clear()
    model = llm_mod.OllamaLLM("mistral", url=llm_mod.OLLAMA_URL)
    model.generate([HumanMessage("Capital of France?")], schema=SCHEMA)
    model.sample([HumanMessage("Capital of France?")], 2, temperature=0.7, schema=SCHEMA)
    model.generate([HumanMessage("Capital of France?")])
    assert [r.get("format") for r in _FakeOllama.requests] == [SCHEMA, SCHEMA, SCHEMA, None]


def test_a_text_format_has_no_json_schema_for_ollama(fake_ollama):
    from sunar.prompts.self_ask import SCHEMA

    _FakeOllama.requests.clear()
    llm_mod.OllamaLLM("mistral", url=llm_mod.OLLAMA_URL).generate([HumanMessage("Capital of France?")], schema=SCHEMA)
    assert _FakeOllama.requests[-1].get("format") is None
