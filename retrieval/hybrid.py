"""The hybrid retriever: BM25 and dense hits fused by reciprocal rank fusion."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from askfirst.retrieval.chunking import Passage
from askfirst.retrieval.embedder import Embedder
from askfirst.retrieval.fusion import reciprocal_rank_fusion
from askfirst.retrieval.qdrant_store import PassageStore

Mode = Literal["hybrid", "bm25", "dense"]


@dataclass(frozen=True)
class Hit:
    passage: Passage
    score: float


class HybridRetriever:
    """Search one Qdrant collection lexically (BM25), densely, or both fused with RRF.

    Nothing about the corpus is held here: the lexical index (see :mod:`askfirst.retrieval.lexical`) and the
    dense vectors answer with passage ids, and only the fused top hits' passages are read from the store.

    Args:
        lexical: The BM25 engine, anything with ``search(query, k) -> [(passage_id, score)]``.
    """

    def __init__(self, store: PassageStore, embedder: Embedder, *, lexical, mode: Mode = "hybrid", per_retriever_k: int = 10, rrf_k: int = 60):
        self.store = store
        self.embedder = embedder
        self.lexical = lexical
        self.mode = mode
        self.per_retriever_k = per_retriever_k
        self.rrf_k = rrf_k

    def __len__(self) -> int:
        return self.store.count()

    def bm25_ranking(self, query: str, k: int) -> list[str]:
        return [pid for pid, _ in self.lexical.search(query, k)]

    def dense_ranking(self, query: str, k: int, *, vector=None) -> list[str]:
        if not query.strip():
            return []
        vector = self.embedder.embed([query])[0] if vector is None else vector
        return [pid for pid, _ in self.store.dense_search(vector, k)]

    def rankings(self, query: str, *, vector=None) -> list[list[str]]:
        """The single-retriever rankings that the current mode fuses (``vector``: the query's embedding, if known)."""
        k = self.per_retriever_k
        if self.mode == "bm25":
            return [self.bm25_ranking(query, k)]
        if self.mode == "dense":
            return [self.dense_ranking(query, k, vector=vector)]
        return [self.bm25_ranking(query, k), self.dense_ranking(query, k, vector=vector)]

    def search_many(self, queries: list[str], k: int) -> list[Hit]:
        """Fuse the rankings of several queries (each lexical and dense) into one list."""
        # One embedding call for all queries rather than one per query.
        vectors = self.embedder.embed(queries) if self.mode != "bm25" and queries else [None] * len(queries)
        ranked = [r for q, v in zip(queries, vectors, strict=True) for r in self.rankings(q, vector=v) if r]
        fused = reciprocal_rank_fusion(ranked, k=self.rrf_k)[:k]
        passages = self.store.get_passages([pid for pid, _ in fused])
        return [Hit(passages[pid], score) for pid, score in fused if pid in passages]  # a passage deleted meanwhile drops out

    def search(self, query: str, k: int = 5) -> list[Hit]:
        return self.search_many([query], k)

    def __call__(self, query: str, k: int = 5) -> list[Passage]:
        """Retriever protocol used by programs: a query in, passages out."""
        return [h.passage for h in self.search(query, k)]

    def as_tool(self, k: int = 5):
        """The retriever as a ``dspy.Tool`` for ReAct-style programs."""
        import dspy

        def search_documents(query: str) -> list[str]:
            """Search the document collection; returns passages as '[passage_id] title: text'."""
            return [f"[{p.passage_id}] {p.title}: {p.text}" for p in self(query, k)]

        return dspy.Tool(search_documents)
