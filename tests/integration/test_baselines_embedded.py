"""The other systems on the real embedded model, on the demo question: GenSco choosing from a given
pool, retrieve-then-read over the same pool, RA-ISF with the cpu profile's judges. Every reply is
read in its format; what each graph chose is checked, and the answers for sense."""

import pytest

from sunar.graph import build_graph

QUESTION = "Where was the director of film Ronnie Rocket born?"
RONNIE, LYNCH = "d150667e65947", "d318efe81f917"


@pytest.fixture(scope="module")
def config(demo_index):
    return {"configurable": {"llm": "embedded:qwen2.5-1.5b", "profile": "cpu", "index_dir": str(demo_index), "samples": 2, "max_hops": 2}}


def pool_of(demo_index, size=6):
    from sunar.stores.index import Index

    ranked = [doc_id for doc_id, _ in Index(demo_index).first_stage(QUESTION, size, "bm25")]
    return list(dict.fromkeys([RONNIE, LYNCH, *ranked]))[:size]


@pytest.mark.slow
def test_gensco_and_rag_choose_from_the_given_pool_and_answer(config, demo_index):
    pool = pool_of(demo_index)
    gensco = build_graph("gensco").invoke({"question": QUESTION, "pool_ids": pool}, config)
    rag = build_graph("rag").invoke({"question": QUESTION, "pool_ids": pool}, config)
    for out in (gensco, rag):
        assert out["answer"] and out["usage"]["parse_fallbacks"] == 0, out["notes"]
        assert {e["id"] for e in out["evidence"]} <= set(pool)
    assert 1 <= len(gensco["hops"]) <= 2 and gensco["usage"]["loglik_calls"] >= len(gensco["hops"])
    assert gensco["evidence"][0]["id"] in (RONNIE, LYNCH)  # the first sub-question's passage is one of the two
    assert len(rag["evidence"]) == 5 and {RONNIE, LYNCH} <= {e["id"] for e in rag["evidence"]}
    assert "Missoula" in rag["answer"], rag["answer"]


@pytest.mark.slow
def test_ra_isf_with_the_cpu_profile_retrieves_and_judges_relevance_by_the_scorer(config):
    out = build_graph("ra_isf").invoke({"question": QUESTION}, config)
    assert out["answer"] and out["usage"]["parse_fallbacks"] == 0, out["notes"]
    assert out["evidence"]  # never from memory under the cpu profile's self-knowledge threshold
    assert out["usage"]["judge_calls"] >= 1  # the self-knowledge judge still asks the LLM
