"""A collection's nearest-neighbour cosines as the scale of a query's top cosine (the ``top_cosine_percentile`` signal)."""

import numpy as np
import pytest

from askfirst.retrieval.chunking import Passage
from askfirst.retrieval.cosine_reference import cosine_percentile, nearest_neighbour_cosines
from askfirst.retrieval.edge_store import EdgeStore
from askfirst.retrieval.qdrant_store import PassageStore


def _vectors(n: int, dim: int = 8, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def _passages(n: int, start: int = 0) -> list[Passage]:
    return [Passage(f"p{i}", f"d{i}", "", f"passage number {i}") for i in range(start, start + n)]


@pytest.fixture(params=["edge", "client"])
def store(request, tmp_path):
    store = (EdgeStore(collection="c", dim=8, path=tmp_path / "q") if request.param == "edge"
             else PassageStore(collection="c", dim=8, path=tmp_path / "q"))
    yield store
    store.close()


def test_the_reference_is_each_sampled_passages_best_cosine_to_another(store):
    vectors = _vectors(30)
    store.upsert(_passages(30), vectors)
    store.optimize()
    reference = nearest_neighbour_cosines(store, n=30)
    gram = vectors @ vectors.T
    np.fill_diagonal(gram, -np.inf)
    np.testing.assert_allclose(reference, np.sort(gram.max(axis=1)), atol=1e-5)  # all 30 sampled: exact search


def test_a_cosine_reads_as_its_share_of_the_reference_and_the_reference_follows_the_collection(store):
    store.upsert(_passages(30), _vectors(30))
    reference = nearest_neighbour_cosines(store)
    assert cosine_percentile(store, float(reference[-1])) == 1.0 and cosine_percentile(store, float(reference[0]) - 1e-3) == 0.0
    middle = float(reference[len(reference) // 2])
    assert cosine_percentile(store, middle) == pytest.approx((reference <= middle).mean())
    assert cosine_percentile(store, None) is None and cosine_percentile(None, 0.5) is None
    store.upsert(_passages(30, start=30), _vectors(30, seed=1))  # a new revision: the reference is measured again
    assert cosine_percentile(store, middle) == pytest.approx((nearest_neighbour_cosines(store) <= middle).mean())


def test_a_passages_own_documents_chunks_are_not_its_neighbours(store):
    base = _vectors(3)
    near = base[0] + 0.05 * base[1]
    vectors = np.stack([base[0], near / np.linalg.norm(near), base[2]])
    store.upsert([Passage("a#0", "a", "", "one"), Passage("a#1", "a", "", "two"), Passage("b", "b", "", "three")], vectors)
    cosines = {pid: score for pid, score in zip(["a#0", "a#1", "b"], vectors @ vectors[2])}
    reference = nearest_neighbour_cosines(store)
    np.testing.assert_allclose(reference, np.sort([cosines["a#0"], cosines["a#1"], max(cosines["a#0"], cosines["a#1"])]), atol=1e-5)


def test_a_collection_of_one_passage_has_no_scale(store):
    store.upsert(_passages(1), _vectors(1))
    assert nearest_neighbour_cosines(store).size == 0 and cosine_percentile(store, 0.5) is None
