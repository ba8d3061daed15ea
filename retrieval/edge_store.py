"""The embedded store on qdrant-edge-py: Qdrant's own engine in-process (``retriever.embedded=qdrant-edge``).

The same points as :class:`PassageStore` (named dense vector, BM25 sparse vector with the engine's IDF, the same
payload and ids), one shard folder per collection under the store folder, memory-mapped and indexed (HNSW for the
dense vectors, an inverted index for the sparse ones), so opening reads nothing per passage. qdrant-client's embedded
mode loads every point on open and searches in Python; the results log (bench/RESULTS.md in git history) has both measured at 100k passages.

Where a new collection's dense vectors, HNSW graph and BM25 sparse index live is ``memory`` (``retriever.store_memory``):
``cold`` memory-maps them and reads a page when a search first touches it, so opening reads almost nothing; ``warm`` is
Qdrant's own default, which reads the vectors and the graph into the page cache and the sparse index onto the heap as the
shard opens (a 1M-passage shard took 3.0-3.4 s to open that way, the results log (bench/RESULTS.md in git history)). A collection keeps the placement its
segments were built with.

The shard keeps no collection metadata, so the layout, BM25 parameters, placement and revision live in
``<collection>.json`` beside it. A lock file keeps a second process out, as qdrant-client's local mode does.
"""

from __future__ import annotations

import fcntl
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from askfirst.retrieval.chunking import Passage
from askfirst.retrieval.qdrant_store import (DENSE, LAYOUT, PAYLOAD_FIELDS, SPARSE, PassageTexts, StoreError, average_length,
                                              check_embedding, passage_from_payload, payload_of, point_id)
from askfirst.retrieval.safe_paths import check_collection_name, inside
from askfirst.retrieval.sparse import B, K1, document_vector, query_vector

EDGE_REQUIREMENT = "qdrant-edge-py==0.9.0"
# Qdrant's HNSW defaults (m, ef_construct, full_scan_threshold): a graph given a placement must be given these too.
HNSW_DEFAULTS = {"m": 16, "ef_construct": 100, "full_scan_threshold": 10_000}
PLACEMENTS = ("cold", "warm")  # ``retriever.store_memory``'s values


def _edge():
    try:
        import qdrant_edge
    except ImportError:
        raise StoreError(f"retriever.embedded=qdrant-edge needs qdrant-edge-py, one of askfirst's dependencies: pip install "
                         f"{EDGE_REQUIREMENT} (or set retriever.embedded=qdrant-client)") from None
    return qdrant_edge


