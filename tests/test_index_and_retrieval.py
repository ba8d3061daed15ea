"""The real embedder and a real embedded Qdrant store, on the demo corpus."""

import numpy as np
import pytest

from askfirst.config import load_config
from askfirst.datasets.corpus import Document, load_corpus
from askfirst.retrieval.bm25 import tokenize
from askfirst.retrieval.embedder import get_embedder
from askfirst.retrieval.hybrid import HybridRetriever
from askfirst.retrieval.indexer import build_index
from askfirst.retrieval.lexical import open_lexical
from askfirst.retrieval.chunking import Passage, chunk_corpus
from askfirst.retrieval.edge_store import EdgeStore
from askfirst.retrieval.qdrant_store import PassageStore, StoreError, average_length


def test_demo_index_is_complete(demo_index):
    _, store, retriever, report = demo_index
    assert report.added == report.passages == store.count() == len(retriever) >= 30


@pytest.mark.parametrize(("query", "expected"), [
    ("How much is the laboratory fee?", "fees-lab"),
    ("prerequisite for CS 201 Data Structures", "course-cs201"),
    ("Birchwood Hall single room price", "housing-residence-halls"),
])
@pytest.mark.parametrize(("mode", "lexical"), [("hybrid", "auto"), ("dense", "auto"), ("bm25", "qdrant"), ("bm25", "bm25s"), ("bm25", "rank_bm25")])
def test_each_mode_and_bm25_engine_finds_the_obvious_passage(demo_index, tmp_path, query, expected, mode, lexical):
    _, store, retriever, _ = demo_index
    searcher = HybridRetriever(store, retriever.embedder, lexical=open_lexical(lexical, store, folder=tmp_path / "bm25s"), mode=mode, per_retriever_k=10)
    assert expected in [h.passage.passage_id for h in searcher.search(query, 3)]


def test_the_three_bm25_engines_rank_alike(demo_index, tmp_path):
    """Same tokenizer, k1 and b: the sparse vectors in Qdrant, bm25s and rank-bm25 differ only in IDF's form
    (and the first two in the length normalisation's average, fixed at the first write), so their top hits agree."""
    _, store, _, _ = demo_index
    engines = {kind: open_lexical(kind, store, folder=tmp_path / "bm25s") for kind in ("qdrant", "bm25s", "rank_bm25")}
    for query in ("late registration fee", "merit scholarship amount", "Birchwood Hall single room price", "graduate tuition per credit"):
        tops = {kind: [pid for pid, _ in engine.search(query, 3)] for kind, engine in engines.items()}
        assert tops["qdrant"][0] == tops["bm25s"][0] == tops["rank_bm25"][0], tops
        assert set(tops["qdrant"]) == set(tops["bm25s"]), tops
    assert all(engine.search("zzzz qqqq", 5) == [] for engine in engines.values())  # words no passage has
    # and count the same passages for a word: the collection's document frequency, which the askfirst program reads
    texts = [set(tokenize(f"{p.title} {p.text}")) for p in store.iter_passages()]
    for token in ("fee", "deadline", "birchwood", "zzzz"):
        assert {kind: engine.document_frequency(token) for kind, engine in engines.items()} == dict.fromkeys(engines, sum(token in t for t in texts))


def test_hybrid_scores_are_rrf_of_both_rankings(demo_index):
    _, _, retriever, _ = demo_index
    query = "lab fee"
    bm25, dense = retriever.bm25_ranking(query, 10), retriever.dense_ranking(query, 10)
    hits = retriever.search(query, 5)
    top = hits[0].passage.passage_id
    expected = sum(1 / (60 + r.index(top) + 1) for r in (bm25, dense) if top in r)
    assert hits[0].score == pytest.approx(expected)


def test_search_many_and_tool(demo_index):
    _, _, retriever, _ = demo_index
    ids = [h.passage.passage_id for h in retriever.search_many(["lab fee", "Birchwood Hall rent"], 6)]
    assert "fees-lab" in ids and "housing-residence-halls" in ids
    tool = retriever.as_tool(k=2)
    out = tool(query="registration fee")
    assert len(out) == 2 and out[0].startswith("[fees-")


