"""What a remote client of the served graphs (sunar.server.served, what `langgraph dev` serves) may set, and
what stays the server's: operator fields only from the environment, every number bounded, no code
named by a configuration string, tracing off, a bounded resource pool that never makes one run
wait for another configuration's models."""

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict

from fakes import MemoryIndex, TableScorer, docs, resources, scripted_llm, self_ask_script
from scripted import ScriptedLLM
from sunar.configuration import Configuration
from sunar.errors import ConfigurationError
from sunar.graph import build_graph
from sunar.resources import ResourcePool
from sunar.server import served
from sunar.server.served import OPERATOR_ENV, ClientConfiguration

Q = "Where was the director of film Ronnie Rocket born?"
EMBEDDED = "embedded:qwen2.5-1.5b"


def operator(name: str) -> str:
    return f"configuration: {name} is the server operator's setting ({OPERATOR_ENV[name]}), a client cannot set it"


HOSTILE = [
    ({"llm_cache": "/var/tmp/x.sqlite"}, operator("llm_cache")),
    ({"index_dir": "/etc"}, operator("index_dir")),
    ({"chroma_url": "http://10.0.0.1:8000"}, operator("chroma_url")),
    ({"scorer": "cross-encoder:/some/folder"}, operator("scorer")),
    ({"nli": "hf:/x"}, operator("nli")),
    ({"llm": "ollama:foo"}, operator("llm")),
    ({"likelihood_llm": "embedded:qwen2.5-0.5b"}, operator("likelihood_llm")),
    ({"escalate_llm": "ollama:llama3.1"}, operator("escalate_llm")),
    ({"calibration": "/etc/passwd"}, operator("calibration")),
    ({"index_dir": 5}, operator("index_dir")),
    ({"budget": 8, "index_dir": "/etc", "llm": "ollama:foo"}, operator("llm")),
    ({"samples": 10**6}, "configuration: samples must be from 1 to 100 (got 1000000)"),
    ({"max_tokens": 0}, "configuration: max_tokens must be from 1 to 4096 (got 0)"),
    ({"budget": "ten"}, "configuration: budget must be a whole number (got 'ten')"),
    ({"budgte": 5}, "configuration: unknown field 'budgte' (fields: profile, first_stage,"),
    ({"temperature": 1e9}, "configuration: temperature must be from 0.0 to 2.0 (got 1000000000.0)"),
    ({"temperature": float("nan")}, "configuration: temperature must be from 0.0 to 2.0 (got nan)"),
    ({"relevance_threshold": 1e308}, "configuration: unknown field 'relevance_threshold' (fields: profile, first_stage,"),  # RA-ISF's
    ({"first_stage_depth": -1}, "configuration: first_stage_depth must be from 1 to 1000 (got -1)"),
    ({"batch_size": 10**9}, "configuration: batch_size must be from 1 to 1000 (got 1000000000)"),
    ({"neighbours": 10**4}, "configuration: neighbours must be from 0 to 1000 (got 10000)"),
    ({"max_hops": 10**6}, "configuration: max_hops must be from 1 to 20 (got 1000000)"),
    ({"ra_isf_depth": 100}, "configuration: unknown field 'ra_isf_depth' (fields: profile, first_stage,"),  # RA-ISF's
    ({"confidence_samples": -1}, "configuration: confidence_samples must be from 0 to 100 (got -1)"),
    ({"profile": "gpu"}, "configuration: profile must be one of auto, paper, cpu (got 'gpu')"),
    ({"rescoring": "both"}, "configuration: rescoring must be one of paper, official (got 'both')"),
    ({"first_stage": "splade"}, "configuration: first_stage must be one of bm25, dense, fused (got 'splade')"),
    ({"evidence": [1, 2]}, "configuration: evidence must be a whole number (got [1, 2])"),
    ({"chain_check_after": "2.5"}, "configuration: chain_check_after must be a whole number (got '2.5')"),
    ({"answer_likelihood": "maybe"}, "configuration: answer_likelihood must be true or false (got 'maybe')"),
]
#: Only through context: in configurable, ``resources`` is the Python caller's injection key.
CONTEXT_ONLY = [({"resources": {"llm": "ollama:foo"}}, "configuration: unknown field 'resources'")]


def make_resources():
    corpus = docs(*[(f"d{i}", f"T{i}", f"text {i}") for i in range(30)])
    ranking = [(f"d{i}", 1.0 - i / 100) for i in range(30)]
    llm = scripted_llm(self_ask_script(["Follow up: Who directed Ronnie Rocket?", "So the final answer is: David Lynch"]), lambda q, i: "David Lynch")
    return resources(llm, TableScorer(dict(ranking)), MemoryIndex(corpus, default_ranking=ranking))


