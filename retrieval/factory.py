"""Build the store, index and retriever that a config describes."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from askfirst.config import AskFirstConfig
from askfirst.datasets.corpus import Document, resolve_corpus_path
from askfirst.datasets.splits import configured_corpus, question_selection
from askfirst.retrieval.embedder import embedder_for
from askfirst.retrieval.hybrid import HybridRetriever
from askfirst.retrieval.indexer import IndexReport, build_index
from askfirst.retrieval.lexical import open_lexical
from askfirst.retrieval.qdrant_store import PassageStore
from askfirst.retrieval.safe_paths import check_collection_name, inside


def collection_name(config: AskFirstConfig) -> str:
    """The configured collection, else one derived from the corpus: ``demo``, a named benchmark source
    (``mtrag``, ``urasys:squad2``), or a file or folder's name plus a hash of its resolved path, so two
    different ``corpus.jsonl`` files in two folders never share (and mix in) one collection."""
    if config.data.collection:
        return check_collection_name(config.data.collection)
    from askfirst.datasets.sources import CORPORA

    data = config.data
    if data.corpus == "demo" or data.corpus.partition(":")[0] in CORPORA:
        stem = data.corpus
    else:
        path = resolve_corpus_path(data.corpus).resolve()
        stem = f"{path.stem or 'corpus'}_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
    if data.corpus_scope == "questions":  # its own collection, so a full index of the corpus never leaks into it
        stem += "_for_" + hashlib.sha1(question_selection(config).encode()).hexdigest()[:8]
    return check_collection_name(re.sub(r"[^A-Za-z0-9_-]+", "_", stem).lstrip("-")[-128:] or "corpus")


def store_path(config: AskFirstConfig) -> Path:
    """The embedded store's folder: ``retriever.qdrant_path``, else ``runs/qdrant-edge`` (``runs/qdrant`` for qdrant-client)."""
    r = config.retriever
    return Path(r.qdrant_path) if r.qdrant_path else config.runs_path / ("qdrant-edge" if r.embedded == "qdrant-edge" else "qdrant")


def open_store(config: AskFirstConfig, *, rebuild_old_layout: bool = False) -> PassageStore:
    """The configured collection: on a server (``qdrant_url``), else in the embedded store ``retriever.embedded`` names
    (``rebuild_old_layout``: ``askfirst index`` rebuilds a collection of an older layout)."""
    r = config.retriever
    embedder = embedder_for(r)
    if r.embedded == "qdrant-edge" and not r.qdrant_url:
        from askfirst.retrieval.edge_store import EdgeStore

        return EdgeStore(collection=collection_name(config), dim=embedder.dim, path=store_path(config), embedding=r.embedding_model,
                         memory=r.store_memory, rebuild_old_layout=rebuild_old_layout)
    return PassageStore(collection=collection_name(config), dim=embedder.dim, path=store_path(config), url=r.qdrant_url,
                        embedding=r.embedding_model, rebuild_old_layout=rebuild_old_layout)


def bm25s_folder(config: AskFirstConfig, collection: str) -> Path:
    """Where the bm25s index of ``collection`` lives: beside the local store, or under runs/ for a server's collection."""
    url = config.retriever.qdrant_url
    if url:
        return inside(config.runs_path / "bm25s" / hashlib.sha1(url.encode()).hexdigest()[:8], check_collection_name(collection))
    path = store_path(config)
    return inside(path.with_name(path.name + "-bm25s"), check_collection_name(collection))


def index_corpus(config: AskFirstConfig, store: PassageStore, *, docs: list[Document] | None = None, prune: bool = False,
                 optimize: bool = True, progress=None) -> IndexReport:
    """Bring the store up to date with ``docs`` (default: the configured corpus); ``optimize`` as in ``build_index``."""
    r = config.retriever
    return build_index(
        docs if docs is not None else configured_corpus(config), store, embedder_for(r),
        chunk_words=r.chunk_words, overlap_sentences=r.chunk_overlap_sentences, batch_size=r.batch_size, prune=prune, optimize=optimize,
        progress=progress,
    )


def open_retriever(config: AskFirstConfig, store: PassageStore, *, say=None) -> HybridRetriever:
    r = config.retriever
    lexical = None if r.mode == "dense" else open_lexical(r.lexical, store, folder=bm25s_folder(config, store.collection), say=say)
    return HybridRetriever(store, embedder_for(r), lexical=lexical, mode=r.mode, per_retriever_k=r.per_retriever_k, rrf_k=r.rrf_k)
