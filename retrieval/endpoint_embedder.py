"""Embeddings from an embedding server: any OpenAI-compatible ``/v1/embeddings`` (OpenAI, vLLM, Infinity, Hugging Face
TEI's OpenAI route) called directly over HTTP, any other provider through litellm's embedding API; several requests in
flight, each retried with backoff.

An OpenAI-compatible server given by ``api_base`` is called with httpx rather than through litellm, whose per-request
work (its pydantic response models) costs several times the CPU of the request itself and became the indexing
pipeline's limit (``bench/index_bench.py``). It asks for ``encoding_format: base64`` (float32 bytes, as OpenAI's own
client does), which is far cheaper to decode than a JSON list of floats, and reads a list where a server sends one; a
server that rejects the field (HTTP 400 or 422) is asked again without it, and from then on for floats.
"""

from __future__ import annotations

import base64
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from askfirst.retrieval.embedder import EmbedderError

logger = logging.getLogger(__name__)
OPENAI_COMPATIBLE = ("openai", "hosted_vllm", "infinity")  # litellm prefixes whose servers speak OpenAI's /embeddings


def _vector(embedding: list[float] | str) -> np.ndarray | list[float]:
    """One embedding as a server sent it: a list of floats, or base64 of little-endian float32 bytes."""
    if isinstance(embedding, str):
        return np.frombuffer(base64.b64decode(embedding), dtype="<f4")
    return embedding


class EndpointEmbedder:
    """Normalised embeddings from ``model`` (a litellm model string, e.g. ``openai/text-embedding-3-small`` or
    ``hosted_vllm/BAAI/bge-small-en`` with ``api_base``), the same interface as the local ``Embedder``.

    Args:
        api_key_env: The environment variable holding the key (the key itself never enters a config).
        concurrency: Requests in flight at once; ``embed`` sends one request per ``batch_size`` texts.
        retries: Extra attempts of a failed request, after 1, 2, 4, ... seconds.
    """

    def __init__(self, model: str, *, api_base: str | None = None, api_key_env: str | None = None, concurrency: int = 8,
                 timeout: float = 60.0, retries: int = 3, backoff: float = 1.0):
        self.model_name, self.api_base, self.timeout, self.retries, self.backoff = model, api_base, timeout, retries, backoff
        self.concurrency = concurrency
        self._api_key = os.environ.get(api_key_env) if api_key_env else None
        if api_key_env and not self._api_key:
            raise EmbedderError(f"retriever.embedding_api_key_env names {api_key_env!r}, which is not set in the environment")
        self._pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="embed")
        provider, _, self._served_name = model.partition("/")
        self._direct, self._encoding = None, "base64"
        if api_base and provider in OPENAI_COMPATIBLE:
            import httpx

            headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
            self._direct = httpx.Client(base_url=api_base.rstrip("/"), headers=headers, timeout=timeout,
                                        limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency))
        self.dim = int(self._request(["dimension probe"]).shape[1])

    def _rows(self, texts: list[str]) -> list:
        """The response's embedding objects, in input order."""
        if self._direct is not None:
            response = self._post(texts)
            if 400 <= response.status_code < 500 and response.status_code not in (408, 429):
                raise EmbedderError(f"{self.model_name} at {self.api_base}: HTTP {response.status_code}: {response.text[:300]}")
            response.raise_for_status()
            data = response.json()["data"]
        else:
            import litellm

            data = litellm.embedding(model=self.model_name, input=texts, api_base=self.api_base, api_key=self._api_key,
                                     timeout=self.timeout).data
        return sorted(data, key=lambda d: d["index"])

    def _post(self, texts: list[str]):
        """One ``/embeddings`` request; where the server rejects ``encoding_format``, the same without it, and floats after."""
        body = {"model": self._served_name, "input": texts}
        encoding = self._encoding
        response = self._direct.post("/embeddings", json={**body, "encoding_format": encoding} if encoding else body)
        if encoding and response.status_code in (400, 422):
            retry = self._direct.post("/embeddings", json=body)
            if retry.is_success:
                logger.warning("%s at %s rejected encoding_format %s (HTTP %d); asking for floats from now on",
                               self.model_name, self.api_base, encoding, response.status_code)
                self._encoding = None
            response = retry
        return response

    def _request(self, texts: list[str]) -> np.ndarray:
        for attempt in range(self.retries + 1):
            try:
                vectors = np.asarray([_vector(d["embedding"]) for d in self._rows(texts)], dtype=np.float32)
                if vectors.shape[0] != len(texts):
                    raise EmbedderError(f"{self.model_name}: {vectors.shape[0]} embeddings for {len(texts)} inputs")
                norms = np.linalg.norm(vectors, axis=1, keepdims=True)
                return vectors / np.where(norms == 0, 1.0, norms)
            except EmbedderError:
                raise
            except Exception as exc:  # litellm raises its own exception types per provider
                if attempt == self.retries:
                    raise EmbedderError(f"{self.model_name} at {self.api_base or 'its default endpoint'}: {type(exc).__name__}: {exc}") from None
                wait = self.backoff * 2 ** attempt
                logger.warning("embedding request failed (%s); retrying in %.0f s", type(exc).__name__, wait)
                time.sleep(wait)
        raise AssertionError("unreachable")

    def embed(self, texts: list[str], *, batch_size: int = 64) -> np.ndarray:
        """One request per ``batch_size`` texts, ``concurrency`` of them at a time, in order."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batches = [texts[i : i + batch_size] for i in range(0, len(texts), batch_size)]
        return np.concatenate(list(self._pool.map(self._request, batches)))
