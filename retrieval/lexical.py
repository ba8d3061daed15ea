"""The lexical half of the hybrid retriever, one of three BM25 engines behind ``search(query, k) -> [(id, score)]`` and
``document_frequency(token) -> int`` (how many passages have a token: what is rare in the collection).

- ``qdrant``: the BM25 sparse vectors stored in every point, searched by Qdrant (a server's inverted index; qdrant-client's
  embedded local mode scores every point in Python, so it slows with the corpus).
- ``bm25s``: an on-disk bm25s index beside the store, memory-mapped, rebuilt when the collection changed.
- ``rank_bm25``: rank-bm25 in memory, rebuilt from every passage on each open (small corpora).

``auto`` takes the store's ``lexical_default``: ``qdrant`` on a server (its inverted index answers the sparse vectors) and
``bm25s`` in both embedded stores (qdrant-client's local mode would score every point in Python; on qdrant-edge bm25s
ranked a little better; measured in the results log (bench/RESULTS.md in git history)).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

LexicalKind = Literal["auto", "qdrant", "bm25s", "rank_bm25"]


class QdrantSparse:
    """BM25 from the collection's own sparse vectors."""

    def __init__(self, store):
        self.store = store

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        return self.store.sparse_search(query, k)

    def document_frequency(self, token: str, *, cap: int = 1_000) -> int:
        """How many passages have ``token``, counted up to ``cap``: the hits of a search for it alone (every passage that
        has a term scores above 0). Qdrant counts no sparse index's postings, so a common word counts as ``cap``; the
        askfirst program only asks which of a question's words is rarest (words that common tie, and it takes the first)."""
        return len(self.store.sparse_search(token, cap))


def resolve_lexical(kind: LexicalKind, store) -> str:
    return getattr(store, "lexical_default", "bm25s") if kind == "auto" else kind


def open_lexical(kind: LexicalKind, store, *, folder: Path, say=None):
    """The lexical index ``kind`` names over ``store``'s collection (``folder``: where bm25s keeps its files)."""
    kind = resolve_lexical(kind, store)
    if kind == "qdrant":
        return QdrantSparse(store)
    if kind == "bm25s":
        from askfirst.retrieval.bm25s_index import Bm25sIndex

        return Bm25sIndex.open(store, folder, say=say)
    from askfirst.retrieval.bm25 import BM25Index

    return BM25Index.from_store(store)
