"""One typed configuration for the whole product, resolved and checked in one place.

:class:`Configuration` is every graph's ``context_schema``, so LangGraph Studio shows each knob
with its default, range and description (the paper's symbols b, c, m, k, l are in them). Every
entry point builds it the same way, through pydantic validation of the values the caller gave:

- the CLI (``--llm``, ``--profile``, ``--set FIELD=VALUE``) and ``sunar eval`` call
  :meth:`Configuration.resolve`;
- LangGraph (Studio, the API, ``graph.invoke(..., context=...)``) builds it from the run's
  context, and nodes read it with :meth:`Configuration.from_runnable_config`, which also takes the
  ``configurable`` section of a ``RunnableConfig`` (Python callers).

Whatever the entry point, a bad value is one :class:`~sunar.errors.ConfigurationError` line
("configuration: rescoring must be one of paper, official (got 'both')"), and the profile is
applied the same way: the ``cpu`` profile's values for the fields the caller did not set, when
the LLM is the embedded CPU model (``profile="auto"``).

The graphs the servers serve take a client's configuration as their context, whose policy lives
with them (:mod:`sunar.served`): a remote client sets the algorithm's bounded numbers and choices,
and the fields naming a path, a URL or a model come from the server's environment.
"""

from __future__ import annotations

import functools
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from sunar.errors import ConfigurationError
from sunar.models.openai_compat import DEFAULT_OPENAI_URL
from sunar.models.providers import resolve_llm

#: Smaller settings for the embedded CPU model (a 1.5B model at ~12 tokens/s): fewer samples and a
#: smaller budget keep a question to minutes instead of an hour. The ``paper`` profile is the
#: field defaults.
CPU_PROFILE: dict[str, Any] = {
    "batch_size": 8,
    "budget": 16,
    "samples": 3,
    "neighbours": 5,
    "evidence": 5,
    "first_stage_depth": 50,
    "max_hops": 3,
    "chain_check_after": 2,
    "max_tokens": 128,
    "gensco_pool": 10,
    "gensco_candidates": 5,
    # RA-ISF's judges as measured on dev questions 101-140 (benchmarks/RESULTS.md): the 1.5B model
    # answered 1 of 40 from memory and its self-knowledge judge said yes to 22, so it is asked to be
    # surer than any margin seen; its relevance judge is at chance and the scorer's score is not
    # (1.36 is on the hybrid scorer's scale, the offline default; another scorer needs its own)
    "ra_isf_relevance": "scorer",
    "relevance_threshold": 1.36,
    "self_knowledge_threshold": 1.0,
    # one passage about the question's subject is relevant to a two-hop question yet one hop short
    # (the scorer's judge let RA-ISF answer 28 of 40 dev questions at once, 1 of them right)
    "ra_isf_min_relevant": 2,
    # With m=3 samples and two batches per sub-question, the paper's score / s halves a whole batch
    # on one dissenting sample, and a batch that confidently answers off-topic then outranks the
    # gold one. The official code's contradiction penalty keeps Recall@10 (benchmarks/RESULTS.md).
    "rescoring": "official",
}
PROFILES: dict[str, dict[str, Any]] = {"paper": {}, "cpu": CPU_PROFILE}

#: Keys LangGraph itself puts beside the configuration in a run's ``configurable``/``context``.
LANGGRAPH_KEYS = frozenset(["thread_id", "checkpoint_id", "checkpoint_ns", "checkpoint_map", "run_id", "assistant_id", "graph_id", "user_id", "cron_id"])

def _runtime_context() -> Any:
    """The LangGraph runtime context of the node being run, or None outside a graph."""
    try:
        from langgraph.runtime import get_runtime

        return get_runtime().context
    except Exception:  # not inside a LangGraph run
        return None


@functools.cache
def _auto_llm() -> str:
    """What ``llm="auto"`` means in this process (decided once: the Ollama probe takes a moment)."""
    return resolve_llm("auto")[0]


def own_keys(data: Any) -> Any:
    """A configuration's values without the keys LangGraph puts beside them."""
    if isinstance(data, dict):
        return {k: v for k, v in data.items() if k not in LANGGRAPH_KEYS and not str(k).startswith("__")}
    return data


