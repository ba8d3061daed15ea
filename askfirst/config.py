"""Typed run configuration: one YAML file, every field overridable as ``section.key=value``.

Unknown keys are errors (a typo must not silently fall back to a default), and the resolved
config is written into each run's folder so the run can be reproduced.
"""

from __future__ import annotations

import logging
import os
from functools import cache
from importlib import resources
from pathlib import Path
from types import UnionType
from typing import TYPE_CHECKING, Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator

from askfirst.retrieval.lexical import LexicalKind

logger = logging.getLogger(__name__)


class ConfigError(ValueError):
    """A configuration file or override that cannot be used; the message says what to change."""


def operator_only(safe: str | None = None) -> dict:
    """``Field`` keywords marking a setting only the operator's own config and flags may set (``askfirst.trust``).

    Args:
        safe: A kind of value a run folder may still set (``askfirst.trust.SAFE_VALUES``): ``local-model``,
            ``named-source``, ``compiled-program``; ``location`` for a setting the reader always sets itself.
    """
    return {"json_schema_extra": {"trust": "operator"} | ({"safe": safe} if safe else {})}


class ConfigSection(BaseModel):
    """A config section: unknown keys are errors, and assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class LMConfig(ConfigSection):
    """Which language model runs every DSPy step."""

    model: str = Field("local/qwen2.5-coder-1.5b-instruct", description="'local/<name>' for the offline llama.cpp model, else any litellm model string.",
                       **operator_only("local-model"))
    api_base: str | None = Field(None, description="The LM server's URL, for litellm model strings.", **operator_only())
    api_key_env: str | None = Field(None, description="Name of the environment variable holding the API key.", **operator_only())
    model_path: str | None = Field(None, description="Explicit GGUF file for a local model (still checked against its pinned SHA-256 unless sha256 is set).",
                                   **operator_only())
    sha256: str | None = Field(None, description="Expected SHA-256 of model_path, for a GGUF file that is not in the registry.", **operator_only())
    temperature: float = Field(0.0, ge=0, description="Sampling temperature (0: the same reply for the same prompt).")
    max_tokens: int = Field(384, ge=1, description="Most tokens one reply may have.")
    n_ctx: int = Field(4096, ge=512, description="Local models: the context window llama.cpp allocates, in tokens.")
    n_threads: int = Field(2, ge=1, description="Local models: CPU threads llama.cpp uses.")
    max_text_chars: int = Field(800, ge=16, le=1000, description="Local models: longest free-text output field (a grammar bound, so a looping model still closes its JSON; llama.cpp accepts at most 1000).")
    parse_retries: int = Field(2, ge=0, description="Extra attempts when an LM reply cannot be parsed.")
    cache: bool = Field(True, description="Answer a repeated call from DSPy's cache, so a rerun or resume costs no LM time.")
    adapter: Literal["json", "chat"] = Field("json", description="DSPy's adapter: JSON output (schema-constrained on local models) or chat fields.")


class RetrieverConfig(ConfigSection):
    """The hybrid BM25 + dense retriever over Qdrant."""

    qdrant_path: str | None = Field(None, description="Folder for Qdrant's embedded local mode; default <runs_dir>/qdrant.", **operator_only())
    qdrant_url: str | None = Field(None, description="A Qdrant server URL; when set, used instead of the local folder.", **operator_only())
    embedded: Literal["qdrant-client", "qdrant-edge"] = Field(
        "qdrant-edge", description="The embedded store's engine: qdrant-edge-py (Qdrant's engine in-process, memory-mapped, for "
        "large corpora) or qdrant-client's local mode (brute force, for up to ~20k passages).", **operator_only())
    store_memory: Literal["cold", "warm"] = Field(
        "cold", description="qdrant-edge: 'cold' memory-maps a new collection's indexes (opens fast), 'warm' reads them in on open; "
        "fixed when the collection is built.")
    embedding_model: str = Field("all-MiniLM-L6-v2", description="What embeds passages and queries: a packaged or local "
                                 "sentence-transformers model, or a litellm embedding model string (e.g. openai/text-embedding-3-small).",
                                 **operator_only())
    embedding_device: Literal["auto", "cpu", "cuda", "mps"] = Field(
        "auto", description="Where a local embedding model runs; auto takes a GPU (CUDA, then Apple's MPS) when there is one.",
        **operator_only())
    embedding_api_base: str | None = Field(None, description="An embedding server's URL (TEI, vLLM, Infinity, any /v1/embeddings), "
                                           "reached through litellm.", **operator_only())
    embedding_api_key_env: str | None = Field(None, description="The environment variable holding the embedding server's key.",
                                              **operator_only())
    embedding_concurrency: int = Field(8, ge=1, le=256, description="Embedding requests in flight at once against a server.")
    embedding_timeout: float = Field(60.0, gt=0, description="Seconds one embedding request may take before it is retried.")
    embedding_retries: int = Field(3, ge=0, le=10, description="Extra attempts of a failed embedding request, with exponential backoff.")
    mode: Literal["hybrid", "bm25", "dense"] = Field("hybrid", description="Search BM25 and dense embeddings fused by RRF, or one of them.")
    lexical: LexicalKind = Field(
        "auto", description="BM25 engine: the sparse vectors in Qdrant, an on-disk bm25s index, or rank-bm25 in memory; "
                            "auto = qdrant with a server URL, bm25s with the local store (askfirst.retrieval.lexical).")
    per_retriever_k: int = Field(10, ge=1, description="Hits taken from BM25 and from dense before fusion.")
    rrf_k: int = Field(60, ge=1, description="Reciprocal-rank-fusion constant (Cormack et al., 2009).")
    chunk_words: int = Field(180, ge=20, description="Longest chunk, in words; longer documents are split on sentence boundaries.")
    chunk_overlap_sentences: int = Field(1, ge=0, description="Sentences each passage repeats from the end of the one before it.")
    batch_size: int = Field(64, ge=1, description="Passages embedded and written per batch (the unit an interrupted build resumes from).")


class ProgramConfig(ConfigSection):
    """Which program runs and the limits and routing settings every program shares."""

    kind: str = Field("notes_rag", description="Which registered program runs (`askfirst programs` lists them): notes_rag, clarion, urasys, r2rag, mafrag, ...")
    evidence_k: int = Field(5, ge=1, description="Passages in the final evidence set.")
    rerank_candidates: int = Field(10, ge=1, description="Pooled candidates shown to the re-ranker.")
    passage_chars: int = Field(600, ge=50, description="Passage text shown to the LM is cut to this many characters.")
    max_question_chars: int = Field(4000, ge=1, description="Longer user turns are cut (and the cut is reported).")
    history_turns: int = Field(6, ge=0, description="Earlier conversation turns shown to the LM.")
    unanswerable_route: Literal["idk", "clarify"] = Field("idk", description="'clarify' reproduces the SemEval system, which asked for clarification on UNANSWERABLE.")
    answer_threshold: float | None = Field(None, ge=0, le=1, description="Probabilistic routing: answer when P(answerable) >= this, else 'I don't know' (tune with `askfirst tune-threshold`).")
    label_logprobs: bool = Field(True, description="Take the classifier's confidence and P(answerable) from the label's log-probabilities where "
                                 "the LM measures them (the local llama.cpp engine does), not from the confidence it writes.")
    compiled: str | None = Field(None, description="A compiled program to load: a compile run folder, its program.json, or "
                                 "'askfirst:<name>' shipped in the package; null or 'none' runs the uncompiled program.",
                                 **operator_only("compiled-program"))

    @field_validator("kind")
    @classmethod
    def _registered(cls, kind: str) -> str:
        from askfirst.programs.registry import get_spec

        get_spec(kind)  # an unknown kind is an error naming the registered programs
        return kind

    @field_validator("compiled")
    @classmethod
    def _none_is_uncompiled(cls, compiled: str | None) -> str | None:
        # "none" must be sayable on the command line, where a shipped default is switched off for an ablation.
        return None if compiled is None or compiled.strip().lower() in ("", "none") else compiled


class DataConfig(ConfigSection):
    """What to index and what to ask."""

    corpus: str = Field("demo", description="'demo', a named benchmark corpus ('mtrag', 'mtrag:cloud'), a JSONL file ({_id,title,text}) or a folder of .txt/.md files.",
                        **operator_only("named-source"))
    corpus_scope: Literal["all", "questions"] = Field(
        "all", description="'questions': index only the documents the selected questions cite as gold (after limit and split), "
        "in a collection of their own: a small, easier corpus for LM-costly indexing (URASys); say so when reporting.")
    collection: str | None = Field(None, description="Qdrant collection name (letters, digits, _ and -); default derived from the corpus (and the scope).",
                                   **operator_only())
    questions: str = Field("demo", description="'demo', a named benchmark set ('mtrag', 'mtrag:cloud'), or a question-set JSONL in askfirst's format.",
                           **operator_only("named-source"))
    offset: int = Field(0, ge=0, description="Skip the first N questions (after the shuffle, before the limit): with limit, one chunk of a set.")
    limit: int | None = Field(None, ge=1, description="Only the first N questions (applied before data.split).")
    per_label: int | None = Field(None, ge=1, description="Only the first N questions of each answerability label (after the shuffle, "
                                  "before the limit): a sample that holds a set's rare labels, e.g. MTRAG synthetic's 20 UNANSWERABLE of 1,181.")
    ids: list[str] | None = Field(None, description="Only the questions with these ids, of those the other settings select (after "
                                  "data.split): re-run the tasks a report names. An id not among them is an error.")
    shuffle: bool = Field(False, description="Shuffle the question set with `seed` before the limit, so the first N are a random sample "
                          "(benchmark files are often sorted, e.g. every unanswerable question last).")
    split: Literal["all", "train", "validation"] = Field("all", description="Which half (by conversation, as compile splits) eval/ablate use.")
    shared_data_dir: str | None = Field(None, description="Where ../shared/data lives; ASKFIRST_DATA_DIR overrides.", **operator_only())

    @field_validator("collection")
    @classmethod
    def _a_name(cls, collection: str | None) -> str | None:
        from askfirst.retrieval.safe_paths import check_collection_name

        return None if collection is None else check_collection_name(collection)


class EvalConfig(ConfigSection):
    """What ``eval`` scores beyond routes, answers and retrieval."""

    hm: bool = Field(False, description="Also run MTRAGEval's judges and report RL_F, RB_llm, RB_agg and their IDK-conditioned HM.")
    rb_agg_similarity: Literal["lexical", "minilm"] = Field(
        "lexical", description="What stands in for BERTScore in RB_agg (offline): 'lexical' is MTRAG's own fallback (token recall vs the "
        "reference; token precision vs the passages), 'minilm' all-MiniLM-L6-v2 cosine; recorded with every judged score.")
    threads: int = Field(1, ge=1, le=256, description="Questions answered concurrently (DSPy's ParallelExecutor), also by ablate. "
                         "Raise it for an LM server; keep 1 for the in-process llama.cpp LM: it answers one call at a time, and two "
                         "LM jobs on 2 cores are 10-30x slower, not 2x (measured).")
    retry_errors: bool = Field(True, description="On --resume, ask again the questions whose record is a failure (route 'error', often transient); false keeps them.")
    ambiguity: bool = Field(False, description="Ambiguous questions: Disambig-F1 and the 0-5 LLM-as-judge scores (ASQA, AmbigNQ), and whether a clarification asks for the missing info (URASys ambiguous sets); on judge_lm.")
    short_span: bool = Field(False, description="SQuAD's EM and F1 on the short answer span judge_lm extracts from each answering reply (questions with gold answers, and UNANSWERABLE ones as SQuAD 2.0 scores them).")


class CompileConfig(ConfigSection):
    """Prompt optimisation of the whole program (every predictor) with GEPA or MIPROv2, or demonstrations alone."""

    optimizer: Literal["gepa", "miprov2", "bootstrap", "rewrite_demos", "policy"] = Field(
        "gepa", description="gepa or miprov2 rewrite instructions (and demos); bootstrap only adds demos; rewrite_demos picks the "
        "standalone rewrite's demos from MTRAG's human rewrites; policy only fits the askfirst route policy (refitted after any other).")
    max_demos: int = Field(2, ge=0, description="bootstrap (at least 1) and miprov2: bootstrapped demonstrations per predictor (each adds "
                           "its passages to every prompt); miprov2 with 0 optimises instructions only.")
    demos_by_label: bool = Field(False, description="bootstrap: take the trainset in turn by answerability label and keep only "
                                 "runs whose every label is the gold one, so the demos show each label right.")
    objective: Literal["recall", "outcome", "both", "hm", "str_em", "gated_recall"] = Field(
        "recall", description="What the optimiser maximises: recall@k, the route's outcome, their mean ('both'), the IDK-conditioned "
        "HM, STR-EM, or (rewrite_demos) recall through the retrieval gate.")
    auto: Literal["light", "medium", "heavy"] | None = Field("light", description="Budget preset; set null to use max_metric_calls / max_full_evals.")
    max_metric_calls: int | None = Field(None, ge=1, description="GEPA: explicit metric-call budget (needs auto=null).")
    max_full_evals: int | None = Field(None, ge=1, description="GEPA: budget in full validation passes (needs auto=null).")
    num_trials: int | None = Field(None, ge=1, description="MIPROv2 with auto=null: optimisation trials.")
    num_candidates: int | None = Field(None, ge=1, description="MIPROv2 with auto=null: instruction/demo candidates; rewrite_demos: "
                                       "draws of demonstrations beside the program as it is (default 4).")
    proposer_context: list[Literal["program", "data", "tips", "demos"]] = Field(
        ["program", "data", "tips", "demos"], description="MIPROv2: what its prompt model sees when it proposes an instruction "
        "(a small model's context holds few of them).")
    instruction_guard: bool = Field(True, description="MIPROv2: leave out proposed instructions that are no instruction (a request "
                                    "or question to the user, an apology, under 5 words) before the search; the original is always kept.")
    instruction_candidates: str | None = Field(None, description="MIPROv2: a YAML or JSON file of {step name: [instruction, ...]} "
                                               "(step names as the compile diff names them) added to the prompt model's candidates, "
                                               "for instructions written by hand or by a stronger model than the prompt model.",
                                               **operator_only())
    reflection_lm: LMConfig | None = Field(None, description="GEPA reflection LM / MIPROv2 prompt model; default: lm.")
    train_fraction: float = Field(0.5, gt=0, lt=1, description="Share of the compile's conversations in its trainset; the rest "
                                  "is its valset.")
    split: Literal["all", "train"] = Field(
        "all", description="The questions the compile sees: all the configured ones, or only their training half (by conversation), "
        "so the validation half an eval reports is never seen.")
    recall_k: int = Field(10, ge=1, description="The cut-off of the recall objective (recall@k of the program's ranking).")
    threads: int = Field(1, ge=1, description="Questions the optimiser scores concurrently (keep 1 for the in-process llama.cpp LM).")


class TrackingConfig(ConfigSection):
    enabled: bool = Field(True, description="Record every run in MLflow (params, metrics, artifacts, DSPy traces).")
    tracking_uri: str | None = Field(None, description="Default: MLFLOW_TRACKING_URI, else sqlite under runs_dir.", **operator_only())
    experiment: str = Field("askfirst", description="The MLflow experiment runs are recorded under.")
    traces: bool = Field(True, description="MLflow DSPy autolog: a trace of every program call (modules and LM calls) in the run.")


class BaseConfig(ConfigSection):
    """The sections every run has; ``AskFirstConfig`` adds each registered program's own section to these."""

    runs_dir: str = Field("runs", description="Where run folders, the embedded store and the tracking database are written.",
                          **operator_only("location"))
    seed: int = Field(0, description="Seeds every shuffle, split and optimiser, so a run can be repeated.")
    lm: LMConfig = LMConfig()
    retrieval_lm: LMConfig | None = Field(None, description="LM for the query generator, notes builder and re-ranker; default: lm.")
    judge_lm: LMConfig | None = Field(None, description="LM for the MTRAGEval judges (IDK, clarification, faithfulness, rating); default: lm.")
    retriever: RetrieverConfig = RetrieverConfig()
    program: ProgramConfig = ProgramConfig()
    data: DataConfig = DataConfig()
    eval: EvalConfig = EvalConfig()
    compile: CompileConfig = CompileConfig()
    tracking: TrackingConfig = TrackingConfig()

    @property
    def runs_path(self) -> Path:
        return Path(self.runs_dir).expanduser().resolve()

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False)