class EdgeStore:
    """One collection as a qdrant-edge shard in ``path/<collection>``; the :class:`PassageStore` interface."""

    # ``retriever.lexical=auto``: the engine's inverted index answers BM25 too (``qdrant``), but bm25s ranked MTRAG-UN a
    # little better on it (hybrid nDCG@5 0.7090 vs 0.7076, the results log (bench/RESULTS.md in git history)), as on qdrant-client's local mode
    lexical_default = "bm25s"
    rebuilt_old_layout = False  # this layout is the only one an edge store has had

    def __init__(self, *, collection: str, dim: int, path: str | Path, embedding: str = "", memory: str = "cold",
                 rebuild_old_layout: bool = False, _lock=None, _open=None):
        qe = _edge()
        if memory not in PLACEMENTS:
            raise StoreError(f"store memory must be {' or '.join(map(repr, PLACEMENTS))}, not {memory!r}")
        self.collection, self.dim, self.embedding, self.memory = collection, dim, embedding, memory
        self.root = Path(path)
        self.location = str(self.root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._rebuild_old_layout = rebuild_old_layout
        self._lock = _lock or self._take_lock()
        self._owns_lock = _lock is None
        # The shards open in this folder, by collection: a shard's write-ahead log admits one opener, so a sibling asked
        # for twice (URASys's FAQ collection, by the program and by a caller) is the same object.
        self._open = _open if _open is not None else {}
        folder = inside(self.root, check_collection_name(collection))
        self._meta_path = self.root / f"{collection}.json"
        if folder.is_dir() and any(folder.iterdir()) and self._meta_path.is_file():
            meta = self._metadata()
            try:
                if meta.get("dim") != dim:
                    raise StoreError(f"collection {collection!r} holds {meta.get('dim')}-d vectors but the embedder makes {dim}-d ones; "
                                     "use another collection name")
                if check_embedding(collection, self.location, recorded=meta.get("embedding"), embedding=embedding):
                    self._write_metadata({"embedding": embedding})
            except StoreError:
                self._release()
                raise
            self.shard = qe.EdgeShard.load(str(folder))
        else:
            self.shard = qe.EdgeShard.create(str(folder), self._config(qe, dim, memory))
            self._write_metadata({"layout": LAYOUT, "dim": dim, "bm25_k1": K1, "bm25_b": B, "memory": memory, "revision": uuid.uuid4().hex,
                                  **({"embedding": embedding} if embedding else {})})
        self._qe = qe
        self._open[collection] = self

    @staticmethod
    def _config(qe, dim: int, memory: str):
        """A new shard's layout, with ``memory``'s placement (``warm``: Qdrant's defaults, nothing given)."""
        placed, graph = {}, {}
        if memory == "cold":
            placed = {"memory": qe.Memory.Cold}
            graph = {"hnsw_config": qe.HnswIndexConfig(**HNSW_DEFAULTS, memory=qe.Memory.Cold)}
        return qe.EdgeConfig(vectors={DENSE: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine, **placed, **graph)},
                             sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf, **placed)})

    def _take_lock(self):
        handle = (self.root / ".askfirst.lock").open("w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise StoreError(f"cannot open the qdrant-edge store at {self.root}: another process has it open") from None
        return handle

    def _release(self) -> None:
        if self._owns_lock:
            self._lock.close()

    def _metadata(self) -> dict:
        return json.loads(self._meta_path.read_text())

    def _write_metadata(self, update: dict) -> None:
        meta = (self._metadata() if self._meta_path.is_file() else {}) | update
        tmp = self._meta_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(meta))
        tmp.replace(self._meta_path)

    @property
    def revision(self) -> str:
        return str(self._metadata().get("revision", ""))

    def count(self) -> int:
        return int(self.shard.count(self._qe.CountRequest(exact=True)))

    def fix_bm25_avg_len(self, passages: list[Passage]) -> float:
        meta = self._metadata()
        if "bm25_avg_len" not in meta:
            meta["bm25_avg_len"] = average_length(passages)
            self._write_metadata({"bm25_avg_len": meta["bm25_avg_len"]})
        return float(meta["bm25_avg_len"])

    def _records(self, passage_ids: list[str], fields) -> list:
        found = []
        for start in range(0, len(passage_ids), 512):
            found += self.shard.retrieve([point_id(p) for p in passage_ids[start : start + 512]], fields, False)
        return found

    def stored_hashes(self, passage_ids: list[str]) -> dict[str, str]:
        return {r.payload["passage_id"]: r.payload.get("content_hash", "") for r in self._records(passage_ids, ["passage_id", "content_hash"])}

    def get_passages(self, passage_ids: list[str]) -> dict[str, Passage]:
        return {r.payload["passage_id"]: passage_from_payload(r.payload) for r in self._records(passage_ids, PAYLOAD_FIELDS)}

    def texts(self) -> PassageTexts:
        return PassageTexts(self)

    def upsert(self, passages: list[Passage], vectors: np.ndarray) -> None:
        qe, avg_len = self._qe, self.fix_bm25_avg_len(passages)
        points = []
        for p, v in zip(passages, vectors, strict=True):
            sparse = document_vector(f"{p.title} {p.text}", avg_len=avg_len)
            points.append(qe.Point(point_id(p.passage_id), {DENSE: v.tolist(), SPARSE: qe.SparseVector(indices=sparse.indices, values=sparse.values)},
                                   payload_of(p)))
        self._write_metadata({"revision": uuid.uuid4().hex})  # before writing: an interrupted write must still read as changed
        self.shard.update(qe.UpdateOperation.upsert_points(points))
        self.shard.flush()  # each finished batch is on disk, so an interrupted build resumes after it

    def delete(self, passage_ids: list[str]) -> None:
        if passage_ids:
            self._write_metadata({"revision": uuid.uuid4().hex})
            self.shard.update(self._qe.UpdateOperation.delete_points([point_id(p) for p in passage_ids]))
            self.shard.flush()

    @property
    def optimized(self) -> bool:
        """Whether the last optimize came after the last write (a build killed in its optimize, or before it, is not)."""
        meta = self._metadata()
        return meta.get("optimized") == meta.get("revision")

    def optimize(self) -> None:
        """Merge segments and build the HNSW graph (after a build; searching works before it, by brute force)."""
        self.shard.optimize()
        self.shard.flush()
        self._write_metadata({"optimized": self.revision})

    def iter_passages(self) -> Iterator[Passage]:
        offset = None
        while True:
            records, offset = self.shard.scroll(self._qe.ScrollRequest(offset=offset, limit=512, with_payload=PAYLOAD_FIELDS, with_vector=False))
            yield from (passage_from_payload(r.payload) for r in records)
            if offset is None:
                return

    def vector_sample(self, n: int) -> list[tuple[str, np.ndarray]]:
        """Up to ``n`` stored passages' ids and dense vectors, the first in point-id order (as :class:`PassageStore`)."""
        records, _ = self.shard.scroll(self._qe.ScrollRequest(limit=n, with_payload=["passage_id"], with_vector=[DENSE]))
        return [(r.payload["passage_id"], np.asarray(r.vector[DENSE], dtype=np.float32)) for r in records]

    def _query(self, vector, using: str, k: int) -> list[tuple[str, float]]:
        qe = self._qe
        hits = self.shard.query(qe.QueryRequest(limit=k, query=qe.Query.Nearest(vector, using=using), with_payload=["passage_id"]))
        return [(h.payload["passage_id"], float(h.score)) for h in hits]

    def dense_search(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        return self._query(np.asarray(vector, dtype=np.float32).tolist(), DENSE, k)

    def sparse_search(self, query: str, k: int) -> list[tuple[str, float]]:
        vector = query_vector(query)
        if vector is None:
            return []
        return [(pid, s) for pid, s in self._query(self._qe.SparseVector(indices=vector.indices, values=vector.values), SPARSE, k) if s > 0]

    def sibling(self, collection: str) -> EdgeStore:
        """Another collection in the same store folder (under this store's lock); the open one if it is open."""
        if collection in self._open:
            return self._open[collection]
        return EdgeStore(collection=collection, dim=self.dim, path=self.root, embedding=self.embedding, memory=self.memory,
                         rebuild_old_layout=self._rebuild_old_layout, _lock=self._lock, _open=self._open)

    def close(self) -> None:
        """Close this shard; the store that took the folder's lock also closes its open siblings, then releases it."""
        if self._open.get(self.collection) is not self:
            return  # closed already
        del self._open[self.collection]
        self.shard.flush()
        self.shard.close()
        if self._owns_lock:
            for sibling in list(self._open.values()):
                sibling.close()
        self._release()
