"""A collection's probe cosines as the scale of a query's top cosine (the ``top_cosine_percentile`` signal)."""

import numpy as np
import pytest

from askfirst.retrieval.chunking import Passage
from askfirst.retrieval.cosine_reference import PROBE_WORDS, cosine_percentile, probe_cosines, probe_text
from askfirst.retrieval.edge_store import EdgeStore
from askfirst.retrieval.qdrant_store import PassageStore


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


class Probes:
    """An embedder of scripted vectors: each probe text (a passage's first sentence) has its own."""

    def __init__(self, vectors: dict[str, np.ndarray]):
        self.vectors, self.calls = vectors, 0

    def embed(self, texts):
        self.calls += 1
        return np.stack([self.vectors[t] for t in texts])


def _collection(n: int, *, start: int = 0, seed: int = 0, dim: int = 8):
    """``n`` one-passage documents with random vectors, and probes of random vectors of their own."""
    rng = np.random.default_rng(seed)
    passages = [Passage(f"p{i}", f"d{i}", "", f"Probe {i} here. And more words after it.") for i in range(start, start + n)]
    return passages, _unit(rng.normal(size=(n, dim))), {f"Probe {i} here.": _unit(rng.normal(size=dim)) for i in range(start, start + n)}


@pytest.fixture(params=["edge", "client"])
def store(request, tmp_path):
    store = (EdgeStore(collection="c", dim=8, path=tmp_path / "q") if request.param == "edge"
             else PassageStore(collection="c", dim=8, path=tmp_path / "q"))
    yield store
    store.close()


def test_a_probe_is_a_passages_first_sentence_of_at_most_question_length():
    assert probe_text("\nThe fee is $40. It is due in May.") == "The fee is $40."
    assert len(probe_text(" ".join(["word"] * 100)).split()) == PROBE_WORDS
    assert probe_text("  ") == ""


def test_the_reference_is_each_probes_best_cosine_to_another_documents_passage(store):
    passages, vectors, probes = _collection(30)
    store.upsert(passages, vectors)
    store.optimize()
    reference = probe_cosines(store, Probes(probes).embed, n=30)
    queries = np.stack([probes[f"Probe {i} here."] for i in range(30)])
    gram = queries @ vectors.T
    np.fill_diagonal(gram, -np.inf)  # its own passage is not another document's
    np.testing.assert_allclose(reference, np.sort(gram.max(axis=1)), atol=1e-5)  # all 30 sampled: exact search


def test_a_cosine_reads_as_its_share_of_the_reference_and_the_reference_follows_the_collection(store):
    passages, vectors, probes = _collection(30)
    embedder = Probes(probes)
    store.upsert(passages, vectors)
    reference = probe_cosines(store, embedder.embed)
    assert cosine_percentile(store, embedder, float(reference[-1])) == 1.0
    assert cosine_percentile(store, embedder, float(reference[0]) - 1e-3) == 0.0
    middle = float(reference[len(reference) // 2])
    calls = embedder.calls
    assert cosine_percentile(store, embedder, middle) == pytest.approx((reference <= middle).mean())
    assert embedder.calls == calls  # measured once per revision
    assert cosine_percentile(store, embedder, None) is None and cosine_percentile(None, embedder, 0.5) is None
    assert cosine_percentile(store, None, 0.5) is None
    more, more_vectors, more_probes = _collection(30, start=30, seed=1)
    embedder.vectors |= more_probes
    store.upsert(more, more_vectors)  # a new revision: the reference is measured again
    assert cosine_percentile(store, embedder, middle) == pytest.approx((probe_cosines(store, embedder.embed) <= middle).mean())


def test_a_probes_own_documents_chunks_are_not_its_neighbours(store):
    base = _unit(np.random.default_rng(0).normal(size=(3, 8)))
    near = _unit(base[0] + 0.05 * base[1])
    vectors = np.stack([base[0], near, base[2]])
    store.upsert([Passage("a#0", "a", "", "One."), Passage("a#1", "a", "", "Two."), Passage("b", "b", "", "Three.")], vectors)
    probes = {"One.": base[0], "Two.": near, "Three.": base[2]}
    cosines = vectors @ vectors.T  # each probe is its passage's own vector here
    reference = probe_cosines(store, Probes(probes).embed)
    expected = [cosines[0, 2], cosines[1, 2], max(cosines[2, 0], cosines[2, 1])]  # a's chunks find only b, b finds a's best
    np.testing.assert_allclose(reference, np.sort(expected), atol=1e-5)


def test_a_collection_of_one_document_has_no_scale(store):
    passages, vectors, probes = _collection(1)
    store.upsert(passages, vectors)
    embedder = Probes(probes)
    assert probe_cosines(store, embedder.embed).size == 0 and cosine_percentile(store, embedder, 0.5) is None
