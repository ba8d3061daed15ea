"""BM25 as Qdrant sparse vectors: each passage stores its terms' BM25 term-frequency weights, and Qdrant's IDF
modifier multiplies in each term's inverse document frequency at query time, so the collection, not the process,
holds the lexical index (on a server, Qdrant's inverted index answers).

The score of a passage for a query is the sum over the query's terms of ``idf(t) * tf_weight(t, passage)``, which is
Okapi BM25 with Qdrant's IDF, ``ln(1 + (N - n + 0.5) / (n + 0.5))`` (Lucene's, never negative; rank-bm25's Okapi
variant floors negative values instead). The document length normalisation uses the average passage length of the
collection's first build (every passage that build writes, not its first batch: see ``write_passages``); passages
added later are weighted against that average, not a moving one.
"""

from __future__ import annotations

import zlib
from collections import Counter

from qdrant_client import models

from askfirst.retrieval.bm25 import tokenize

K1 = 1.5  # rank-bm25's BM25Okapi defaults, so the two lexical retrievers weight terms alike
B = 0.75


def term_index(term: str) -> int:
    """A stable 32-bit id per term (Qdrant's sparse indices are uint32); no vocabulary has to be stored or shared.

    CRC-32 collides for about one pair of terms in a 100k-term vocabulary; such a pair then shares its counts.
    """
    return zlib.crc32(term.encode("utf-8"))


def passage_length(text: str) -> int:
    return len(tokenize(text))


def _sparse(weights: dict[int, float]) -> models.SparseVector:
    indices = sorted(weights)  # qdrant-client's local mode requires sorted indices
    return models.SparseVector(indices=indices, values=[weights[i] for i in indices])


def document_vector(text: str, *, avg_len: float, k1: float = K1, b: float = B) -> models.SparseVector:
    """The passage's BM25 term-frequency weights ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))``."""
    counts = Counter(term_index(t) for t in tokenize(text))
    norm = k1 * (1 - b + b * sum(counts.values()) / max(avg_len, 1e-9))
    return _sparse({i: tf * (k1 + 1) / (tf + norm) for i, tf in counts.items()})


def query_vector(query: str) -> models.SparseVector | None:
    """The query's terms, a repeated term counted as often as it occurs (as rank-bm25 does); ``None`` if it has none."""
    counts = Counter(term_index(t) for t in tokenize(query))
    return _sparse({i: float(n) for i, n in counts.items()}) if counts else None
