"""The lexical tokenizer every BM25 in askfirst shares, and rank-bm25 (Okapi BM25) held in memory."""

from __future__ import annotations

import re

import numpy as np
from rank_bm25 import BM25Okapi

_TOKEN = re.compile(r"[a-z0-9]+(?:[.'][a-z0-9]+)*")
# A short list: BM25's IDF already discounts common words; these only add noise to short queries.
STOPWORDS = frozenset(
    "a an and are as at be by for from has have how i in is it its of on or that the this to was what when where which who why will with do does can my me you your".split()
)


def tokenize(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


class BM25Index:
    """An in-memory BM25 index over ``(passage_id, text)`` pairs (``retriever.lexical=rank_bm25``).

    Built from every passage each time it is opened: fine for small corpora, see the README for from what size on
    the on-disk and in-Qdrant alternatives are faster.
    """

    def __init__(self, ids: list[str], texts: list[str]):
        self.ids = ids
        tokens = [tokenize(t) or ["_empty_"] for t in texts]
        self._bm25 = BM25Okapi(tokens) if tokens else None

    @classmethod
    def from_store(cls, store) -> BM25Index:
        passages = list(store.iter_passages())
        return cls([p.passage_id for p in passages], [f"{p.title} {p.text}" for p in passages])

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        terms = tokenize(query)
        if self._bm25 is None or not terms:
            return []
        scores = self._bm25.get_scores(terms)
        k = min(k, len(self.ids))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]
        return [(self.ids[i], float(scores[i])) for i in top if scores[i] > 0]

    def document_frequency(self, token: str) -> int:
        """How many passages have ``token`` (one of :func:`tokenize`'s tokens)."""
        return sum(token in counts for counts in self._bm25.doc_freqs) if self._bm25 is not None else 0