@pytest.mark.parametrize("open_store", [PassageStore, EdgeStore], ids=["qdrant-client", "qdrant-edge"])
def test_incremental_update_and_resume_after_interruption(tmp_path, open_store):
    docs = load_corpus("demo")[:12]
    embedder = get_embedder("all-MiniLM-L6-v2")
    store = open_store(collection="t", dim=embedder.dim, path=tmp_path / "q")
    first_revision = store.revision

    class Interrupt(Exception):
        pass

    def stop_after_first_batch(done, todo):
        raise Interrupt

    with pytest.raises(Interrupt):
        build_index(docs, store, embedder, batch_size=5, progress=stop_after_first_batch)
    assert store.count() == 5 and store.revision != first_revision  # the finished batch was kept, and reads as a change
    # BM25's average length was fixed from the whole build before its first batch, so the resumed build weighs alike
    passages = chunk_corpus(docs)
    whole, first_batch = average_length(passages), average_length(passages[:5])
    assert abs(whole - first_batch) > 1 and store.fix_bm25_avg_len([]) == pytest.approx(whole)
    resumed = build_index(docs, store, embedder, batch_size=5)
    assert (resumed.added, resumed.unchanged) == (7, 5)
    again = build_index(docs, store, embedder, batch_size=5)
    assert (again.added, again.updated, again.unchanged) == (0, 0, 12)
    changed = [Document(d.doc_id, d.title, d.text + " Updated.", d.source) if i == 0 else d for i, d in enumerate(docs)]
    extra = Document("new-doc", "New", "A brand new regulation about bicycles.", "x")
    report = build_index(changed + [extra], store, embedder)
    assert (report.added, report.updated, report.unchanged) == (1, 1, 11)
    pruned = build_index(changed[:10], store, embedder, prune=True)
    assert pruned.removed == 3 and store.count() == 10
    store.close()
    reopened = open_store(collection="t", dim=embedder.dim, path=tmp_path / "q")  # persisted on disk
    stored = [p.passage_id for p in reopened.iter_passages()]
    assert reopened.count() == len(stored) == len(reopened.get_passages(stored)) == 10
    reopened.close()


def test_a_caller_can_defer_the_stores_optimize_and_a_build_cut_short_before_it_is_optimized_on_resume(tmp_path):
    docs = load_corpus("demo")[:4]
    embedder = get_embedder("all-MiniLM-L6-v2")
    store = EdgeStore(collection="t", dim=embedder.dim, path=tmp_path / "q")
    calls = []
    optimize = store.optimize
    store.optimize = lambda: calls.append(1) or optimize()
    deferred = build_index(docs, store, embedder, optimize=False)
    assert deferred.changed and deferred.to_optimize and calls == [] and not store.optimized  # as if killed before optimizing
    resumed = build_index(docs, store, embedder)
    assert not resumed.changed and resumed.to_optimize and calls == [1] and store.optimized  # nothing to embed, the index still built
    again = build_index(docs, store, embedder)
    assert not again.to_optimize and calls == [1]
    pruned = build_index(docs[:3], store, embedder, prune=True)
    assert pruned.removed == 1 and pruned.to_optimize and calls == [1, 1]
    store.close()
    reopened = EdgeStore(collection="t", dim=embedder.dim, path=tmp_path / "q")
    assert reopened.optimized  # recorded with the collection, not in the process
    reopened.close()


def test_dimension_mismatch_is_refused(tmp_path):
    PassageStore(collection="c", dim=8, path=tmp_path / "q").close()
    with pytest.raises(StoreError, match="8-d vectors"):
        PassageStore(collection="c", dim=384, path=tmp_path / "q")


@pytest.mark.parametrize("engine", ["qdrant-client", "qdrant-edge"])
def test_vectors_of_another_embedding_model_are_refused_by_name(tmp_path, engine):
    def store(embedding, collection="c"):
        if engine == "qdrant-edge":
            return EdgeStore(collection=collection, dim=8, path=tmp_path / "s", embedding=embedding)
        return PassageStore(collection=collection, dim=8, path=tmp_path / "s", embedding=embedding)

    store("").close()  # a collection from before the model was recorded takes the first name it is opened with
    store("model-a").close()
    store("model-a").close()
    with pytest.raises(StoreError, match="'model-a', but retriever.embedding_model is 'model-b'"):
        store("model-b")
    store("").close()  # a caller that names no model (a benchmark, a test) is not checked
    opened = store("model-a")
    opened.sibling("c_faq")  # a sibling collection (URASys's FAQs) records the same model
    opened.close()
    with pytest.raises(StoreError, match="collection 'c_faq' .*'model-a'"):
        store("model-b", collection="c_faq")


def test_collection_name_follows_the_corpus(tmp_path):
    from askfirst.retrieval.factory import collection_name

    assert collection_name(load_config()) == "demo"
    mine = collection_name(load_config(overrides=[f"data.corpus={tmp_path}/my corpus.jsonl"]))
    assert mine.startswith("my_corpus_") and len(mine) == len("my_corpus_") + 8
    assert collection_name(load_config(overrides=["data.collection=x"])) == "x"
    assert collection_name(load_config(overrides=["data.corpus=mtrag:cloud"])) == "mtrag_cloud"


def test_two_corpora_with_one_file_name_get_two_collections(tmp_path):
    from askfirst.retrieval.factory import collection_name

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    names = {collection_name(load_config(overrides=[f"data.corpus={tmp_path / d / 'corpus.jsonl'}"])) for d in "ab"}
    assert len(names) == 2 and all(n.startswith("corpus_") for n in names)


def test_opening_a_retriever_reads_no_passage(demo_index, tmp_path, monkeypatch):
    """Once the bm25s index is built, opening and searching read only the hits' passages from the store."""
    from askfirst.retrieval.factory import open_retriever

    config, store, _, _ = demo_index
    open_retriever(config, store)  # builds the bm25s index if the fixture's run has not
    monkeypatch.setattr(type(store), "iter_passages", lambda self: pytest.fail("read every passage"))
    for lexical in ("bm25s", "qdrant"):
        retriever = open_retriever(config.model_copy(update={"retriever": config.retriever.model_copy(update={"lexical": lexical})}), store)
        assert retriever.search("laboratory fee", 2)[0].passage.passage_id == "fees-lab"


