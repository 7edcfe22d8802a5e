"""The configuration: the same checks and the same profile whatever the entry point (the CLI's
--set, a Python caller's configurable, a LangGraph context as Studio and the API send it), and
each graph's own settings beside the fields every graph shares."""

import json
from pathlib import Path

import pytest
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict

from fakes import MemoryIndex, TableScorer, docs, resources, scripted_llm, self_ask_script
from sunar.baselines.configuration import AnyConfiguration
from sunar.baselines.gensco.configuration import GenscoConfiguration, PoolConfiguration
from sunar.baselines.ra_isf.configuration import RaIsfConfiguration
from sunar.configuration import CPU_PROFILE, RETIRED, Configuration
from sunar.errors import ConfigurationError, SunarError
from sunar.graph import GRAPH_NAMES, build_graph
from sunar.server import served

EMBEDDED = "embedded:qwen2.5-1.5b"


def test_the_embedded_model_gets_the_cpu_profile_unless_a_field_is_set():
    cfg = Configuration.resolve({"llm": EMBEDDED})
    assert cfg.profile == "cpu" and {k: getattr(cfg, k) for k in CPU_PROFILE} == CPU_PROFILE
    cfg = Configuration.resolve({"llm": EMBEDDED, "budget": "40", "rescoring": "paper"})
    assert (cfg.budget, cfg.rescoring, cfg.samples) == (40, "paper", 3)
    paper = Configuration.resolve({"llm": EMBEDDED, "profile": "paper"})
    assert (paper.budget, paper.samples, paper.batch_size) == (100, 10, 16)
    ollama = Configuration.resolve({"llm": "ollama:llama3.1"})
    assert ollama.profile == "paper" and ollama.budget == 100
    # the issue's reproduction: a RunnableConfig as Studio, `langgraph dev` and Python callers give it
    studio = Configuration.from_runnable_config({"configurable": {"llm": EMBEDDED}})
    assert (studio.budget, studio.samples, studio.batch_size) == (16, 3, 8)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"rescoring": "both"}, "configuration: rescoring must be one of paper, official (got 'both')"),
        ({"first_stage": "splade"}, "configuration: first_stage must be one of bm25, dense, fused (got 'splade')"),
        ({"budget": "abc"}, "configuration: budget must be a whole number (got 'abc')"),
        ({"budget": 0}, "configuration: budget must be from 1 to 10000 (got 0)"),
        ({"samples": 10**6}, "configuration: samples must be from 1 to 100 (got 1000000)"),
        ({"max_tokens": -1}, "configuration: max_tokens must be from 1 to 4096 (got -1)"),
        ({"temperature": "warm"}, "configuration: temperature must be a number (got 'warm')"),
        ({"llm": 5}, "configuration: llm must be text (got 5)"),
        ({"budget": [1, 2]}, "configuration: budget must be a whole number (got [1, 2])"),
        ({"budgte": 5}, "configuration: unknown field 'budgte'"),
        ({"relevance_threshold": -1e9}, "configuration: relevance_threshold must be from -50.0 to 50.0 (got -1000000000.0)"),
        ({"ra_isf_relevance": "both"}, "configuration: ra_isf_relevance must be one of llm, scorer (got 'both')"),
        ({"gensco_pool": 0}, "configuration: gensco_pool must be from 1 to 100 (got 0)"),
        ({"answer_likelihood": "maybe"}, "configuration: answer_likelihood must be true or false (got 'maybe')"),
    ],
)
def test_a_bad_value_is_one_clear_line(values, message):
    """Checked alike by every entry point's class: the graph's own (a baseline's field in its
    subclass) and the one for any graph (the CLI's --set, sunar eval)."""
    own = {"relevance_threshold": RaIsfConfiguration, "ra_isf_relevance": RaIsfConfiguration, "gensco_pool": PoolConfiguration}
    for cls in (own.get(next(iter(values)), Configuration), AnyConfiguration):
        with pytest.raises(ConfigurationError) as error:
            cls.resolve({"llm": "ollama:llama3.1", **values})
        assert str(error.value).startswith(message) and "\n" not in str(error.value), cls


