"""The default embedded store, on qdrant-edge-py (``retriever.embedded=qdrant-edge``): the real engine on the demo corpus,
against qdrant-client's local mode.

Incremental builds, resuming after an interruption and persistence are tests/test_index_and_retrieval.py's, run on
both embedded engines."""

import subprocess
import sys

import pytest

from askfirst.config import load_config
from askfirst.datasets.corpus import Document
from askfirst.retrieval.embedder import get_embedder
from askfirst.retrieval.indexer import build_index
from askfirst.retrieval.edge_store import EdgeStore
from askfirst.retrieval.qdrant_store import PassageStore, StoreError


@pytest.fixture(scope="module")
def client_index(tmp_path_factory):
    from askfirst.retrieval.factory import index_corpus, open_retriever, open_store

    config = load_config(overrides=[f"runs_dir={tmp_path_factory.mktemp('runs')}", "retriever.embedded=qdrant-client"])
    store = open_store(config)
    report = index_corpus(config, store)
    yield config, store, open_retriever(config, store), report
    store.close()


def test_the_default_store_searches_the_demo_like_qdrant_clients_local_mode(demo_index, client_index):
    config, store, retriever, report = demo_index
    assert isinstance(store, EdgeStore) and store.location.endswith("qdrant-edge")
    assert report.added == report.passages == store.count() == len(retriever) >= 30
    assert type(retriever.lexical).__name__ == "Bm25sIndex"  # auto: bm25s, as in qdrant-client's local mode
    _, client_store, client, _ = client_index
    assert isinstance(client_store, PassageStore)
    for query in ("How much is the laboratory fee?", "prerequisite for CS 201 Data Structures", "Birchwood Hall single room price"):
        mine, theirs = retriever.search(query, 3), client.search(query, 3)
        assert mine[0].passage == theirs[0].passage  # same passages, same tokenizer and embedder: the same top hit
    assert [pid for pid, _ in store.sparse_search("late registration fee", 3)][0] == "fees-late-registration"
    assert store.texts()["fees-lab"] and store.sparse_search("zzzz qqqq", 3) == []


def test_a_second_process_and_a_wrong_dimension_are_refused(tmp_path):
    store = EdgeStore(collection="c", dim=8, path=tmp_path / "e")
    code = (f"from askfirst.retrieval.edge_store import EdgeStore\n"
            f"EdgeStore(collection='c', dim=8, path={str(tmp_path / 'e')!r})")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode != 0 and "another process has it open" in out.stderr
    store.close()
    with pytest.raises(StoreError, match="8-d vectors"):
        EdgeStore(collection="c", dim=384, path=tmp_path / "e")


def test_an_empty_collection_searches_to_nothing(tmp_path):
    from askfirst.retrieval.factory import open_retriever, open_store

    config = load_config(overrides=[f"runs_dir={tmp_path}", "retriever.embedded=qdrant-edge", "data.collection=empty"])
    store = open_store(config)
    assert open_retriever(config, store).search("tuition", 3) == [] and store.count() == 0
    build_index([Document("d", "Bicycles", "A regulation about bicycles.", "x")], store, get_embedder("all-MiniLM-L6-v2"))
    assert [h.passage.passage_id for h in open_retriever(config, store).search("bicycles", 3)] == ["d"]
    store.close()


def test_concurrent_searches_give_the_sequential_results(demo_index):
    """eval.threads > 1 searches one store from several threads (DSPy's ParallelExecutor)."""
    from concurrent.futures import ThreadPoolExecutor

    _, _, retriever, _ = demo_index
    queries = ["lab fee", "Birchwood Hall rent", "CS 201 prerequisite", "late registration", "merit scholarship", "parking"] * 4
    sequential = [[h.passage.passage_id for h in retriever.search(q, 5)] for q in queries]
    with ThreadPoolExecutor(8) as pool:
        concurrent = list(pool.map(lambda q: [h.passage.passage_id for h in retriever.search(q, 5)], queries))
    assert concurrent == sequential


def test_a_sibling_asked_for_twice_is_one_open_shard_and_closes_with_its_store(tmp_path):
    """A shard's write-ahead log admits one opener: URASys's FAQ collection is opened by the program and by callers."""
    store = EdgeStore(collection="docs", dim=8, path=tmp_path / "e")
    faq = store.sibling("docs_faq")
    assert store.sibling("docs_faq") is faq and faq.sibling("docs") is store
    store.close()  # closes the sibling and releases the folder's lock
    again = EdgeStore(collection="docs_faq", dim=8, path=tmp_path / "e")
    assert again.count() == 0
    again.close()


def _segment_placements(folder) -> set[tuple[str, str | None]]:
    """Each segment's dense storage type and its sparse index's placement, as the engine wrote them."""
    import json

    configs = [json.loads(f.read_text())["config"] for f in (folder / "segments").glob("*/segment.json")]
    return {(c["vector_data"]["dense"]["storage_type"], c["sparse_vector_data"]["bm25"]["index"].get("memory")) for c in configs}


def test_store_memory_places_a_new_collections_vectors_and_the_collection_keeps_it(tmp_path):
    """``cold`` memory-maps the vectors and the sparse index without reading them in as the shard opens (Qdrant's
    ``InRam*`` storage types are read in); ``warm`` is Qdrant's default. Reopening with another setting changes nothing."""
    import json

    import numpy as np

    from askfirst.retrieval.chunking import Passage
    from askfirst.retrieval.factory import open_store

    passages = [Passage(f"p{i}", f"d{i}", f"Title {i}", f"passage {i} about fee number {i}") for i in range(40)]
    vectors = np.random.default_rng(0).standard_normal((40, 384)).astype(np.float32)  # the configured embedder's size
    placed = {}
    for memory in ("cold", "warm"):
        store = EdgeStore(collection=memory, dim=384, path=tmp_path / "e", memory=memory)
        store.upsert(passages, vectors)
        store.optimize()
        assert store.dense_search(vectors[7], 1)[0][0] == "p7"
        placed[memory] = _segment_placements(tmp_path / "e" / memory)
        store.close()
    assert placed["cold"] and all(not kind.startswith("InRam") and sparse == "cold" for kind, sparse in placed["cold"])
    assert placed["warm"] and all(kind.startswith("InRam") and sparse is None for kind, sparse in placed["warm"])

    config = load_config(overrides=[f"runs_dir={tmp_path}", f"retriever.qdrant_path={tmp_path / 'e'}", "data.collection=cold",
                                    "retriever.store_memory=warm"])
    store = open_store(config)
    assert store.memory == "warm" and store.dense_search(vectors[3], 1)[0][0] == "p3"
    store.close()
    assert _segment_placements(tmp_path / "e" / "cold") == placed["cold"]
    assert json.loads((tmp_path / "e" / "cold.json").read_text())["memory"] == "cold"
    with pytest.raises(StoreError, match="'cold' or 'warm'"):  # refused before anything is opened or created
        EdgeStore(collection="cold", dim=384, path=tmp_path / "e", memory="pinned")