def test_bm25s_index_follows_the_collection(tmp_path):
    """A write to the collection changes its revision; the next open rebuilds the on-disk index from it."""
    from askfirst.retrieval.bm25s_index import Bm25sIndex

    embedder = get_embedder("all-MiniLM-L6-v2")
    store = PassageStore(collection="t", dim=embedder.dim, path=tmp_path / "q")
    empty = Bm25sIndex.open(store, tmp_path / "bm25s")
    assert len(empty) == 0 and empty.search("tuition", 3) == []
    build_index(load_corpus("demo")[:5], store, embedder)
    first = Bm25sIndex.open(store, tmp_path / "bm25s")
    assert len(first) == store.count() and first.search("bicycles", 3) == []
    revision = store.revision
    assert Bm25sIndex.open(store, tmp_path / "bm25s").search("tuition", 1) == first.search("tuition", 1)  # unchanged: not rebuilt
    build_index([Document("new-doc", "Bicycles", "A brand new regulation about bicycles.", "x")], store, embedder)
    assert store.revision != revision
    assert [pid for pid, _ in Bm25sIndex.open(store, tmp_path / "bm25s").search("bicycles", 3)] == ["new-doc"]
    store.close()


def test_bm25s_index_is_built_once_by_processes_opening_it_together(tmp_path):
    """Several processes on a server's collection: one builds under the lock, the others load what it built."""
    import threading
    import time

    from askfirst.retrieval.bm25s_index import Bm25sIndex

    class SlowStore:
        collection, revision, reads = "t", "r1", []

        def iter_passages(self):
            self.reads.append(1)
            time.sleep(0.3)  # long enough for every opener to arrive while the first one builds
            yield Passage("fees-lab", "fees-lab", "Lab fee", "The laboratory fee is EUR 85.")

    store, opened = SlowStore(), []
    threads = [threading.Thread(target=lambda: opened.append(Bm25sIndex.open(store, tmp_path / "bm25s"))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.reads) == 1 and [index.search("laboratory", 1)[0][0] for index in opened] == ["fees-lab"] * 3


def test_old_layout_is_refused_then_rebuilt_by_index(tmp_path):
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=str(tmp_path / "q"))  # askfirst's first layout: one unnamed dense vector per point
    client.create_collection("old", vectors_config=models.VectorParams(size=4, distance=models.Distance.COSINE))
    client.upsert("old", points=[models.PointStruct(id=1, vector=[1, 0, 0, 0], payload={"passage_id": "p", "doc_id": "d", "text": "t"})])
    client.close()
    with pytest.raises(StoreError, match="old layout.*`askfirst index`"):
        PassageStore(collection="old", dim=4, path=tmp_path / "q")
    store = PassageStore(collection="old", dim=4, path=tmp_path / "q", rebuild_old_layout=True)
    assert store.rebuilt_old_layout and store.count() == 0
    store.close()
    again = PassageStore(collection="old", dim=4, path=tmp_path / "q")  # the new layout opens as it is
    assert not again.rebuilt_old_layout
    again.close()


def test_passage_texts_reads_on_demand(demo_index):
    _, store, _, _ = demo_index
    texts = store.texts()
    assert "fees-lab" in texts and "laboratory" in texts["fees-lab"].lower()
    assert "no-such-passage" not in texts and texts.get("no-such-passage") is None
    with pytest.raises(KeyError):
        texts["no-such-passage"]


@pytest.mark.parametrize("chunk", [1, 3, 8_192])
def test_the_bm25s_matrix_is_the_one_bm25s_builds(chunk):
    """The packed, chunked build writes bm25s's own lucene matrix: the same columns, rows and scores, whatever the chunk."""
    import bm25s

    from askfirst.retrieval.bm25s_index import score_matrix
    from askfirst.retrieval.sparse import B, K1

    texts = [f"{word} river bank {word} loan" if i % 2 else f"the {word} bank of the river {word} {word}"
             for i, word in enumerate(["alpha", "beta", "alpha", "gamma", "delta", "beta", "river"])]
    ids, vocab, ours = score_matrix(((f"p{i}", t) for i, t in enumerate(texts)), chunk=chunk)
    reference = bm25s.BM25(k1=K1, b=B, method="lucene")
    reference.index(([[vocab[t] for t in tokenize(text)] for text in texts], dict(vocab)), show_progress=False)
    assert ids == [f"p{i}" for i in range(len(texts))] and ours["num_docs"] == len(texts)
    for key in ("indptr", "indices"):
        assert ours[key].tolist() == reference.scores[key].tolist(), key
    np.testing.assert_allclose(ours["data"], reference.scores["data"], rtol=1e-6)
    assert score_matrix(iter([])) == ([], {}, None)