@pytest.fixture
def operator_env(monkeypatch):
    """The server's operator settings, as `langgraph dev` would read them from its environment."""
    for variable in OPERATOR_ENV.values():
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("SUNAR_LLM", EMBEDDED)
    monkeypatch.setenv("SUNAR_INDEX_DIR", "/srv/sunar-index")
    monkeypatch.setenv("SUNAR_NLI", "llm")


def run_served(context, configurable=None):
    return served.sunar.invoke({"question": Q}, {"configurable": {"resources": make_resources(), **(configurable or {})}}, context=context)


@pytest.mark.parametrize(
    ("route", "values", "message"),
    [("context", v, m) for v, m in HOSTILE + CONTEXT_ONLY] + [("configurable", v, m) for v, m in HOSTILE],
)
def test_a_hostile_client_setting_is_one_clear_line(operator_env, route, values, message):
    """As the server runs it: context as the client sent it; configurable beside an empty context."""
    with pytest.raises(ConfigurationError) as error:
        run_served(values) if route == "context" else run_served({}, values)
    text = str(error.value)
    assert text.startswith(message), text
    assert "\n" not in text and "Traceback" not in text and "pydantic" not in text


def test_the_client_sets_the_numbers_and_the_operator_the_models_and_index(operator_env):
    """A served run reads the operator's fields from the environment; a null operator field (what a
    form may send for a field it shows) is no setting."""

    class State(TypedDict):
        seen: dict

    def look(state, config):
        return {"seen": Configuration.from_runnable_config(config).values()}

    graph = StateGraph(State, context_schema=ClientConfiguration)
    graph.add_node("look", look)
    graph.add_edge(START, "look")
    seen = graph.compile().invoke({"seen": {}}, {"configurable": {"budget": 9, "thread_id": "t", "user-agent": "x"}}, context={"samples": 2, "index_dir": None})["seen"]
    assert (seen["llm"], seen["index_dir"], seen["nli"], seen["scorer"]) == (EMBEDDED, "/srv/sunar-index", "llm", "auto")
    assert (seen["profile"], seen["samples"], seen["budget"], seen["batch_size"]) == ("cpu", 2, 9, 8)  # the operator's model's profile


def test_a_served_runs_client_settings_are_checked_once_not_at_every_node(operator_env, monkeypatch):
    checked = []
    kind = served.client_configuration(build_graph("sunar").context_schema)
    original = kind.check
    monkeypatch.setattr(kind, "check", lambda self: checked.append(1) or original(self))
    served._client_given.cache_clear()
    out = run_served({"budget": 7})  # LangGraph builds the context once; every node reads it
    assert out["answer"] == "David Lynch" and len(out["hops"]) >= 1
    assert len(checked) <= 2, len(checked)  # the context as sent, then its values once (not once per node: 16 without the cache)


def test_python_callers_and_the_cli_still_set_every_field():
    cfg = Configuration.resolve({"llm": "ollama:llama3.1", "index_dir": "/data/idx", "llm_cache": "/var/tmp/c.sqlite", "scorer": "dense"})
    assert (cfg.index_dir, cfg.llm_cache, cfg.scorer) == ("/data/idx", "/var/tmp/c.sqlite", "dense")
    assert build_graph("sunar").context_schema is Configuration


def test_an_ordinary_served_run_answers_with_the_operators_profile(operator_env):
    out = run_served({})
    assert out["answer"] == "David Lynch"
    assert [len(b["ids"]) for b in out["hops"][0]["batches"]] == [8, 8]  # cpu profile: b = 8, c = 16
    out = run_served({"batch_size": 4, "budget": 8})
    assert [len(b["ids"]) for b in out["hops"][0]["batches"]] == [4, 4]


def test_studio_shows_the_client_fields_bounded_and_the_operator_fields_as_the_servers():
    for name in ("sunar", "sunar_no_asu", "sunar_r", "self_ask", "gensco", "gensco_stop", "ra_isf", "rag"):
        graph = getattr(served, name)
        own = served.client_configuration(build_graph(name).context_schema)  # a client's view of the graph's own fields
        assert graph.context_schema is own and set(graph.nodes) == set(build_graph(name).nodes)
    schema = served.sunar.get_context_jsonschema()["properties"]
    assert schema["index_dir"]["type"] == "null" and "SUNAR_INDEX_DIR" in schema["index_dir"]["description"]
    numbers = [p for p in schema.values() if p.get("type") in ("integer", "number")]
    assert len(numbers) >= 15 and all("minimum" in p and "maximum" in p for p in numbers)


