"""SUNAR's configuration: the fields every graph shares (models, index, retrieval, Self-Ask,
MER, confidence) and SUNAR's own, each with its default, range and description.

:class:`Configuration` is the SUNAR graphs' ``context_schema``, so LangGraph Studio shows each
knob with its default, range and description (the paper's symbols b, c, m, k, l are in them).
Each baseline's graph takes a subclass of it, with the fields only that baseline reads, from its
own package (``sunar.baselines.gensco.configuration``, ``sunar.baselines.ra_isf.configuration``).
How a configuration is checked and resolved, whatever the entry point, is :mod:`sunar.settings`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from sunar.models.openai_compat import DEFAULT_OPENAI_URL
from sunar.models.specs import AUTO, check_specs
from sunar.settings import INJECTED_LLM, Settings, fields_where, group

#: Smaller settings for the embedded CPU model (a 1.5B model at ~12 tokens/s): fewer samples and a
#: smaller budget keep a question to minutes instead of an hour. The ``paper`` profile is the
#: field defaults. A baseline's own fields have theirs in its subclass's ``cpu_profile``.
CPU_PROFILE: dict[str, Any] = {
    "batch_size": 8, "budget": 16, "samples": 3, "neighbours": 5, "evidence": 5, "first_stage_depth": 50,
    "max_hops": 3, "chain_check_after": 2, "max_tokens": 128,
    # With m=3 samples the paper's score / s halves a batch on one dissenting sample; the official
    # code's contradiction penalty keeps Recall@10 (benchmarks/RESULTS.md), where ASU is asked for.
    "rescoring": "official",
    # Uncertainty that acts (S), developed on dev 1-217 (benchmarks/RESULTS.md): the reader and
    # decomposition Self-Ask shares, then SUNAR's own (the hop's samples act instead of re-weighting
    # each batch, which changed 1 answer of 100 at 2.7x Self-Ask's time).
    "demonstrations": 2, "drop_country": True, "focus_pages": True, "end_loops": True,
    "asu_batches": False, "hop_samples": 3, "branch_width": 2, "grounded_final": True, "hop_support": "cut_uncertain", "unfit_answer": "both",
    "replan_below": 0.55,
}


#: Settings measured and not kept, and removed (benchmarks/RESULTS.md, "Tried and not kept"; their code
#: is in the git tag ``experiments-2026-12``), each with the value the code now always has. A run or
#: calibration that recorded one at that value reads back without it; at another value it cannot.
RETIRED: dict[str, Any] = {
    "hop_reading": "samples", "hop_sentences": 6, "branch_support": False, "requery": False, "grounded_answers": False,
    "whole_answers": False, "final_not_bridge": False, "final_vote": False, "final_from_hop": False, "short_answer": False,
    "decomposition": "self_ask", "replan_avoid": False, "repeat_samples": 0, "rewrite_repeats": False, "past_bridge": False,
}


class Configuration(Settings):
    """Settings of a SUNAR run, and the fields every graph shares (a baseline's own are in its
    package's subclass). Defaults are the paper's values (the ``paper`` profile)."""

    cpu_profile = CPU_PROFILE
    retired = RETIRED

    # --- models -------------------------------------------------------------------------------
    llm: str = Field(AUTO, description="Generative LLM: 'ollama:<model>' (e.g. ollama:llama3.1, ollama:mistral), "
        "'embedded:<name>' (llama.cpp, qwen2.5-1.5b or qwen2.5-0.5b, shipped as PyPI packages), 'openai:<model>' (any "
        "OpenAI-compatible server, at openai_base_url), or 'auto' (Ollama llama3.1 when its server answers and has the "
        "model, else embedded). Served graphs: SUNAR_LLM in the server's environment.", json_schema_extra=group(env="SUNAR_LLM", common=True))
    profile: Literal["auto", "paper", "cpu"] = Field(
        "auto",
        description="Defaults for the fields not set: 'paper' (the paper's values), 'cpu' (smaller "
        "budget, fewer samples: minutes per question on a CPU), or 'auto' (cpu with the embedded "
        "model, paper otherwise). Resolved to 'paper' or 'cpu'.",
        json_schema_extra=group(common=True),
    )
    scorer: str = Field(
        "auto",
        description="Scorer of NAR batches (the paper's cross-encoder): 'cross-encoder:<name or path>', "
        "'hybrid', 'splade', 'dense', or 'auto' (the paper's nreimers/mmarco-mMiniLMv2-L12-H384-v1 "
        "when cached, else the measured best offline one). Served graphs: SUNAR_SCORER in the server's environment.",
        json_schema_extra=group(env="SUNAR_SCORER"),
    )
    nli: str = Field(
        "auto",
        description="Entailment model for semantic sets: 'hf:<name or path>' (an MNLI classifier such as "
        "microsoft/deberta-large-mnli), 'llm' (the LLM as a few-shot judge), or 'auto' "
        "(roberta-large-mnli / deberta-large-mnli when cached, else 'llm'). Served graphs: SUNAR_NLI in the server's environment.",
        json_schema_extra=group(env="SUNAR_NLI"),
    )
    openai_base_url: str = Field(
        DEFAULT_OPENAI_URL,
        description="The OpenAI-compatible server an 'openai:<model>' LLM is asked on (llama.cpp's server, "
        "LM Studio, vLLM, Ollama's /v1, LocalAI). Served graphs: SUNAR_OPENAI_BASE_URL in the server's environment.",
        json_schema_extra=group(env="SUNAR_OPENAI_BASE_URL"),
    )
    likelihood_llm: str = Field("", description="The LLM that gives the log-likelihood of a given text: GenSco's scorer and "
        "the answer_likelihood signal. It must return token log-probabilities ('embedded:<name>' can; Ollama cannot). Empty: "
        "the generative LLM. Served graphs: SUNAR_LIKELIHOOD_LLM in the server's environment.", json_schema_extra=group(env="SUNAR_LIKELIHOOD_LLM"))
    escalate_llm: str = Field("", description="With hop_support=escalate(_uncertain) or unfit_answer=escalate: the larger "
        "LLM a doubted hop or final answer is read again by (llm's spec forms). Served graphs: SUNAR_ESCALATE_LLM.", json_schema_extra=group(reads="asu", env="SUNAR_ESCALATE_LLM"))
    # --- index --------------------------------------------------------------------------------
    index_dir: str = Field(
        "",
        description="Index directory built by 'sunar index'. Empty: the bundled demo index. "
        "Served graphs: SUNAR_INDEX_DIR in the server's environment.",
        json_schema_extra=group(env="SUNAR_INDEX_DIR", common=True),
    )
    chroma_url: str = Field(
        "",
        description="Chroma server URL (client/server mode). Empty: the embedded store. "
        "Served graphs: SUNAR_CHROMA_URL in the server's environment.",
        json_schema_extra=group(env="SUNAR_CHROMA_URL"),
    )
    # --- NAR (Algorithm 1) --------------------------------------------------------------------
    first_stage: Literal["bm25", "dense", "fused"] = Field(
        "fused",
        description="First-stage retriever R: sparse BM25 (the paper uses sparse SPLADE), dense (the index's "
        "embeddings in Chroma), or fused (reciprocal rank fusion of the two; it finds the most gold paragraphs "
        "on the dev data, benchmarks/RESULTS.md).",
        json_schema_extra=group(common=True),
    )
    first_stage_depth: int = Field(100, ge=1, le=1000, description="Depth of the first-stage ranking R per sub-question.")
    batch_size: int = Field(16, ge=1, le=1000, description="b: documents scored per NAR batch.")
    budget: int = Field(100, ge=1, le=10000, description="c: most documents scored per sub-question (NAR stops at |R+| >= c).", json_schema_extra=group(common=True))
    neighbours: int = Field(10, ge=0, le=1000, description="k: graph neighbours added to N per scored document.")
    evidence: int = Field(10, ge=1, le=100, description="l: top documents of R+ kept as a sub-question's evidence and for MER.", json_schema_extra=group(common=True))
    nar_patience: int = Field(0, ge=0, le=100, description="NAR early stop: end a sub-question's NAR loop when the last this-many "
        "batches hold none of the top l documents of R+ (their scores fell below the evidence already found). 0: off, "
        "as in the paper, which scores until the budget c is spent.", json_schema_extra=group(reads="sunar"))
    # --- answer sampling and uncertainty ------------------------------------------------------
    samples: int = Field(10, ge=1, le=100, description="m: answers sampled from the LLM per NAR batch.", json_schema_extra=group(common=True))
    temperature: float = Field(0.3, ge=0.0, le=2.0, description="Sampling temperature of the m answers.")
    asu_skip_outranked: bool = Field(
        True,
        description="Sample no answers for a batch whose best score is already below the l-th best document found "
        "for the sub-question: rescoring only lowers scores, so its answers could not change the evidence. "
        "Off: every batch is sampled, as in the paper.",
        json_schema_extra=group(reads="sunar"),
    )
    rescoring: Literal["paper", "official"] = Field(
        "paper",
        description="'paper': score / s (s = number of semantic sets). 'official': the official code's "
        "penalty from contradicting answer pairs.",
        json_schema_extra=group(reads="asu"),
    )
    # --- uncertainty that acts on the reasoning ------------------------------------------------
    asu_batches: bool = Field(
        True,
        description="The paper's ASU: m answers sampled per NAR batch, their semantic sets dividing the batch's scores. "
        "Off: NAR scores batches without sampling (the hops' own samples still steer the chains).",
        json_schema_extra=group(reads="asu"),
    )
    hop_samples: int = Field(
        0, ge=0, le=100,
        description="Answers sampled at each hop beside its greedy answer, from the hop's own evidence (the same "
        "prompt, so the model reads it once); their semantic sets are the hop's uncertainty, which branches "
        "the chain (branch_width). 0: none.",
        json_schema_extra=group(reads="asu", common=True),
    )
    branch_width: int = Field(1, ge=1, le=5, description="An uncertain hop (its answers fall into more than one semantic set) "
        "keeps up to this many candidate answers, each as a chain of its own with its own follow-ups and retrieval. 1: one chain.", json_schema_extra=group(reads="asu"))
    hop_support: Literal["off", "judge", "cut_uncertain", "escalate", "escalate_uncertain"] = Field("off", description="Whether the pages a hop "
        "read state its answer: 'judge' asks the LLM yes or no and keeps P(yes) with the hop, then asks whether the final answer "
        "answers the whole question given the steps (signals of trust); 'cut_uncertain' also reads a hop the judge doubts (P(yes) < 0.5) "
        "or whose answers fall into more than one semantic set once more, from all its pages cut to their most relevant sentences in "
        "reverse order, and takes that answer where the judge finds it better supported; 'escalate' has escalate_llm (a larger model) "
        "read a doubted hop's pages and judge both answers, keeping the one it finds better supported; 'escalate_uncertain' escalates "
        "the hops 'cut_uncertain' reads again.", json_schema_extra=group(reads="asu", common=True))
    max_chains: int = Field(3, ge=1, le=10, description="Most chains one question may follow (the budget of branching).", json_schema_extra=group(reads="asu"))
    focus_pages: bool = Field(
        False,
        description="A hop whose sub-question names pages of its evidence (at least half of a title's words, its "
        "bracketed qualifier left out; one word alone only written as a name, not 'computer') is answered from the pages it names most, not from all l: a small model "
        "reading five pages often answers from one about someone else. The evidence kept (for MER) is unchanged.",
        json_schema_extra=group(reads="sunar"),
    )
    grounded_final: bool = Field(
        False,
        description="MER's answer is copied, under a grammar, from the hops' answers, 'yes'/'no', the names in the "
        "question or the spans of its evidence (or 'unknown'): a short answer, never a sentence.",
        json_schema_extra=group(reads="mer"),
    )
    bridge_to_last: bool = Field(True, description="A final answer that is a bridge entity of its chain (an earlier hop's answer that a later "
        "sub-question names: a step on the way, not what the question asks for) gives way to the chain's last hop's answer, when that names something and is no bridge: a rule, no call, in both graphs. Off: as answered.", json_schema_extra=group(reads="sunar"))
    whole_last: bool = Field(True, description="A final answer that is only the end of the chain's last hop's answer, the place after "
        "'in' or 'at' (\"Bratislava\" of \"Academy of Performing Arts in Bratislava\") or the year of its full date (\"1934\" of \"2 May "
        "1934\"), gives way to the hop's whole answer, unless the question asks for a year, city, country or the like: a rule, no call, in both graphs. Off: as answered.", json_schema_extra=group(reads="sunar"))
    unfit_answer: Literal["keep", "choose", "go_on", "both", "escalate"] = Field("keep", description="With hop_support, what a "
        "final answer the judge says does not answer the question (P(yes) < 0.5) does. 'choose': the other answers found (the "
        "last hop's, Self-Ask's own, the other chains'; no bridge) are judged, and the best that fits replaces it. 'go_on': a "
        "chain of one hop that asked only part of the question goes one step further, once, and is answered again. 'both': "
        "choose, else go on. 'escalate': escalate_llm answers from the same path and evidence, judges both answers, and keeps "
        "the one it finds fits better.", json_schema_extra=group(reads="asu"))
    drop_country: bool = Field(False, description="A final answer that ends with a country drops it (\"Munich, Germany\" -> "
        "\"Munich\"), unless the question asks for a country, nation or state: a rule, no call.", json_schema_extra=group(reads="sunar"))
    one_answer: bool = Field(True, description="A final answer that lists names (\"Michael Bublé and Josh Groban\") where the "
        "question asks for one keeps the first the pages or samples hold on its own and the question does not name: a rule, no call. Off: as read.", json_schema_extra=group(reads="sunar"))
    page_form: bool = Field(True, description="A final answer the chain's pages do not hold as it is, but hold with a date or ordinal of it "
        "written another usual way (\"22 February 1720\" -> \"February 22, 1720\", \"3rd\" -> \"third\"), takes the pages' way: a rule, no call.", json_schema_extra=group(reads="sunar"))
    # --- Self-Ask and MER ---------------------------------------------------------------------
    replan_below: float = Field(0.0, ge=0.0, le=1.0, description="With hop_support: when the final answer's weakest link (chain_support: "
        "the judge's P(yes) that its hops' pages state their answers and that it answers the question) is below this, the question is "
        "decomposed again, planned at once (the sub-questions in one call, \"Where was #1 born?\", filled in with each hop's answer), and the answer with the stronger weakest link is kept (the first on a tie). 0: off.", json_schema_extra=group(reads="asu"))
    end_loops: bool = Field(False, description="Self-Ask ends when its follow-up goes round the last answer: it asks only who or "
        "what that answer is, or asks of it the previous step's relation again ('the spouse of Selena', then 'the spouse of "
        "Chris Pérez') while the question names that relation once. The last answer is then the final one.", json_schema_extra=group(reads="sunar"))
    max_hops: int = Field(4, ge=1, le=20, description="Most Self-Ask follow-up questions (or planned questions) before the answer is forced.", json_schema_extra=group(common=True))
    chain_check_after: int = Field(0, ge=0, le=20, description="From this many answered hops on, a Self-Ask follow-up that names "
        "none of the answers found so far ends the decomposition (a small model drifts back to the question's own entities "
        "instead of giving the final answer). 0: off, as in the paper.", json_schema_extra=group(reads="sunar"))
    demonstrations: int = Field(0, ge=0, le=10, description="Worked decompositions shown to Self-Ask beside its invented examples: the k of "
        "the pool whose questions are shaped most like this one (names and numbers aside), never the question itself. 0: none, as in the paper.", json_schema_extra=group(reads="sunar", common=True))
    demonstration_pool: str = Field(
        "",
        description="JSON Lines file of worked decompositions ({question, steps: [[follow-up, answer], ...], answer}). "
        "Empty: the shipped pool (the first 100 dev questions' decompositions). Served graphs: SUNAR_DEMONSTRATION_POOL "
        "in the server's environment.",
        json_schema_extra=group(reads="sunar", env="SUNAR_DEMONSTRATION_POOL"),
    )
    keep_per_hop: int = Field(0, ge=0, le=100, description="MER's evidence: each sub-question's this-many best documents are kept before the "
        "rest of the hops' evidence is re-ranked against the question. A later hop's answer document rarely names the question's own "
        "entities, so re-ranking alone can drop it. 0: re-rank everything, as the official code does.", json_schema_extra=group(reads="sunar"))
    max_tokens: int = Field(256, ge=1, le=4096, description="Most tokens the LLM may generate per call.")
    structured_output: bool = Field(
        True,
        description="Decode every reply the product reads under its JSON schema, so a small model cannot break "
        "the format: a grammar on the embedded llama.cpp model, 'format' on Ollama, 'response_format' on an "
        "OpenAI-compatible server. Off: the same prompts decoded freely (a reply that breaks the JSON is read as free text).",
    )
    # --- confidence and trust -----------------------------------------------------------------
    confidence_samples: int = Field(
        0, ge=0, le=100, description="Answers sampled to the original question for the final answer's confidence and signals; "
        "0: m, and only when read (by the calibration in use, or as the agreement shown where none applies)."
    )
    answer_likelihood: bool = Field(
        False,
        description="Also read the answer's log-likelihood given the question and its evidence (one likelihood "
        "call; the embedded model can, Ollama cannot) as a signal of trust.",
    )
    calibration: str = Field(
        "auto",
        description="How the confidence shown becomes a probability that the answer is right: a calibration file "
        "from 'sunar calibrate', 'auto' (a shipped one fitted for this graph, LLM, settings and corpus, if any), "
        "or 'off'. Where none applies, the answer says why and shows the sampled answers' agreement instead. "
        "Served graphs: SUNAR_CALIBRATION in the server's environment.",
        json_schema_extra=group(env="SUNAR_CALIBRATION", common=True),
    )
    min_trust: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="Selective answering: below this calibrated probability of being right, the reply is "
        "'I don't know', with the best guess and why (0: always answer). 'sunar calibrate' prints the level "
        "that kept at most alpha of its answers wrong.",
        json_schema_extra=group(common=True),
    )
    llm_cache: str = Field(
        "",
        description="SQLite file caching LLM calls by (model, prompt, parameters, sample index); a call made "
        "before is read from it. Empty: no cache. 'sunar eval' keeps one per output directory. Served graphs: "
        "SUNAR_LLM_CACHE in the server's environment.",
        json_schema_extra=group(env="SUNAR_LLM_CACHE", common=True),
    )

    def check(self) -> None:
        """The model choices by their form and the calibration file (:func:`sunar.models.specs.check_specs`),
        so a typo is one line before anything is loaded; an injected LLM's name is its own."""
        check_specs(self.values(), injected=INJECTED_LLM.get())

    def reply_schema(self, schema: dict[str, Any]) -> dict[str, Any] | None:
        """A reply's JSON schema, as the LLM is asked to decode under it (None: decode freely)."""
        return schema if self.structured_output else None


#: The fields only SUNAR's graphs (Self-Ask among them) read: NAR, the decomposition, the hop reader,
#: the chains and MER. A baseline's configuration has them and ignores them.
SUNAR_ONLY = frozenset(fields_where(Configuration, "reads"))
#: What only a graph with ASU reads (batch sampling, rescoring; the hop's samples and the chains they
#: branch into; the judge and what a doubted answer does), and what only MER reads.
ASU_FIELDS = frozenset(fields_where(Configuration, "reads", "asu"))
MER_FIELDS = frozenset(fields_where(Configuration, "reads", "mer"))