@cache
def _full_config_model() -> type[BaseConfig]:
    """``BaseConfig`` plus one section per registered program that declares one (``clarion``, ``urasys``, ...)."""
    from askfirst.programs.registry import specs

    sections = {spec.section: (spec.config_model, Field(default_factory=spec.config_model, description=spec.description))
                for spec in specs().values() if spec.section and spec.config_model is not None}
    return create_model("AskFirstConfig", __base__=BaseConfig, __doc__="The whole run configuration.", **sections)


if TYPE_CHECKING:
    AskFirstConfig = BaseConfig  # for type checkers; at run time it is _full_config_model(), with the program sections


def __getattr__(name: str):
    # Built on first use, not at import: the program packages that contribute sections import this module.
    if name == "AskFirstConfig":
        return _full_config_model()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _field_takes_text(dotted: str) -> bool:
    """Whether the field at ``dotted`` is a string field (its override must not be read as a YAML number)."""
    model: Any = _full_config_model()
    annotation = None
    for part in dotted.split("."):
        fields = getattr(model, "model_fields", {})
        if part not in fields:
            return False  # unknown key: validation reports it
        annotation = fields[part].annotation
        model = annotation
    if get_origin(annotation) is Literal:  # "off", "yes", "no" are labels here, not YAML booleans
        return all(isinstance(arg, str) for arg in get_args(annotation))
    return annotation is str or (get_origin(annotation) in (Union, UnionType) and str in get_args(annotation))