def test_no_configuration_string_resolves_code(tmp_path):
    """Model specs name models only: a spec naming a module, an object or a folder whose model
    asks for its own code imports nothing (test doubles come in as objects, via POOL.llm_factory)."""
    marker = tmp_path / "RAN"
    probe = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('imported')\n"
    (tmp_path / "sunar_probe.py").write_text(probe + "def make(*a, **k): return None\n")
    model = tmp_path / "custom-code-model"
    model.mkdir()
    (model / "config.json").write_text(
        '{"model_type": "probe", "auto_map": {"AutoConfig": "configuration_probe.ProbeConfig", '
        '"AutoModel": "modeling_probe.ProbeModel", "AutoModelForSequenceClassification": "modeling_probe.ProbeModel"}}'
    )
    (model / "configuration_probe.py").write_text(probe)
    (model / "modeling_probe.py").write_text(probe)
    script = textwrap.dedent(f"""
        import sys
        from sunar.models.nli import make_nli
        from sunar.models.providers import make_llm
        from sunar.models.scorer import make_scorer
        specs = ["sunar_probe:make", "sunar_probe", "module:sunar_probe.make", "python:sunar_probe.make", "embedded:sunar_probe",
                 "embedded:{model}", "hf:sunar_probe.make", "hf:{model}", "cross-encoder:sunar_probe.make", "cross-encoder:{model}"]
        for spec in specs:
            for make in (make_llm, make_scorer, lambda s: make_nli(s, None)):
                try:
                    make(spec)
                except Exception:
                    pass
        print("sunar_probe" in sys.modules)
    """)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "OLLAMA_HOST": "http://127.0.0.1:9"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[-1] == "False" and not marker.exists()


def test_the_source_has_no_way_to_resolve_code_from_a_string():
    import re

    source = Path(__file__).resolve().parents[2] / "sunar"
    risky = re.compile(r"import_module\(|__import__\(|(?<![.\w])eval\(|(?<![.\w])exec\(|trust_remote_code\s*=\s*True|pickle\.loads?\(")
    found = [f"{p}:{n}" for p in source.rglob("*.py") for n, line in enumerate(p.read_text().splitlines(), 1) if risky.search(line.split("#", 1)[0])]
    assert not found, found


