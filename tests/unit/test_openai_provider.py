"""The ``openai:<model>`` provider against a tiny local OpenAI-compatible HTTP server: what it
sends, label log-probabilities and the greedy fall-back, the run's server URL, and one clear
line when the server is down, stalls, lacks the model or refuses the request."""

import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from langchain_core.messages import HumanMessage

from conftest import free_port
from sunar.errors import ConfigurationError, ModelUnavailable, SunarError
from sunar.models.openai_compat import OpenAICompatLLM, label_logprobs
from sunar.models.providers import make_llm
from sunar.models.specs import check_specs

ASK = [HumanMessage("Is Paris in France? Answer yes or no.")]


class Server(BaseHTTPRequestHandler):
    """Lists ``models``; answers chat completions with ``reply`` (and ``logprobs`` when set),
    after ``delay`` seconds, or with ``status`` and an error; records each request's body."""

    models = ["tiny-model"]
    reply = "Yes."
    logprobs: list | None = None
    delay = 0.0
    status = 200
    #: response_format types answered with 422, as llama-cpp-python's server does for "json_schema"
    refused_formats: set[str] = set()
    bodies: list[dict] = []
    #: requests being answered now, and the most at once
    in_flight = most = 0
    counting = threading.Lock()

    def _send(self, status, data):
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        try:
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (the stalled server's test)
            pass

    def do_GET(self):
        self._send(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in Server.models]})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Server.bodies.append(body)
        with Server.counting:
            Server.in_flight += 1
            Server.most = max(Server.most, Server.in_flight)
        time.sleep(Server.delay)
        with Server.counting:
            Server.in_flight -= 1
        if (body.get("response_format") or {}).get("type") in Server.refused_formats:
            self._send(422, {"detail": [{"loc": ["body", "response_format", "type"], "msg": "Input should be 'text' or 'json_object'"}]})
            return
        if Server.status != 200:
            self._send(Server.status, {"error": {"message": f"model '{body['model']}' not found\nsecond line", "type": "invalid_request_error"}})
            return
        choice = {"index": 0, "message": {"role": "assistant", "content": Server.reply}, "finish_reason": "stop"}
        if Server.logprobs is not None:
            choice["logprobs"] = {"content": [{"token": Server.logprobs[0][0], "logprob": Server.logprobs[0][1], "top_logprobs": [{"token": t, "logprob": lp} for t, lp in Server.logprobs]}]}
        self._send(200, {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"], "choices": [choice],
                         "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}})

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    Server.models, Server.reply, Server.logprobs, Server.delay, Server.status, Server.bodies = ["tiny-model"], "Yes.", None, 0.0, 200, []
    Server.refused_formats, Server.in_flight, Server.most = set(), 0, 0
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Server)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_generate_sends_max_tokens_stop_and_temperature_and_reads_usage(server):
    reply = OpenAICompatLLM.checked("tiny-model", server).generate(ASK, temperature=0.3, max_tokens=5, stop=["\n"])
    assert reply.content == "Yes." and reply.usage_metadata["input_tokens"] == 7 and reply.usage_metadata["output_tokens"] == 2
    body = Server.bodies[-1]
    assert body["model"] == "tiny-model" and body["max_tokens"] == 5 and body["stop"] == ["\n"] and body["temperature"] == 0.3
    assert body["messages"] == [{"role": "user", "content": ASK[0].content}]


def test_sample_sends_m_requests_at_once(server):
    Server.delay = 0.5  # long enough for the four to overlap, however busy the machine
    replies = OpenAICompatLLM("tiny-model", server).sample(ASK, 4, temperature=0.7, max_tokens=8)
    assert [r.content for r in replies] == ["Yes."] * 4 and len(Server.bodies) == 4
    assert all(b["temperature"] == 0.7 and b["max_tokens"] == 8 for b in Server.bodies)
    assert Server.most == 4  # concurrent: all four in the server at once, not one after another


def test_judge_reads_the_labels_log_probabilities_from_the_first_tokens_candidates(server):
    Server.logprobs = [("Yes", -0.2), ("No", -1.8), (" yes", -3.0), ("Maybe", -4.0)]
    assert OpenAICompatLLM("tiny-model", server).judge(ASK, ["yes", "no"]) == {"yes": -0.2, "no": -1.8}
    assert Server.bodies[-1]["logprobs"] is True and Server.bodies[-1]["top_logprobs"] == 20


def test_judge_falls_back_to_the_greedy_label_when_the_server_returns_no_logprobs(server):
    Server.reply = "No, it is not."
    assert OpenAICompatLLM("tiny-model", server).judge(ASK, ["yes", "no"]) == {"yes": -math.inf, "no": 0.0}
    Server.logprobs = [("Perhaps", -0.1)]  # candidates that begin no label: the greedy label too
    assert OpenAICompatLLM("tiny-model", server).judge(ASK, ["yes", "no"]) == {"yes": -math.inf, "no": 0.0}


def test_label_logprobs_of_a_label_of_several_tokens_and_one_not_among_the_candidates():
    logprobs = {"content": [{"token": "ent", "logprob": -0.5, "top_logprobs": [{"token": "ent", "logprob": -0.5}, {"token": "Ent", "logprob": -0.9}]}]}
    assert label_logprobs(logprobs, ["entailment", "contradiction"]) == {"entailment": -0.5, "contradiction": -math.inf}
    assert label_logprobs(None, ["yes"]) is None and label_logprobs({"content": []}, ["yes"]) is None


def test_loglik_says_what_to_use_instead(server):
    with pytest.raises(ModelUnavailable, match="likelihood_llm to an embedded"):
        OpenAICompatLLM("tiny-model", server).loglik(ASK, "Yes")


def test_a_server_that_is_down_is_one_line_with_what_to_do():
    url = f"http://127.0.0.1:{free_port()}/v1"
    for attempt in (lambda: OpenAICompatLLM.checked("tiny-model", url), lambda: OpenAICompatLLM("tiny-model", url).generate(ASK)):
        with pytest.raises(ModelUnavailable) as caught:
            attempt()
        assert str(caught.value).startswith(f"no OpenAI-compatible server answers at {url}; start it") and "\n" not in str(caught.value)


def test_an_unknown_model_lists_what_the_server_offers(server):
    with pytest.raises(ModelUnavailable, match=r"has no model 'llama9'; it offers: tiny-model \(use --llm openai:"):
        OpenAICompatLLM.checked("llama9", server)
    Server.status = 404  # a server that says so only when asked (vLLM)
    with pytest.raises(ModelUnavailable, match="has no model 'llama9'; it offers: tiny-model"):
        OpenAICompatLLM("llama9", server).generate(ASK)


def test_a_refused_request_is_one_line_with_the_servers_reason(server):
    Server.status = 400
    with pytest.raises(SunarError) as caught:
        OpenAICompatLLM("tiny-model", server).generate(ASK)
    assert "refused the request (400: model 'tiny-model' not found second line)" in str(caught.value) and "\n" not in str(caught.value)


def test_a_stalled_server_ends_the_call_with_one_clear_line(server):
    Server.delay = 3.0
    with pytest.raises(ModelUnavailable, match=r"did not answer within 0.5 s"):
        OpenAICompatLLM("tiny-model", server, timeout=0.5).generate(ASK)


def test_make_llm_checks_the_server_and_the_specs_check_the_form(server):
    llm = make_llm("openai:tiny-model", server)
    assert llm.name == "openai:tiny-model" and llm.url == server
    with pytest.raises(ModelUnavailable, match="it offers: tiny-model"):
        make_llm("openai:other", server)
    check_specs({"llm": "openai:tiny-model"})
    with pytest.raises(ConfigurationError, match="names no model"):
        check_specs({"llm": "openai:"})
    with pytest.raises(ConfigurationError, match="returns none of a given text; use embedded"):
        check_specs({"llm": "openai:tiny-model", "likelihood_llm": "openai:tiny-model"})




SCHEMA = {"type": "object", "properties": {"answer": {"type": "string", "maxLength": 8}}, "required": ["answer"], "additionalProperties": False}


def test_a_schema_goes_as_openais_json_schema_response_format(server):
    Server.reply = '{"answer": "Yes"}'
    llm = OpenAICompatLLM("tiny-model", server)
    assert llm.generate(ASK, schema=SCHEMA).content == '{"answer": "Yes"}'
    assert Server.bodies[-1]["response_format"] == {"type": "json_schema", "json_schema": {"name": "reply", "strict": True, "schema": SCHEMA}}
    llm.generate(ASK)
    assert "response_format" not in Server.bodies[-1]


def test_a_server_that_refuses_json_schema_is_asked_with_json_object_from_then_on(server):
    """llama-cpp-python's server takes only {"type": "json_object", "schema": ...}."""
    Server.refused_formats = {"json_schema"}
    llm = OpenAICompatLLM("tiny-model", server)
    replies = llm.sample(ASK, 3, temperature=0.7, max_tokens=8, schema=SCHEMA)
    assert len(replies) == 3
    formats = [b["response_format"]["type"] for b in Server.bodies]
    assert formats == ["json_schema", "json_object", "json_object", "json_object"]  # refused once, then settled
    assert Server.bodies[-1]["response_format"]["schema"] == SCHEMA


def test_a_server_that_refuses_every_format_is_asked_without_one(server):
    Server.refused_formats = {"json_schema", "json_object"}
    llm = OpenAICompatLLM("tiny-model", server)
    assert llm.generate(ASK, schema=SCHEMA).content == "Yes."
    assert llm.generate(ASK, schema=SCHEMA).content == "Yes."
    assert ["response_format" in b for b in Server.bodies] == [True, True, False, False]


def test_a_refusal_that_is_not_about_the_format_is_one_line_and_keeps_the_format(server):
    Server.status = 400
    llm = OpenAICompatLLM("tiny-model", server)
    with pytest.raises(SunarError, match=r"refused the request \(400: model 'tiny-model' not found second line\)"):
        llm.generate(ASK, schema=SCHEMA)
    Server.status = 200
    llm.generate(ASK, schema=SCHEMA)
    assert [b["response_format"]["type"] for b in Server.bodies] == ["json_schema", "json_schema"]


def test_a_text_format_is_asked_without_a_response_format(server):
    from sunar.prompts.self_ask import SCHEMA as LINES

    llm = OpenAICompatLLM("tiny-model", server)
    llm.generate(ASK, schema=LINES)
    llm.sample(ASK, 2, temperature=0.5, schema=LINES)
    assert not any("response_format" in b for b in Server.bodies) and len(Server.bodies) == 3