def _parse_value(dotted: str, text: str) -> Any:
    # YAML scalars give the user's intent ("3" -> 3, "false" -> False, "null" -> None), except that a string
    # field keeps the text as written: a SHA-256 of zeros or a numeric-looking name is not a number.
    if text in ("null", "~"):
        return None
    if _field_takes_text(dotted):
        return text
    if text == "":
        return ""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = f" ({exc.problem})" if getattr(exc, "problem", None) else ""
        raise ConfigError(f"override {dotted}={text!r}: the value is not valid YAML{where}; quote it to pass it as text") from None


def _set_dotted(tree: dict, dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    node = tree
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"override {dotted!r}: {part!r} is not a section")
        node = child
    node[parts[-1]] = value


def _format_errors(err: ValidationError, origin: str) -> str:
    lines = [f"invalid configuration ({origin}):"]
    for e in err.errors():
        where = ".".join(str(p) for p in e["loc"])
        if e["type"] == "extra_forbidden":
            lines.append(f"  unknown key {where!r} (see `askfirst config` for the valid keys)")
        else:
            lines.append(f"  {where}: {e['msg']}")
    return "\n".join(lines)


def load_config(path: str | os.PathLike | None = None, *, overrides: list[str] | tuple[str, ...] = ()) -> AskFirstConfig:
    """Load a YAML config (or the defaults) and apply ``section.key=value`` overrides.

    A file may start from another: ``base: <file or built-in name>`` (a path relative to the file's own folder, else a
    built-in config such as ``demo``) is read first, and the file's sections are merged into it key by key.

    Args:
        path: A YAML file; ``None`` uses the built-in defaults.
        overrides: Strings such as ``notes.iterations=1``.

    Raises:
        ConfigError: The file (or a base) is missing, malformed or its own base, a key is unknown, or a value has the wrong type.
    """
    tree: dict = {}
    origin = "defaults"
    if path is not None:
        tree, origin = _read_tree(Path(path)), str(path)
    return config_from_tree(tree, overrides, origin=origin)