def test_every_number_is_bounded():
    numbers = {n: f for n, f in AnyConfiguration.model_fields.items() if f.annotation in (int, float)}
    bounds = {n: {type(m).__name__ for m in f.metadata} for n, f in numbers.items()}
    assert len(numbers) >= 15 and all({"Ge", "Le"} <= kinds for kinds in bounds.values()), bounds


def test_langgraph_keys_beside_the_fields_are_not_errors():
    cfg = Configuration(llm="ollama:llama3.1", thread_id="t", checkpoint_ns="", __pregel_x=1)
    assert cfg.llm == "ollama:llama3.1"


def make_resources():
    corpus = docs(*[(f"d{i}", f"T{i}", f"text {i}") for i in range(30)])
    ranking = [(f"d{i}", 1.0 - i / 100) for i in range(30)]
    llm = scripted_llm(self_ask_script(["Follow up: Who directed Ronnie Rocket?", "So the final answer is: David Lynch"]), lambda q, i: "David Lynch")
    return resources(llm, TableScorer({d: s for d, s in ranking}), MemoryIndex(corpus, default_ranking=ranking))


def test_a_graph_run_as_studio_runs_it_on_the_embedded_model_uses_the_cpu_settings():
    """No CLI: the context LangGraph Studio sends names the embedded model, and nothing else."""
    out = build_graph("sunar").invoke(
        {"question": "Where was the director of film Ronnie Rocket born?"},
        {"configurable": {"resources": make_resources()}},
        context={"llm": EMBEDDED},
    )
    hop = out["hops"][0]
    assert [len(b["ids"]) for b in hop["batches"]] == [8, 8]  # b = 8, c = 16 (the paper's b = 16, c = 100)
    # uncertainty that acts: no batch is sampled (asu_batches off); the hop's answer and its 3 more samples are
    assert not any("answers" in b for b in hop["batches"]) and len(hop["samples"]) == 1 + 3
    assert hop["candidates"] == [{"answer": "David Lynch", "share": 1.0}]
    assert len(out["evidence"]) <= 5  # l = 5
    paper = build_graph("sunar").invoke(
        {"question": "Where was the director of film Ronnie Rocket born?"},
        {"configurable": {"resources": make_resources()}},
        context={"llm": EMBEDDED, "profile": "paper", "batch_size": 8, "budget": 16, "samples": 3},
    )
    batches = paper["hops"][0]["batches"]
    assert len(batches[0]["answers"]) == 3 and "samples" not in paper["hops"][0]  # the paper's ASU: m answers per batch


def test_a_graph_run_with_a_bad_value_from_an_api_caller_stops_with_the_one_clear_error():
    graph = build_graph("sunar")
    question = {"question": "Where was the director of film Ronnie Rocket born?"}
    with pytest.raises(ConfigurationError, match=r"^configuration: rescoring must be one of paper, official \(got 'both'\)"):
        graph.invoke(question, {"configurable": {"resources": make_resources()}}, context={"rescoring": "both"})
    with pytest.raises(ConfigurationError, match=r"^configuration: budget must be from 1 to 10000 \(got -3\)") as error:
        graph.invoke(question, {"configurable": {"resources": make_resources(), "budget": -3}})
    assert "'ask'" in "".join(getattr(error.value, "__notes__", [])) and "\n" not in str(error.value)  # the first node


@pytest.mark.parametrize(("values", "message"), [
    ({"llm": "olama:llama3.1"}, r"^unknown llm 'olama:llama3.1'; use auto, ollama:<model> or embedded:<name>"),
    ({"llm": "embedded:qwen9"}, r"^unknown embedded model 'qwen9' in llm; choose one of: qwen2.5-1.5b"),
    ({"nli": "roberta"}, r"^unknown nli 'roberta'; use auto, llm or hf:"),
    ({"scorer": "bm25"}, r"^unknown scorer 'bm25'"),
    ({"calibration": "/nowhere/cal.json"}, r"^calibration file not found: /nowhere/cal.json; fit one with: sunar calibrate"),
])
def test_model_names_and_the_calibration_file_are_checked_wherever_a_configuration_is_made(values, message):
    """The CLI and the eval (resolve), a Python caller's context object, and Studio's context (a
    dict LangGraph validates) all go through the one check, before any model is loaded."""
    for make in (Configuration.resolve, lambda v: Configuration(**v)):
        with pytest.raises(SunarError, match=message):
            make(values)
    with pytest.raises(SunarError, match=message):
        build_graph("sunar").invoke({"question": "Where was the director of film Ronnie Rocket born?"}, context=values)


