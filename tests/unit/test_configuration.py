"""The one configuration: the same checks and the same profile whatever the entry point (the CLI's
--set, a Python caller's configurable, a LangGraph context as Studio and the API send it)."""

import pytest

from fakes import MemoryIndex, TableScorer, docs, resources, scripted_llm, self_ask_script
from sunar.configuration import CPU_PROFILE, Configuration
from sunar.errors import ConfigurationError
from sunar.graph import build_graph

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
    # the reproduction: a RunnableConfig as Studio, `langgraph dev` and Python callers give it
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
        ({"answer_likelihood": "maybe"}, "configuration: answer_likelihood must be true or false (got 'maybe')"),
    ],
)
def test_a_bad_value_is_one_clear_line(values, message):
    with pytest.raises(ConfigurationError) as error:
        Configuration.resolve({"llm": "ollama:llama3.1", **values})
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_every_number_is_bounded():
    numbers = {n: f for n, f in Configuration.model_fields.items() if f.annotation in (int, float)}
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
    batches = out["hops"][0]["batches"]
    assert [len(b["ids"]) for b in batches] == [8, 8]  # b = 8, c = 16 (the paper's b = 16, c = 100)
    assert len(batches[0]["answers"]) == 3  # m = 3 (the paper's 10); the second batch ranks below the first's top 5
    assert "answers" not in batches[1]
    assert len(out["evidence"]) <= 5  # l = 5


def test_a_graph_run_with_a_bad_value_from_an_api_caller_stops_with_the_one_clear_error():
    graph = build_graph("sunar")
    question = {"question": "Where was the director of film Ronnie Rocket born?"}
    with pytest.raises(ConfigurationError, match=r"^configuration: rescoring must be one of paper, official \(got 'both'\)"):
        graph.invoke(question, {"configurable": {"resources": make_resources()}}, context={"rescoring": "both"})
    with pytest.raises(ConfigurationError, match=r"^configuration: budget must be from 1 to 10000 \(got -3\)") as error:
        graph.invoke(question, {"configurable": {"resources": make_resources(), "budget": -3}})
    assert "'ask'" in "".join(getattr(error.value, "__notes__", [])) and "\n" not in str(error.value)  # the first node