class Checked(BaseModel):
    """A model whose bad values are one :class:`ConfigurationError` line (LangGraph builds the
    context this way from what Studio and API clients send)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=False)

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise ConfigurationError(_one_line(exc, type(self))) from None


class Configuration(Checked):
    """Settings of a SUNAR run. Defaults are the paper's values (the ``paper`` profile)."""

    # --- models -------------------------------------------------------------------------------
    llm: str = Field(
        "auto",
        description="Generative LLM: 'ollama:<model>' (e.g. ollama:llama3.1, ollama:mistral), "
        "'embedded:<name>' (llama.cpp, qwen2.5-1.5b or qwen2.5-0.5b, shipped as PyPI packages), 'openai:<model>' "
        "(any OpenAI-compatible server, at openai_base_url), "
        "or 'auto' (Ollama llama3.1 when its server answers and has the model, else embedded). "
        "Served graphs: SUNAR_LLM in the server's environment.",
    )
    profile: Literal["auto", "paper", "cpu"] = Field(
        "auto",
        description="Defaults for the fields not set: 'paper' (the paper's values), 'cpu' (smaller "
        "budget, fewer samples: minutes per question on a CPU), or 'auto' (cpu with the embedded "
        "model, paper otherwise). Resolved to 'paper' or 'cpu'.",
    )
    scorer: str = Field(
        "auto",
        description="Scorer of NAR batches (the paper's cross-encoder): 'cross-encoder:<name or path>', "
        "'hybrid', 'splade', 'dense', or 'auto' (the paper's nreimers/mmarco-mMiniLMv2-L12-H384-v1 "
        "when cached, else the measured best offline one). Served graphs: SUNAR_SCORER in the server's environment.",
    )
    nli: str = Field(
        "auto",
        description="Entailment model for semantic sets: 'hf:<name or path>' (an MNLI classifier such as "
        "microsoft/deberta-large-mnli), 'llm' (the LLM as a few-shot judge), or 'auto' "
        "(roberta-large-mnli / deberta-large-mnli when cached, else 'llm'). Served graphs: SUNAR_NLI in the server's environment.",
    )
    openai_base_url: str = Field(
        DEFAULT_OPENAI_URL,
        description="The OpenAI-compatible server an 'openai:<model>' LLM is asked on (llama.cpp's server, "
        "LM Studio, vLLM, Ollama's /v1, LocalAI). Served graphs: SUNAR_OPENAI_BASE_URL in the server's environment.",
    )
    # --- index --------------------------------------------------------------------------------
    index_dir: str = Field(
        "",
        description="Index directory built by 'sunar index'. Empty: the bundled demo index. "
        "Served graphs: SUNAR_INDEX_DIR in the server's environment.",
    )
    chroma_url: str = Field(
        "",
        description="Chroma server URL (client/server mode). Empty: the embedded store. "
        "Served graphs: SUNAR_CHROMA_URL in the server's environment.",
    )
    # --- NAR (Algorithm 1) --------------------------------------------------------------------
    first_stage: Literal["bm25", "dense", "fused"] = Field(
        "fused",
        description="First-stage retriever R: sparse BM25 (the paper uses sparse SPLADE), dense (the index's "
        "embeddings in Chroma), or fused (reciprocal rank fusion of the two; it finds the most gold paragraphs "
        "on the dev data, benchmarks/RESULTS.md).",
    )
    first_stage_depth: int = Field(100, ge=1, le=1000, description="Depth of the first-stage ranking R per sub-question.")
    batch_size: int = Field(16, ge=1, le=1000, description="b: documents scored per NAR batch.")
    budget: int = Field(100, ge=1, le=10000, description="c: most documents scored per sub-question (NAR stops at |R+| >= c).")
    neighbours: int = Field(10, ge=0, le=1000, description="k: graph neighbours added to N per scored document.")
    evidence: int = Field(10, ge=1, le=100, description="l: top documents of R+ kept as a sub-question's evidence and for MER.")
    nar_patience: int = Field(
        0,
        ge=0,
        le=100,
        description="NAR early stop: end a sub-question's NAR loop when the last this-many batches hold none of "
        "the top l documents of R+ (their scores fell below the evidence already found). 0: off, "
        "as in the paper, which scores until the budget c is spent.",
    )
    # --- answer sampling and uncertainty ------------------------------------------------------
    samples: int = Field(10, ge=1, le=100, description="m: answers sampled from the LLM per NAR batch.")
    temperature: float = Field(0.3, ge=0.0, le=2.0, description="Sampling temperature of the m answers.")
    asu_skip_outranked: bool = Field(
        True,
        description="Sample no answers for a batch whose best score is already below the l-th best document found "
        "for the sub-question: rescoring only lowers scores, so its answers could not change the evidence. "
        "Off: every batch is sampled, as in the paper.",
    )
    rescoring: Literal["paper", "official"] = Field(
        "paper",
        description="'paper': score / s (s = number of semantic sets). 'official': the official code's "
        "penalty from contradicting answer pairs.",
    )
    # --- uncertainty that acts on the reasoning ------------------------------------------------
    asu_batches: bool = Field(
        True,
        description="The paper's ASU: m answers sampled per NAR batch, their semantic sets dividing the batch's scores. "
        "Off: NAR scores batches without sampling (the hops' own samples still steer the chains).",
    )
    hop_samples: int = Field(
        0,
        ge=0,
        le=100,
        description="Answers sampled at each hop beside its greedy answer, from the hop's own evidence (the same "
        "prompt, so the model reads it once); their semantic sets are the hop's uncertainty, which branches "
        "the chain (branch_width). 0: none.",
    )
    branch_width: int = Field(
        1,
        ge=1,
        le=5,
        description="An uncertain hop (its answers fall into more than one semantic set) keeps up to this many "
        "candidate answers, each as a chain of its own with its own follow-ups and retrieval. 1: one chain.",
    )
    max_chains: int = Field(3, ge=1, le=10, description="Most chains one question may follow (the budget of branching).")
    requery: bool = Field(
        False,
        description="An uncertain hop (its answers fall into more than one semantic set) is retrieved again, once: a "
        "fresh first stage for its sub-question with its candidate answers appended, NAR over the documents not "
        "scored yet, and the hop answered again from both rounds' evidence.",
    )
    grounded_answers: bool = Field(
        False,
        description="A hop's answer is a span copied from its own evidence (decoded under a grammar of the "
        "evidence's names, dates and numbers, or 'unknown'), so the model cannot name what its documents do not.",
    )
    grounded_final: bool = Field(
        False,
        description="MER's answer is copied, under a grammar, from the hops' answers, 'yes'/'no', the names in the "
        "question or the spans of its evidence (or 'unknown'): a short answer, never a sentence.",
    )
    final_vote: bool = Field(
        False,
        description="The final answer is voted on: MER's answer (one vote) and each chain's answer (its "
        "probability, the product of its hops' shares), pooled by bidirectional entailment.",
    )
    short_answer: bool = Field(
        False,
        description="The final answer is cut to the shortest part of it that answers the question (a name, place, "
        "date or number without a title, the region after a city, or the rest of a sentence): one short call, "
        "decoded as one of the answer's own spans, made only when the answer has more than one.",
    )
    # --- Self-Ask and MER ---------------------------------------------------------------------
    max_hops: int = Field(4, ge=1, le=20, description="Most Self-Ask follow-up questions before the answer is forced.")
    chain_check_after: int = Field(
        0,
        ge=0,
        le=20,
        description="From this many answered hops on, a Self-Ask follow-up that names none of the answers found "
        "so far ends the decomposition (a small model drifts back to the question's own entities "
        "instead of giving the final answer). 0: off, as in the paper.",
    )
    demonstrations: int = Field(
        0,
        ge=0,
        le=10,
        description="Worked decompositions shown to Self-Ask beside its invented examples: the k of the pool whose "
        "questions are shaped most like this one (names and numbers aside), never the question itself. 0: none, as in the paper.",
    )
    demonstration_pool: str = Field(
        "",
        description="JSON Lines file of worked decompositions ({question, steps: [[follow-up, answer], ...], answer}). "
        "Empty: the shipped pool (the first 100 dev questions' decompositions). Served graphs: SUNAR_DEMONSTRATION_POOL "
        "in the server's environment.",
    )
    keep_per_hop: int = Field(
        0,
        ge=0,
        le=100,
        description="MER's evidence: each sub-question's this-many best documents are kept before the rest of "
        "the hops' evidence is re-ranked against the question. A later hop's answer document "
        "rarely names the question's own entities, so re-ranking alone can drop it. 0: re-rank "
        "everything, as the official code does.",
    )
    max_tokens: int = Field(256, ge=1, le=4096, description="Most tokens the LLM may generate per call.")
    structured_output: bool = Field(
        True,
        description="Decode every reply the product reads under its JSON schema, so a small model cannot break "
        "the format: a grammar on the embedded llama.cpp model, 'format' on Ollama, 'response_format' on an "
        "OpenAI-compatible server. Off: the same prompts decoded freely (a reply that breaks the JSON is read as free text).",
    )
    # --- other systems: GenSco and RA-ISF ------------------------------------------------------
    gensco_pool: int = Field(
        20,
        ge=1,
        le=100,
        description="GenSco: passages in a question's fixed candidate pool when the input gives none (pool_ids): the "
        "first stage of the question, this deep (the paper's pools hold 10-20 passages).",
    )
    gensco_candidates: int = Field(
        20,
        ge=1,
        le=100,
        description="GenSco: candidate passages the scorer LLM compares per step: the pool's passages not chosen yet, "
        "pre-ranked by the scorer against the sub-question, top ones (the whole pool, as in the paper, when it is no larger).",
    )
    likelihood_llm: str = Field(
        "",
        description="GenSco's scorer LLM, which must return token log-probabilities of a given text "
        "('embedded:<name>' can; Ollama cannot). Empty: the generative LLM. Served graphs: SUNAR_LIKELIHOOD_LLM "
        "in the server's environment.",
    )
    ra_isf_depth: int = Field(3, ge=0, le=10, description="RA-ISF: deepest recursion of sub-questions (D_th); past it a sub-question is 'unknown'.")
    ra_isf_relevance: Literal["llm", "scorer"] = Field(
        "llm",
        description="RA-ISF: who judges a passage's relevance: 'llm' (the LLM asked yes or no; the paper's judge is "
        "a fine-tuned 7B model) or 'scorer' (the scorer's score, a relevance model, without an LLM call).",
    )
    relevance_threshold: float = Field(
        0.0,
        ge=-50.0,
        le=50.0,
        description="RA-ISF: a passage is relevant when the judge's margin is above this: the LLM's logp(yes) - logp(no) "
        "(0: the argmax) or the scorer's score (benchmarks/bench_ra_isf_judges measures both).",
    )
    ra_isf_min_relevant: int = Field(
        1,
        ge=1,
        le=20,
        description="RA-ISF: the original question is answered from its relevant passages only when at least this many "
        "are relevant, else decomposed; a sub-question needs one. The paper's appendix judges the passages relevant and "
        "sufficient, which one passage about a multi-hop question's subject is not (1: the paper's rule).",
    )
    self_knowledge_threshold: float = Field(
        0.0,
        ge=-50.0,
        le=50.0,
        description="RA-ISF: the question is answered from memory when the self-knowledge judge's logp(yes) - logp(no) "
        "is above this (0: the argmax).",
    )
    confidence_samples: int = Field(
        0, ge=0, le=100, description="Answers sampled to the original question for the final answer's confidence and signals; 0: m."
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
    )
    min_trust: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="Selective answering: below this calibrated probability of being right, the reply is "
        "'I don't know', with the best guess and why (0: always answer). 'sunar calibrate' prints the level "
        "that kept at most alpha of its answers wrong.",
    )
    llm_cache: str = Field(
        "",
        description="SQLite file caching LLM calls by (model, prompt, parameters, sample index); a call made "
        "before is read from it. Empty: no cache. 'sunar eval' keeps one per output directory. Served graphs: "
        "SUNAR_LLM_CACHE in the server's environment.",
    )

    @model_validator(mode="before")
    @classmethod
    def _profiled(cls, data: Any) -> Any:
        """LangGraph's own keys dropped, and the profile applied to the fields not given."""
        data = own_keys(data)
        return _with_profile(data) if isinstance(data, dict) else data

    @classmethod
    def resolve(cls, values: dict[str, Any] | None = None) -> Configuration:
        """The configuration for ``values`` (field -> value, strings allowed as from ``--set``);
        unknown fields and bad values are a :class:`ConfigurationError`."""
        try:
            return _resolve(_frozen(values or {}))
        except TypeError:  # an unhashable value (a list, a dict): validation says what is wrong
            return cls(**(values or {}))

    @classmethod
    def from_runnable_config(cls, config: RunnableConfig | None = None) -> Configuration:
        """The run's configuration, inside a node: the run's context (LangGraph Studio, the API,
        ``invoke(context=...)``), then the known fields of ``configurable`` (which win). When the
        caller injected ready :class:`~sunar.resources.Resources` and named no LLM, the injected
        LLM decides the profile. In a served graph's run (its context a client's, :mod:`sunar.served`),
        the operator's fields come from the environment and a client's may not name them."""
        values: dict[str, Any] = {}
        context = _runtime_context()
        if hasattr(context, "served_values"):  # a served graph's run: the server's policy (sunar.served)
            return cls.resolve(context.served_values((config or {}).get("configurable") or {}))
        if isinstance(context, Configuration):
            values.update(context.given())
        elif isinstance(context, dict):
            values.update(context)
        configurable = (config or {}).get("configurable") or {}
        values.update((k, v) for k, v in configurable.items() if k in cls.model_fields)
        injected = getattr(getattr(configurable.get("resources"), "llm", None), "name", None)
        if injected and "llm" not in values:
            values["llm"] = injected
        return cls.resolve(values)

    @classmethod
    def as_recorded(cls, recorded: dict[str, Any]) -> dict[str, Any]:
        """Every field of a run that recorded these values (say, a calibration's runs): its known
        fields as given, a field it did not record (a newer switch) at its default."""
        return cls.resolve({k: v for k, v in recorded.items() if k in cls.model_fields}).values()

    def reply_schema(self, schema: dict[str, Any]) -> dict[str, Any] | None:
        """A reply's JSON schema, as the LLM is asked to decode under it (None: decode freely)."""
        return schema if self.structured_output else None

    def given(self) -> dict[str, Any]:
        """The fields set explicitly or by the profile (not left at the paper's default)."""
        return {name: getattr(self, name) for name in self.model_fields_set}

    def values(self) -> dict[str, Any]:
        """Every field, as a plain dict (what a run records, and a ``configurable`` section)."""
        return self.model_dump()