def test_an_injected_model_and_a_past_runs_recorded_models_are_not_checked_as_specs():
    res = make_resources()  # its LLM is named scripted:..., which no spec builds
    out = build_graph("sunar").invoke({"question": "Where was the director of film Ronnie Rocket born?"}, {"configurable": {"resources": res}})
    assert out["answer"]
    with pytest.raises(ConfigurationError, match="unknown llm 'scripted:x'"):
        Configuration.resolve({"llm": "scripted:x"})  # the same name, not injected, is refused
    recorded = Configuration.as_recorded({"llm": "scripted:x", "calibration": "/gone/cal.json", "samples": 2})
    assert recorded["llm"] == "scripted:x" and recorded["samples"] == 2


# --- each graph's own settings ----------------------------------------------------------------

BASELINE_FIELDS = {"gensco_pool", "gensco_candidates", "ra_isf_depth", "ra_isf_relevance", "relevance_threshold", "ra_isf_min_relevant", "self_knowledge_threshold"}


def test_each_graph_takes_the_shared_fields_and_its_own_only():
    """Studio shows a graph's context schema: SUNAR's has no baseline's field, a baseline's has its
    own and no other's, and the served graphs (what langgraph.json points at) show the same."""
    own = {"gensco": {"gensco_pool", "gensco_candidates"}, "gensco_stop": {"gensco_pool", "gensco_candidates"}, "rag": {"gensco_pool"},
           "ra_isf": {"ra_isf_depth", "ra_isf_relevance", "relevance_threshold", "ra_isf_min_relevant", "self_knowledge_threshold"}}
    shared = set(Configuration.model_fields)
    assert not shared & BASELINE_FIELDS and set(AnyConfiguration.model_fields) == shared | BASELINE_FIELDS
    for name in GRAPH_NAMES:
        schema = build_graph(name).context_schema
        assert set(schema.model_fields) == shared | own.get(name, set()), name
        studio = set(getattr(served, name).get_context_jsonschema()["properties"])
        assert studio == shared | own.get(name, set()), name


def test_a_baselines_cpu_profile_lives_with_its_fields_and_any_graph_gets_every_one():
    gensco = GenscoConfiguration.resolve({"llm": EMBEDDED})
    assert (gensco.gensco_pool, gensco.gensco_candidates, gensco.budget, gensco.profile) == (10, 5, 16, "cpu")
    ra_isf = RaIsfConfiguration.resolve({"llm": EMBEDDED, "ra_isf_min_relevant": "1"})
    assert (ra_isf.ra_isf_relevance, ra_isf.relevance_threshold, ra_isf.self_knowledge_threshold, ra_isf.ra_isf_min_relevant) == ("scorer", 1.36, 1.0, 1)
    assert RaIsfConfiguration.resolve({"llm": EMBEDDED, "profile": "paper"}).relevance_threshold == 0.0
    # what the CLI and sunar eval resolve is each graph's own resolution, field for field
    for values in ({"llm": EMBEDDED}, {"llm": "ollama:llama3.1", "gensco_pool": "7", "budget": 9}):
        every = AnyConfiguration.resolve(values).values()
        for cls in (Configuration, PoolConfiguration, GenscoConfiguration, RaIsfConfiguration):
            assert cls.resolve(cls.known(values)).values() == {k: every[k] for k in cls.model_fields}, (cls, values)


