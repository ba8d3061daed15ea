"""Incremental, resumable index builds: only new or changed passages are embedded and written."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from askfirst.datasets.corpus import Document
from askfirst.retrieval.chunking import Passage, chunk_corpus
from askfirst.retrieval.embedder import Embedder
from askfirst.retrieval.qdrant_store import PassageStore


@dataclass
class IndexReport:
    passages: int
    added: int
    updated: int
    unchanged: int
    removed: int
    seconds: float
    to_optimize: bool = False  # the store's index needs building: this build wrote, or an earlier one ended before its optimize did

    @property
    def changed(self) -> bool:
        """Whether the build wrote or deleted anything (so the store has an index to rebuild)."""
        return bool(self.added or self.updated or self.removed)

    @property
    def passages_per_second(self) -> float:
        written = self.added + self.updated
        return written / self.seconds if self.seconds > 0 else 0.0


def build_index(
    docs: list[Document],
    store: PassageStore,
    embedder: Embedder,
    *,
    chunk_words: int = 180,
    overlap_sentences: int = 1,
    batch_size: int = 64,
    prune: bool = False,
    optimize: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> IndexReport:
    """Bring ``store`` up to date with ``docs``.

    Batches are written as they are embedded (the next group embedded while one is written), so an interrupted build
    keeps every finished batch, and running again embeds only what is missing or whose text changed.

    Args:
        prune: Also delete stored passages that no longer come from ``docs``.
        optimize: Have the store build its index after the writes; a caller that passes False (to let go of ``docs``
            first) calls ``store.optimize()`` itself when the report says ``to_optimize``.
        progress: Called as ``progress(done, todo)`` after each batch.
    """
    passages = chunk_corpus(docs, max_words=chunk_words, overlap_sentences=overlap_sentences)
    return write_passages(passages, store, embedder, batch_size=batch_size, prune=prune, optimize=optimize, progress=progress)


def write_passages(passages: list[Passage], store: PassageStore, embedder: Embedder, *, batch_size: int = 64, prune: bool = False,
                   optimize: bool = True, progress: Callable[[int, int], None] | None = None) -> IndexReport:
    """Bring ``store`` up to date with ready-made ``passages`` (``build_index`` without the chunking)."""
    start = time.perf_counter()
    stored = store.stored_hashes([p.passage_id for p in passages])
    todo = [p for p in passages if stored.get(p.passage_id) != p.content_hash]
    updated = sum(1 for p in todo if p.passage_id in stored)
    if todo:  # BM25's average length, fixed on a collection's first build from everything it is built from, not one batch
        store.fix_bm25_avg_len(passages)
    # A group is what the embedder has in flight at once (an endpoint's concurrency x batch_size, else one batch); the
    # next group is embedded while this one is written, so the embedder waits on no write.
    group = batch_size * getattr(embedder, "concurrency", 1)
    groups = [todo[i : i + group] for i in range(0, len(todo), group)]

    def embed(passages: list[Passage]):
        return embedder.embed([f"{p.title}\n{p.text}" for p in passages], batch_size=batch_size)

    done = 0
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="index-embed") as pool:
        pending = pool.submit(embed, groups[0]) if groups else None
        for n, chunk in enumerate(groups):
            vectors = pending.result()
            pending = pool.submit(embed, groups[n + 1]) if n + 1 < len(groups) else None
            store.upsert(chunk, vectors)  # one write a group (a write's cost is mostly per call): the unit a resume keeps
            done += len(chunk)
            if progress:
                progress(done, len(todo))
    removed = 0
    if prune:
        keep = {p.passage_id for p in passages}
        stale = [p.passage_id for p in store.iter_passages() if p.passage_id not in keep]
        store.delete(stale)
        removed = len(stale)
    report = IndexReport(len(passages), len(todo) - updated, updated, len(passages) - len(todo), removed, 0.0)
    report.to_optimize = report.changed or not getattr(store, "optimized", True)
    if optimize and report.to_optimize:
        store.optimize()  # an indexing engine (qdrant-edge) builds its HNSW graph once, after the writes
    report.seconds = time.perf_counter() - start
    return report