MOVED = {  # settings that left the program section, and where they are now
    "iterations": "notes.iterations", "queries_per_iteration": "notes.queries_per_iteration", "notes": "notes.build",
    "reranker": "notes.reranker", "router": "notes.router",
}


def _move_settings(tree: dict, origin: str) -> None:
    """Move the settings of ``MOVED`` in ``tree`` (a config or run folder from before the move) to their new place.

    Raises:
        ConfigError: A setting is given at both places with different values.
    """
    program = tree.get("program")
    for key in [k for k in MOVED if isinstance(program, dict) and k in program]:
        section, name = MOVED[key].split(".")
        value, new = program.pop(key), tree.setdefault(section, {})
        if isinstance(new, dict) and name in new and new[name] != value:
            raise ConfigError(f"{origin}: program.{key} (now {MOVED[key]}) is given at both places, with different values")
        if isinstance(new, dict):
            new.setdefault(name, value)
        logger.warning("%s: program.%s is now %s", origin, key, MOVED[key])


def config_from_tree(tree: dict, overrides: list[str] | tuple[str, ...] = (), *, origin: str) -> AskFirstConfig:
    """The config a mapping holds, with ``section.key=value`` overrides applied; errors name ``origin``.

    Raises:
        ConfigError: An override is malformed, a key is unknown, or a value has the wrong type.
    """
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"override {item!r} must look like section.key=value")
        key, value = item.split("=", 1)
        _set_dotted(tree, key.strip(), _parse_value(key.strip(), value.strip()))
    _move_settings(tree, origin)
    try:
        return _full_config_model().model_validate(tree)
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, origin + (" + overrides" if overrides else ""))) from None