def test_the_shared_configuration_refuses_a_baselines_field_and_names_only_its_own():
    with pytest.raises(ConfigurationError) as error:
        Configuration.resolve({"llm": "ollama:llama3.1", "gensco_pool": 5})
    assert str(error.value).startswith("configuration: unknown field 'gensco_pool' (fields: llm, profile,")
    assert not any(name in str(error.value) for name in BASELINE_FIELDS - {"gensco_pool"})


def test_every_class_reads_its_own_fields_of_a_run_whatever_else_it_was_given():
    """A baseline's context holds its own fields; the nodes every graph shares read the shared
    class from it, the baseline's own nodes its subclass; ``configurable`` holding every graph's
    fields (what the CLI and sunar eval pass) is read the same way."""

    class State(TypedDict):
        seen: list

    def look(state, config):
        return {"seen": [Configuration.from_runnable_config(config).values(), GenscoConfiguration.from_runnable_config(config).values()]}

    graph = StateGraph(State, context_schema=GenscoConfiguration)
    graph.add_node("look", look)
    graph.add_edge(START, "look")
    shared, gensco = graph.compile().invoke({"seen": []}, context={"llm": EMBEDDED, "gensco_pool": 3, "budget": 7})["seen"]
    assert "gensco_pool" not in shared and (shared["budget"], shared["samples"]) == (7, 3)
    assert (gensco["gensco_pool"], gensco["gensco_candidates"], gensco["budget"]) == (3, 5, 7)
    every = AnyConfiguration.resolve({"llm": EMBEDDED, "gensco_candidates": 2, "ra_isf_depth": 1}).values()
    shared, gensco = graph.compile().invoke({"seen": []}, {"configurable": every})["seen"]
    assert gensco["gensco_candidates"] == 2 and shared == {k: v for k, v in every.items() if k in Configuration.model_fields}


def test_a_committed_runs_recorded_settings_read_back_unchanged():
    """``sunar eval`` records every graph's fields (run.json) and calibrations copy them: each
    recorded field is still a field, and reads back as recorded, so a run resumes and a shipped
    calibration matches as before."""
    root = Path(__file__).resolve().parents[2]
    recorded = [json.loads(p.read_text())["configuration"] for p in sorted((root / "evals" / "results").glob("*/run.json"))]
    recorded += [json.loads(p.read_text())["configuration"] for p in sorted((root / "sunar" / "data" / "calibration").glob("*.json"))]
    newest = [r for r in recorded if "ra_isf_min_relevant" in r and "asu_batches" in r]
    assert len(newest) >= 3
    for configuration in newest:
        assert set(configuration) <= set(AnyConfiguration.model_fields) | set(RETIRED)
        again, kept = AnyConfiguration.as_recorded(configuration), {k: v for k, v in configuration.items() if k not in RETIRED}
        assert {k: str(again[k]).lower() for k in kept} == {k: str(v).lower() for k, v in kept.items()}  # "2", "true" as a --set gave them
        assert set(Configuration.as_recorded(configuration)) == set(Configuration.model_fields)


def test_a_removed_setting_is_one_line_that_says_so_and_a_run_that_used_it_cannot_be_read_back():
    with pytest.raises(ConfigurationError, match="^configuration: past_bridge was measured, not kept and removed"):
        Configuration.resolve({"past_bridge": True})
    recorded = {"llm": EMBEDDED, "profile": "cpu", "samples": 3, "past_bridge": False, "hop_reading": "samples"}  # at the value the code has: dropped
    assert "past_bridge" not in Configuration.as_recorded(recorded) and Configuration.as_recorded(recorded)["samples"] == 3
    with pytest.raises(ConfigurationError, match="^configuration: hop_reading=documents was measured, not kept and removed"):
        Configuration.as_recorded({**recorded, "hop_reading": "documents"})


