"""A collection's own scale for dense cosines, so a cosine can be read the same way in another corpus or embedder.

A cosine of 0.45 is a close match in one collection and a poor one in another: it depends on the embedder and on how
alike the collection's passages are. The reference is the collection's nearest-neighbour cosines (a fixed sample of its
passages, each one's best cosine to a passage of another document: a long document's own chunks overlap, and how a
corpus is chunked would otherwise set the scale); a query's cosine is then read as its percentile among them.
"""

from __future__ import annotations

import weakref

import numpy as np

SAMPLE = 256  # passages in the reference
NEIGHBOURS = 16  # hits searched for each sampled passage's nearest passage of another document
_references: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # store -> (revision, sorted cosines)


def nearest_neighbour_cosines(store, n: int = SAMPLE) -> np.ndarray:
    """Sorted: for each of up to ``n`` stored passages (``store.vector_sample``), its best cosine to a passage of another
    document (a passage with none among its nearest ``NEIGHBOURS`` is left out)."""
    sample = store.vector_sample(n)
    hits = [store.dense_search(vector, NEIGHBOURS) for _, vector in sample]
    found = store.get_passages(list({pid for pid, _ in sample} | {pid for row in hits for pid, _ in row}))  # one lookup
    document = {pid: passage.doc_id for pid, passage in found.items()}
    cosines = []
    for (passage_id, _), row in zip(sample, hits):
        others = [score for pid, score in row if pid in document and document[pid] != document.get(passage_id)]
        if others:
            cosines.append(others[0])
    return np.sort(np.asarray(cosines, dtype=float))


def cosine_percentile(store, cosine: float | None) -> float | None:
    """The share of the collection's reference cosines at or below ``cosine`` (0-1); ``None`` without a cosine, a store,
    or a reference (a collection of one document). The reference is computed once per store and revision."""
    if cosine is None or store is None:
        return None
    revision = store.revision
    cached = _references.get(store)
    if cached is None or cached[0] != revision:
        cached = _references[store] = (revision, nearest_neighbour_cosines(store))
    reference = cached[1]
    return float(np.searchsorted(reference, cosine, side="right") / reference.size) if reference.size else None
