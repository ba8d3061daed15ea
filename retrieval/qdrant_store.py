"""Passages and their dense vectors in Qdrant: embedded local mode by default, a server by URL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from qdrant_client import QdrantClient, models

from askfirst.retrieval.chunking import Passage

_NAMESPACE = uuid.UUID("6f1c3e52-9a43-4b8e-8f1e-a5d0c0a1f001")


class StoreError(RuntimeError):
    """The vector store cannot be opened or does not match what the caller expects."""


def point_id(passage_id: str) -> str:
    """Qdrant needs UUID or integer ids; a name-based UUID keeps the mapping stable across runs."""
    return str(uuid.uuid5(_NAMESPACE, passage_id))


class PassageStore:
    """One Qdrant collection of passages (payload: id, document id, title, text, content hash)."""

    def __init__(self, *, collection: str, dim: int, path: str | Path | None = None, url: str | None = None, client: QdrantClient | None = None):
        self.collection = collection
        self.dim = dim
        self._owns_client = client is None
        try:
            if client is not None:
                self.client = client
            elif url:
                self.client = QdrantClient(url=url)
            else:
                Path(path).mkdir(parents=True, exist_ok=True)
                self.client = QdrantClient(path=str(path))
        except RuntimeError as exc:  # local mode holds a lock: a second process on the same folder fails here
            raise StoreError(f"cannot open the Qdrant store at {url or path}: {exc}") from None
        try:
            exists = self.client.collection_exists(collection)
        except Exception as exc:  # noqa: BLE001 - connection refused, DNS, timeout: qdrant-client raises several kinds
            if not url:
                raise
            raise StoreError(f"the Qdrant server at {url} does not answer ({type(exc).__name__}: {str(exc)[:200]}); "
                             "start it, or check retriever.qdrant_url (unset it for the local store under runs/)") from None
        if not exists:
            self.client.create_collection(collection, vectors_config=models.VectorParams(size=dim, distance=models.Distance.COSINE))
        else:
            size = self.client.get_collection(collection).config.params.vectors.size
            if size != dim:
                raise StoreError(f"collection {collection!r} holds {size}-d vectors but the embedder makes {dim}-d ones; use another collection name")

    def count(self) -> int:
        return self.client.count(self.collection, exact=True).count

    def stored_hashes(self, passage_ids: list[str]) -> dict[str, str]:
        """``passage_id -> content_hash`` for the given ids that are already stored."""
        found: dict[str, str] = {}
        for start in range(0, len(passage_ids), 512):
            batch = [point_id(p) for p in passage_ids[start : start + 512]]
            for rec in self.client.retrieve(self.collection, ids=batch, with_payload=["passage_id", "content_hash"], with_vectors=False):
                found[rec.payload["passage_id"]] = rec.payload.get("content_hash", "")
        return found

    def upsert(self, passages: list[Passage], vectors: np.ndarray) -> None:
        points = [
            models.PointStruct(
                id=point_id(p.passage_id),
                vector=v.tolist(),
                payload={"passage_id": p.passage_id, "doc_id": p.doc_id, "title": p.title, "text": p.text, "content_hash": p.content_hash},
            )
            for p, v in zip(passages, vectors, strict=True)
        ]
        self.client.upsert(self.collection, points=points, wait=True)

    def delete(self, passage_ids: list[str]) -> None:
        if passage_ids:
            self.client.delete(self.collection, points_selector=models.PointIdsList(points=[point_id(p) for p in passage_ids]))

    def iter_passages(self) -> Iterator[Passage]:
        offset = None
        while True:
            records, offset = self.client.scroll(self.collection, limit=512, offset=offset, with_payload=True, with_vectors=False)
            for r in records:
                yield Passage(r.payload["passage_id"], r.payload["doc_id"], r.payload.get("title", ""), r.payload["text"])
            if offset is None:
                return

    def dense_search(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        hits = self.client.query_points(self.collection, query=vector.tolist(), limit=k, with_payload=["passage_id"]).points
        return [(h.payload["passage_id"], float(h.score)) for h in hits]

    def sibling(self, collection: str) -> PassageStore:
        """Another collection in the same Qdrant store, on this store's client (local mode allows one client per folder)."""
        return PassageStore(collection=collection, dim=self.dim, client=self.client)

    def close(self) -> None:
        if self._owns_client:
            self.client.close()