@pytest.mark.parametrize("route", ["context", "configurable"])
def test_a_served_baseline_takes_its_own_bounded_fields_from_a_client(route, monkeypatch):
    """A client of the served RA-ISF graph sets RA-ISF's numbers, each bounded; the SUNAR graph
    names them as no field of its own."""
    monkeypatch.setenv("SUNAR_LLM", EMBEDDED)
    question = {"question": "Where was the director of film Ronnie Rocket born?"}
    for graph, sent, message in [
        (served.ra_isf, {"ra_isf_depth": 100}, "configuration: ra_isf_depth must be from 0 to 10 (got 100)"),
        (served.ra_isf, {"relevance_threshold": 1e308}, "configuration: relevance_threshold must be from -50.0 to 50.0 (got 1e+308)"),
        (served.sunar, {"gensco_pool": 5}, "configuration: unknown field 'gensco_pool' (fields: profile, first_stage,"),
    ]:
        config = {"configurable": {"resources": make_resources(), **(sent if route == "configurable" else {})}}
        with pytest.raises(ConfigurationError) as error:
            graph.invoke(question, config, context=sent if route == "context" else {})
        assert str(error.value).startswith(message), str(error.value)


def test_a_recorded_run_lacking_a_newer_field_ran_without_it_while_values_written_by_hand_take_the_profile():
    recorded = {"llm": EMBEDDED, "profile": "cpu", "samples": 3}  # a run's record names its resolved profile
    assert Configuration.as_recorded(recorded)["focus_pages"] is False  # added after the run: it ran without
    assert Configuration.as_recorded({"llm": EMBEDDED, "samples": 3})["focus_pages"] is True  # as a run given these would
    assert Configuration.as_recorded({**recorded, "focus_pages": "true"})["focus_pages"] is True


def config_listing(capsys, *argv: str) -> str:
    from sunar.cli import main

    assert main(["config", "--llm", "embedded:qwen2.5-1.5b", *argv]) == 0
    return capsys.readouterr().out


def test_sunar_config_lists_each_field_a_graph_reads_with_its_resolved_value(capsys):
    """`sunar config` shows a run's values (the cpu profile's with the embedded model), the default
    where it differs, each description; the fields users set, the others with --all; a graph's unread
    fields never (Self-Ask reads no hop samples), a baseline's own fields with it."""
    out = config_listing(capsys)
    assert "sunar: profile cpu, LLM embedded:qwen2.5-1.5b" in out
    assert "  hop_samples = 3   (default: 0)\n" in out and "  budget = 16   (default: 100)\n" in out
    assert "      c: most documents scored per sub-question" in out
    assert "  batch_size =" not in out and "more fields: --all lists them (" in out and "batch_size" in out.splitlines()[-1]
    every = config_listing(capsys, "--all")
    assert "  batch_size = 8   (default: 16)\n" in every and "      b: documents scored per NAR batch." in every and "more fields" not in every
    assert "  hop_samples = 5   (default: 0)\n" in config_listing(capsys, "--set", "hop_samples=5", "--profile", "paper")
    self_ask = config_listing(capsys, "--variant", "self_ask")
    assert "  hop_samples" not in self_ask and "  demonstrations = 2   (default: 0)\n" in self_ask
    assert "  ra_isf_depth = 3\n" in config_listing(capsys, "--variant", "ra_isf")


def test_sunar_config_json_has_every_field_described_and_a_bad_graph_is_one_line(capsys):
    import json

    from sunar.cli import main
    from sunar.configuration import ASU_FIELDS, CPU_PROFILE, MER_FIELDS, SUNAR_ONLY

    rows = json.loads(config_listing(capsys, "--all", "--json"))
    assert {r["field"] for r in rows} == set(Configuration.model_fields) and all(r["description"] for r in rows)
    assert ASU_FIELDS | MER_FIELDS <= SUNAR_ONLY and set(CPU_PROFILE) <= set(Configuration.model_fields)
    assert not RETIRED.keys() & set(Configuration.model_fields)  # removed: no field, and none a profile sets
    schema = build_graph("sunar").context_schema.model_json_schema()["properties"]  # the groups Studio's schema carries
    assert schema["hop_support"]["reads"] == "asu" and schema["llm"]["env"] == "SUNAR_LLM" and "reads" not in schema["budget"]
    assert main(["config", "--variant", "nope", "--llm", "embedded:qwen2.5-1.5b"]) == 1
    assert capsys.readouterr().err.strip().startswith("error: unknown variant 'nope'; choose one of: sunar,")