def config_path(name: str | os.PathLike, *, relative_to: Path | None = None) -> Path:
    """The file a config name means: a path (relative to ``relative_to`` if given, else to the working folder), or,
    where no such file exists, the built-in config of that name (``demo``)."""
    path = Path(name)
    if relative_to is not None and not path.is_absolute():
        path = relative_to / path
    builtin = builtin_config_path(str(name))
    return builtin if not path.exists() and builtin.is_file() else path


def read_mapping(path: Path) -> dict | None:
    """The YAML mapping a config file holds (``None`` for an empty file), without following its ``base``.

    Raises:
        ConfigError: The file is not UTF-8 YAML, or holds something other than a mapping.
    """
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from None
    if loaded is not None and not isinstance(loaded, dict):
        raise ConfigError(f"config file {path} must hold a mapping at the top level")
    return loaded


def _read_tree(path: Path, *, reading: tuple[Path, ...] = ()) -> dict:
    """The mapping a config file holds, merged into its ``base`` (recursively) when it names one."""
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}" + (f" (the base of {reading[-1]})" if reading else ""))
    if path.resolve() in reading:
        raise ConfigError(f"config file {path} is its own base: {' -> '.join(map(str, (*reading, path.resolve())))}")
    tree = read_mapping(path) or {}
    base = tree.pop("base", None)
    if base is None:
        return tree
    if not isinstance(base, str):
        raise ConfigError(f"config file {path}: base must be a file or built-in config name, not {base!r}")
    return _merged(_read_tree(config_path(base, relative_to=path.parent), reading=(*reading, path.resolve())), tree)


def _merged(base: dict, tree: dict) -> dict:
    """``base`` with ``tree``'s keys set over it; sections (mappings) are merged key by key, not replaced."""
    merged = dict(base)
    for key, value in tree.items():
        merged[key] = _merged(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) else value
    return merged


def builtin_config_path(name: str) -> Path:
    """Path of a config shipped inside the package (``askfirst/configs/<name>.yaml``)."""
    return Path(str(resources.files("askfirst") / "configs" / f"{name}.yaml"))