def _with_profile(data: dict[str, Any]) -> dict[str, Any]:
    """The profile's values for the fields ``data`` does not set; ``profile`` resolved."""
    profile = data.get("profile", "auto")
    if profile == "auto":
        llm = data.get("llm", "auto")
        if llm == "auto":
            llm = data["llm"] = _auto_llm()
        profile = "cpu" if isinstance(llm, str) and llm.startswith("embedded:") else "paper"
    if profile not in PROFILES:
        return data  # validation reports it
    return {**PROFILES[profile], **data, "profile": profile}


def _frozen(values: dict[str, Any]) -> tuple[tuple[str, str, Any], ...]:
    return tuple(sorted((str(k), type(v).__name__, v) for k, v in values.items()))


@functools.lru_cache(maxsize=512)
def _resolve(items: tuple[tuple[str, str, Any], ...]) -> Configuration:
    return Configuration(**{k: v for k, _, v in items})


def _one_line(exc: ValidationError, model: type[BaseModel]) -> str:
    """pydantic's errors as one line a user can act on."""
    parts = []
    for error in exc.errors():
        field = ".".join(str(p) for p in error.get("loc") or ()) or "configuration"
        kind, ctx, got = error.get("type", ""), error.get("ctx") or {}, error.get("input")
        if kind == "extra_forbidden":
            fields = [name for name in model.model_fields if name not in getattr(model, "operator_fields", ())]
            parts.append(f"unknown field '{field}' (fields: {', '.join(fields)})")
            continue
        if kind == "literal_error":
            choices = ", ".join(a.strip("'") for a in str(ctx.get("expected", "")).replace(" or ", ", ").split(", "))
            rule = f"must be one of {choices}"
        elif kind in ("int_parsing", "int_type", "int_from_float"):
            rule = "must be a whole number"
        elif kind in ("float_parsing", "float_type", "finite_number"):
            rule = "must be a number"
        elif kind in ("bool_parsing", "bool_type"):
            rule = "must be true or false"
        elif kind == "string_type":
            rule = "must be text"
        elif kind in ("greater_than_equal", "less_than_equal"):
            field_info = model.model_fields.get(field)
            bounds = {type(m).__name__: m for m in (field_info.metadata if field_info else [])}
            low, high = getattr(bounds.get("Ge"), "ge", None), getattr(bounds.get("Le"), "le", None)
            rule = f"must be from {low} to {high}" if low is not None and high is not None else error.get("msg", "").lower()
        else:
            rule = str(error.get("msg", "is not valid")).lower()
        parts.append(f"{field} {rule} (got {got!r})")
    return "configuration: " + "; ".join(parts)
