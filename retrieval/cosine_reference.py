"""A collection's own scale for dense cosines, so a cosine can be read the same way in another corpus or embedder.

A cosine of 0.45 is a close match in one collection and a poor one in another: it depends on the embedder and on how
alike the collection's passages are. The reference is the top cosines of question-length probes the collection
writes itself: for a fixed sample of its passages, the passage's first sentence (at most ``PROBE_WORDS`` words) is
embedded and searched, and its best cosine to a passage of *another* document kept — how close the collection comes
to a short query about something it holds elsewhere (a long document's own chunks overlap its probe, and how a corpus
is chunked would otherwise set the scale). A query's top cosine is then read as its percentile among them.
"""

from __future__ import annotations

import weakref

import numpy as np

from askfirst.retrieval.chunking import split_sentences

SAMPLE = 256  # passages whose probes make the reference
NEIGHBOURS = 16  # hits searched for each probe's nearest passage of another document
PROBE_WORDS = 24  # a probe's length at most: a question's, not a passage's
_references: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # store -> (revision, sorted cosines)


def probe_text(text: str) -> str:
    """A passage's probe: its first sentence, cut to ``PROBE_WORDS`` words ("" for a passage without words)."""
    sentences = split_sentences(text)
    return " ".join((sentences[0] if sentences else "").split()[:PROBE_WORDS])


def probe_cosines(store, embed, n: int = SAMPLE) -> np.ndarray:
    """Sorted: for each of up to ``n`` stored passages (``store.vector_sample``), its probe's best cosine to a passage of
    another document (``embed(texts) -> unit vectors``; a probe with none among its nearest ``NEIGHBOURS`` is left out)."""
    sampled = [pid for pid, _ in store.vector_sample(n)]
    passages = store.get_passages(sampled)
    probes = [(pid, text) for pid in sampled if pid in passages and (text := probe_text(passages[pid].text))]
    if not probes:
        return np.zeros(0)
    hits = [store.dense_search(vector, NEIGHBOURS) for vector in embed([text for _, text in probes])]
    found = store.get_passages(list({pid for row in hits for pid, _ in row} - set(passages)))  # one lookup
    document = {pid: passage.doc_id for pid, passage in (passages | found).items()}
    cosines = []
    for (passage_id, _), row in zip(probes, hits):
        others = [score for pid, score in row if pid in document and document[pid] != document[passage_id]]
        if others:
            cosines.append(others[0])
    return np.sort(np.asarray(cosines, dtype=float))


def cosine_percentile(store, embedder, cosine: float | None) -> float | None:
    """The share of the collection's probe cosines at or below ``cosine`` (0-1); ``None`` without a cosine, a store, an
    embedder or a reference (a collection of one document). The reference is computed once per store and revision."""
    if cosine is None or store is None or embedder is None:
        return None
    revision = store.revision
    cached = _references.get(store)
    if cached is None or cached[0] != revision:
        cached = _references[store] = (revision, probe_cosines(store, embedder.embed))
    reference = cached[1]
    return float(np.searchsorted(reference, cosine, side="right") / reference.size) if reference.size else None