@pytest.mark.parametrize("opt_in", [False, True])
def test_tracing_is_off_unless_the_user_opts_in(opt_in):
    """Whatever LangSmith/LangChain tracing variables say, even read before sunar is imported (as
    `langgraph dev` does), importing sunar turns tracing off; SUNAR_TRACING=1 leaves it as set."""
    env = {k: v for k, v in os.environ.items() if k != "SUNAR_TRACING"}
    env.update({name: "true" for name in ("LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING")})
    env["LANGSMITH_API_KEY"] = "not-a-key"
    if opt_in:
        env["SUNAR_TRACING"] = "1"
    script = textwrap.dedent("""
        from langsmith.utils import tracing_is_enabled
        assert tracing_is_enabled()
        import sunar.cli
        from langchain_core.callbacks.manager import CallbackManager
        from langchain_core.tracers.langchain import LangChainTracer
        tracer = any(isinstance(h, LangChainTracer) for h in CallbackManager.configure().handlers)
        print(bool(tracing_is_enabled()), tracer)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[-2:] == ([str(opt_in)] * 2)


# --- the resource pool --------------------------------------------------------------------------


@pytest.fixture
def fake_models(monkeypatch):
    """The pool's index, scorer and NLI builders replaced by cheap stand-ins (no models load)."""
    import sunar.resources as res

    monkeypatch.setattr(res, "open_index", lambda cfg: MemoryIndex({}))
    monkeypatch.setattr(res, "make_scorer", lambda spec, embedder=None: TableScorer({}))
    monkeypatch.setattr(res, "make_nli", lambda spec, llm: None)


def cfg(llm: str, index: str = "") -> Configuration:
    return Configuration.resolve({"llm": llm, "index_dir": index, "profile": "paper"})


def counting_factory(built: list[str], gate: dict[str, threading.Event] | None = None, entered: threading.Event | None = None):
    def factory(spec: str):
        if gate and spec in gate:
            entered.set()
            assert gate[spec].wait(30)
        built.append(spec)
        return ScriptedLLM(lambda prompt, i: "x", spec)

    return factory


def test_the_pool_keeps_the_last_few_configurations_and_their_llms(fake_models):
    built: list[str] = []
    pool = ResourcePool(llm_factory=counting_factory(built), size=2)
    first = pool.get(cfg("ollama:a", "i1"))
    assert pool.get(cfg("ollama:a", "i1")) is first  # kept
    pool.get(cfg("ollama:b", "i2"))
    pool.get(cfg("ollama:a", "i1"))  # used again: now the most recent
    pool.get(cfg("ollama:c", "i3"))  # b's configuration is the least recently used: dropped
    assert len(pool._built) == 2 and {spec for _, spec, _ in pool._llms} == {"ollama:a", "ollama:c"}
    assert built == ["ollama:a", "ollama:b", "ollama:c"]
    pool.get(cfg("ollama:b", "i2"))
    assert built[-1] == "ollama:b" and {spec for _, spec, _ in pool._llms} == {"ollama:b", "ollama:c"}


def test_the_escalation_llm_is_built_once_and_kept_while_its_configuration_is(fake_models):
    built: list[str] = []
    pool = ResourcePool(llm_factory=counting_factory(built), size=1)
    both = Configuration.resolve({"llm": "ollama:small", "escalate_llm": "ollama:large", "hop_support": "escalate", "index_dir": "i1", "profile": "paper"})
    res = pool.get(both)
    assert res.escalation.name == "scripted:ollama:large" and res.llm.name == "scripted:ollama:small" and built == ["ollama:small", "ollama:large"]
    assert pool.get(cfg("ollama:small", "i1")).escalation is None  # none named: none built
    assert {spec for _, spec, _ in pool._llms} == {"ollama:small"}  # the larger one went with its configuration

def test_an_openai_model_is_one_llm_per_server(fake_models, monkeypatch):
    """The default factory is make_llm with the configuration's openai_base_url: the same model
    name on two servers is two LLMs; an embedded model ignores the URL."""
    import sunar.resources as resources_module

    made: list[tuple[str, str]] = []
    monkeypatch.setattr(resources_module, "make_llm", lambda spec, url: made.append((spec, url)) or ScriptedLLM(lambda p, i: "x", spec))
    pool = ResourcePool()
    for url in ("http://127.0.0.1:8080/v1", "http://127.0.0.1:9090/v1", "http://127.0.0.1:8080/v1"):
        pool.get(Configuration.resolve({"llm": "openai:qwen", "openai_base_url": url, "index_dir": "i1", "profile": "paper"}))
    for url in ("http://127.0.0.1:8080/v1", "http://127.0.0.1:9090/v1"):
        pool.get(Configuration.resolve({"llm": "embedded:qwen2.5-0.5b", "openai_base_url": url, "index_dir": "i1", "profile": "paper"}))
    assert made == [("openai:qwen", "http://127.0.0.1:8080/v1"), ("openai:qwen", "http://127.0.0.1:9090/v1"), ("embedded:qwen2.5-0.5b", "http://127.0.0.1:8080/v1")]


def test_a_slow_load_blocks_no_other_configuration(fake_models):
    built: list[str] = []
    release, entered = threading.Event(), threading.Event()
    pool = ResourcePool(llm_factory=counting_factory(built, {"ollama:slow": release}, entered))
    ready = pool.get(cfg("ollama:fast", "i1"))
    slow = [threading.Thread(target=pool.get, args=(cfg("ollama:slow", "i9"),)) for _ in range(2)]
    for t in slow:
        t.start()
    try:
        assert entered.wait(10)
        done: list = []
        other = threading.Thread(target=lambda: done.extend([pool.get(cfg("ollama:fast", "i1")), pool.get(cfg("ollama:new", "i2"))]))
        other.start()
        other.join(5)
        assert done and done[0] is ready  # a built configuration, and a new one, while the slow one loads
    finally:
        release.set()
        for t in slow:
            t.join(10)
    assert built.count("ollama:slow") == 1  # two runs of one configuration load it once


def test_every_served_graph_publishes_its_input_and_output_schemas():
    """LangGraph Studio's forms and the MCP tools list are built from these JSON schemas: each served
    graph's input names the question (pydantic needs typing_extensions' TypedDict on Python 3.11;
    with typing's, the schema failed and MCP listed no tool)."""
    from sunar.server import served

    for name in ("sunar", "sunar_no_asu", "sunar_r", "self_ask", "gensco", "gensco_stop", "ra_isf", "rag"):
        graph = getattr(served, name)
        assert "question" in graph.get_input_jsonschema()["properties"], name
        assert {"answer", "confidence", "evidence"} <= set(graph.get_output_jsonschema()["properties"]), name
