"""Passages, their dense vectors and their BM25 sparse vectors in Qdrant: embedded local mode by default, a server by URL."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
from qdrant_client import QdrantClient, models

from askfirst.retrieval.chunking import Passage
from askfirst.retrieval.safe_paths import check_collection_name
from askfirst.retrieval.sparse import B, K1, document_vector, passage_length, query_vector

_NAMESPACE = uuid.UUID("6f1c3e52-9a43-4b8e-8f1e-a5d0c0a1f001")
DENSE = "dense"
SPARSE = "bm25"
LAYOUT = 2  # 1: one unnamed dense vector per point (before BM25 moved into Qdrant); 2: named dense + sparse "bm25"
PAYLOAD_FIELDS = ["passage_id", "doc_id", "title", "text"]


class StoreError(RuntimeError):
    """The vector store cannot be opened or does not match what the caller expects."""


def check_embedding(collection: str, location: str, *, recorded: str | None, embedding: str) -> bool:
    """Whether ``embedding`` (the embedder's model name) should be recorded on the collection: it has none recorded
    (built before the name was kept, or by a caller that names none). Raises :class:`StoreError` when another model's
    vectors are there: the queries' vectors would be compared with them, and nothing else would say so."""
    if embedding and recorded and recorded != embedding:
        raise StoreError(f"collection {collection!r} in {location} holds vectors of the embedding model {recorded!r}, but "
                         f"retriever.embedding_model is {embedding!r}: set it back, or index into another collection "
                         "(data.collection) or store folder (retriever.qdrant_path)")
    return bool(embedding) and not recorded


def point_id(passage_id: str) -> str:
    """Qdrant needs UUID or integer ids; a name-based UUID keeps the mapping stable across runs."""
    return str(uuid.uuid5(_NAMESPACE, passage_id))


def passage_from_payload(payload: dict) -> Passage:
    return Passage(payload["passage_id"], payload["doc_id"], payload.get("title", ""), payload["text"])


def payload_of(p: Passage) -> dict:
    """What a point stores about its passage (both embedded engines and a server store the same)."""
    return {"passage_id": p.passage_id, "doc_id": p.doc_id, "title": p.title, "text": p.text, "content_hash": p.content_hash}


def average_length(passages: list[Passage]) -> float:
    """The mean BM25 length (tokens of title and text) of ``passages``: what a new collection normalises by."""
    return float(np.mean([passage_length(f"{p.title} {p.text}") for p in passages] or [1]))


def local_layout(path: str | Path, collection: str) -> int | None:
    """The layout of ``collection`` in an embedded store's folder, read from its ``meta.json`` without opening the
    store (which would take its lock); ``None`` if the collection is not there."""
    try:
        config = json.loads((Path(path) / "meta.json").read_text())["collections"][collection]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    named = DENSE in (config.get("vectors") or {}) and SPARSE in (config.get("sparse_vectors") or {})
    return int((config.get("metadata") or {}).get("layout", 0)) if named else 1


class PassageStore:
    """One Qdrant collection of passages (payload: id, document id, title, text, content hash).

    Each point holds a dense vector (``"dense"``, cosine) and the passage's BM25 term weights (sparse ``"bm25"``, IDF
    applied by Qdrant), so nothing about the corpus has to live in the process that searches it. The collection's
    metadata records the layout, the BM25 parameters and a ``revision`` that changes with every write (what an
    index kept outside Qdrant, such as bm25s's, checks to know it is stale).

    Args:
        embedding: The embedding model's name, recorded on the collection when it is created; opening a collection
            recorded with another raises :class:`StoreError` (empty: not checked).
        rebuild_old_layout: A collection of an older layout is deleted and created anew (``askfirst index`` does
            this); otherwise opening one raises :class:`StoreError` saying so, so that no command mixes layouts.
    """

    def __init__(self, *, collection: str, dim: int, path: str | Path | None = None, url: str | None = None,
                 client: QdrantClient | None = None, embedding: str = "", rebuild_old_layout: bool = False):
        self.collection = check_collection_name(collection)
        self.dim = dim
        self.embedding = embedding
        self.location = url or str(path)
        self._owns_client = client is None
        self._rebuild_old_layout = rebuild_old_layout
        self.rebuilt_old_layout = False
        # ``retriever.lexical=auto``: a server's inverted index answers BM25; local mode would score every point in Python
        self.lexical_default = "qdrant" if url else "bm25s"
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
        if exists and self._layout() != LAYOUT:
            if not rebuild_old_layout:
                raise StoreError(f"collection {collection!r} in {self.location} was built with askfirst's old layout (one unnamed dense "
                                 "vector, BM25 rebuilt in memory on every open); `askfirst index` (same config) rebuilds it")
            self.client.delete_collection(collection)
            exists, self.rebuilt_old_layout = False, True
        if not exists:
            self.client.create_collection(
                collection,
                vectors_config={DENSE: models.VectorParams(size=dim, distance=models.Distance.COSINE)},
                sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
                metadata={"layout": LAYOUT, "bm25_k1": K1, "bm25_b": B, "revision": uuid.uuid4().hex},
            )
        size = self.client.get_collection(collection).config.params.vectors[DENSE].size
        if size != dim:
            raise StoreError(f"collection {collection!r} holds {size}-d vectors but the embedder makes {dim}-d ones; use another collection name")
        if check_embedding(collection, self.location, recorded=self._metadata().get("embedding"), embedding=embedding):
            self.client.update_collection(collection, metadata={"embedding": embedding})

    def _metadata(self) -> dict:
        return self.client.get_collection(self.collection).config.metadata or {}

    def _layout(self) -> int:
        config = self.client.get_collection(self.collection).config
        named = isinstance(config.params.vectors, dict) and DENSE in config.params.vectors and SPARSE in (config.params.sparse_vectors or {})
        return int((config.metadata or {}).get("layout", 0)) if named else 1

    def _touch(self) -> None:
        self.client.update_collection(self.collection, metadata={"revision": uuid.uuid4().hex})

    @property
    def revision(self) -> str:
        """Changes with every write: equal revisions mean the same passages."""
        return str(self._metadata().get("revision", ""))

    def count(self) -> int:
        return self.client.count(self.collection, exact=True).count

    def fix_bm25_avg_len(self, passages: list[Passage]) -> float:
        """The average passage length BM25 normalises by: set from ``passages`` on the collection's first write, then kept."""
        meta = self._metadata()
        if "bm25_avg_len" not in meta:
            meta["bm25_avg_len"] = average_length(passages)
            self.client.update_collection(self.collection, metadata={"bm25_avg_len": meta["bm25_avg_len"]})
        return float(meta["bm25_avg_len"])

    def _records(self, passage_ids: list[str], fields: list[str]) -> list:
        """The stored points among ``passage_ids`` with the payload ``fields`` (one request per 512 ids)."""
        found = []
        for start in range(0, len(passage_ids), 512):
            batch = [point_id(p) for p in passage_ids[start : start + 512]]
            found += self.client.retrieve(self.collection, ids=batch, with_payload=fields, with_vectors=False)
        return found

    def stored_hashes(self, passage_ids: list[str]) -> dict[str, str]:
        """``passage_id -> content_hash`` for the given ids that are already stored."""
        return {r.payload["passage_id"]: r.payload.get("content_hash", "") for r in self._records(passage_ids, ["passage_id", "content_hash"])}

    def upsert(self, passages: list[Passage], vectors: np.ndarray) -> None:
        avg_len = self.fix_bm25_avg_len(passages)
        points = [
            models.PointStruct(
                id=point_id(p.passage_id),
                vector={DENSE: v.tolist(), SPARSE: document_vector(f"{p.title} {p.text}", avg_len=avg_len)},
                payload=payload_of(p),
            )
            for p, v in zip(passages, vectors, strict=True)
        ]
        self._touch()  # before writing: an interrupted write must still read as changed
        self.client.upsert(self.collection, points=points, wait=True)

    def delete(self, passage_ids: list[str]) -> None:
        if passage_ids:
            self._touch()
            self.client.delete(self.collection, points_selector=models.PointIdsList(points=[point_id(p) for p in passage_ids]))

    optimized = True  # nothing to optimize: a server indexes in the background, and local mode has no index

    def optimize(self) -> None:
        """Nothing to do: a server indexes in the background, and local mode has no index."""

    def iter_passages(self) -> Iterator[Passage]:
        offset = None
        while True:
            records, offset = self.client.scroll(self.collection, limit=512, offset=offset, with_payload=PAYLOAD_FIELDS, with_vectors=False)
            yield from (passage_from_payload(r.payload) for r in records)
            if offset is None:
                return

    def vector_sample(self, n: int) -> list[tuple[str, np.ndarray]]:
        """Up to ``n`` stored passages' ids and dense vectors: the first in point-id order, a fixed spread of the collection
        (point ids are name-based UUIDs)."""
        records, _ = self.client.scroll(self.collection, limit=n, with_payload=["passage_id"], with_vectors=[DENSE])
        return [(r.payload["passage_id"], np.asarray(r.vector[DENSE], dtype=np.float32)) for r in records]

    def get_passages(self, passage_ids: list[str]) -> dict[str, Passage]:
        """The stored passages among ``passage_ids``, by id."""
        return {r.payload["passage_id"]: passage_from_payload(r.payload) for r in self._records(passage_ids, PAYLOAD_FIELDS)}

    def texts(self) -> PassageTexts:
        """Passage id → text, read on demand (what the judges and exports look up for the passages a run retrieved)."""
        return PassageTexts(self)

    def dense_search(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        hits = self.client.query_points(self.collection, query=vector.tolist(), using=DENSE, limit=k, with_payload=["passage_id"]).points
        return [(h.payload["passage_id"], float(h.score)) for h in hits]

    def sparse_search(self, query: str, k: int) -> list[tuple[str, float]]:
        """BM25 hits for ``query`` from the sparse vectors (Qdrant applies the IDF)."""
        vector = query_vector(query)
        if vector is None:
            return []
        hits = self.client.query_points(self.collection, query=vector, using=SPARSE, limit=k, with_payload=["passage_id"]).points
        return [(h.payload["passage_id"], float(h.score)) for h in hits if h.score > 0]

    def sibling(self, collection: str) -> PassageStore:
        """Another collection in the same Qdrant store, on this store's client (local mode allows one client per folder)."""
        store = PassageStore(collection=collection, dim=self.dim, client=self.client, embedding=self.embedding,
                             rebuild_old_layout=self._rebuild_old_layout)
        store.location, store.lexical_default = self.location, self.lexical_default
        return store

    def close(self) -> None:
        if self._owns_client:
            self.client.close()


class PassageTexts(Mapping):
    """A read-through ``passage_id -> text`` view of a store: each id is read once, never the whole collection."""

    def __init__(self, store: PassageStore):
        self._store = store
        self._cache: dict[str, str | None] = {}

    def _load(self, passage_id: str) -> str | None:
        if passage_id not in self._cache:
            found = self._store.get_passages([passage_id]).get(passage_id)
            self._cache[passage_id] = found.text if found else None
        return self._cache[passage_id]

    def __getitem__(self, passage_id: str) -> str:
        text = self._load(passage_id)
        if text is None:
            raise KeyError(passage_id)
        return text

    def __contains__(self, passage_id) -> bool:
        return isinstance(passage_id, str) and self._load(passage_id) is not None

    def __iter__(self):
        return (p.passage_id for p in self._store.iter_passages())

    def __len__(self) -> int:
        return self._store.count()
