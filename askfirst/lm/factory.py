"""Turn the ``lm`` section of a config into a configured ``dspy.LM``."""

from __future__ import annotations

import os
from pathlib import Path

import dspy

from askfirst.config import AskFirstConfig, LMConfig
from askfirst.lm.local_models import SETUP_HINT, ModelNotFoundError, resolve_local_model

LOCAL_PREFIX = "local/"
LLAMA_CPP_REQUIREMENT = "llama-cpp-python==0.3.36"  # as pinned by the `local` extra


def build_lm(lm: LMConfig, *, seed: int = 0) -> dspy.LM:
    """A ``dspy.LM`` for ``local/<name>`` (llama.cpp, offline) or any litellm model string.

    Raises:
        ModelNotFoundError: A local model whose files are missing or fail their SHA-256 pin.
    """
    common = {"temperature": lm.temperature, "max_tokens": lm.max_tokens, "cache": lm.cache}
    if lm.model.startswith(LOCAL_PREFIX):
        try:
            from askfirst.lm.llama_engine import LlamaCppEngine
            import llama_cpp  # noqa: F401
        except ImportError:
            raise ModelNotFoundError(f"the offline LM needs llama-cpp-python: pip install {LLAMA_CPP_REQUIREMENT} ({SETUP_HINT})") from None
        name = lm.model[len(LOCAL_PREFIX):]
        path, digest = resolve_local_model(name, model_path=lm.model_path, sha256=lm.sha256)
        engine = LlamaCppEngine(path, n_ctx=lm.n_ctx, n_threads=lm.n_threads, seed=seed, max_text_chars=lm.max_text_chars)
        # The hash is part of the model id so DSPy's cache never serves one file's answers for another.
        return dspy.LM(f"{LOCAL_PREFIX}{name}@{digest[:12]}", engine=engine, **common)
    kwargs = dict(common)
    if lm.api_base:
        kwargs["api_base"] = lm.api_base
    if lm.api_key_env:
        key = os.environ.get(lm.api_key_env)
        if not key:
            raise ModelNotFoundError(f"lm.api_key_env names {lm.api_key_env!r}, which is not set in the environment")
        kwargs["api_key"] = key
    return dspy.LM(lm.model, num_retries=3, **kwargs)


def build_adapter(lm: LMConfig) -> dspy.Adapter:
    return dspy.JSONAdapter() if lm.adapter == "json" else dspy.ChatAdapter()


def configure_dspy(config: AskFirstConfig) -> dspy.LM:
    """Configure DSPy's LM, adapter and on-disk cache (under ``runs/``) for this process."""
    # Restricted unpickling: the cache lives in the run folder's parent, which gets shared, and an unrestricted
    # pickle from someone else's cache would run their code.
    dspy.configure_cache(enable_disk_cache=config.lm.cache, enable_memory_cache=True, disk_cache_dir=str(cache_dir(config)),
                         restrict_pickle=True)
    lm = build_lm(config.lm, seed=config.seed)
    dspy.configure(lm=lm, adapter=build_adapter(config.lm))
    return lm


def cache_dir(config: AskFirstConfig) -> Path:
    """DSPy's on-disk LM cache: ``<runs_dir>/dspy_cache``, shared by every run so repeats cost nothing."""
    return config.runs_path / "dspy_cache"
