"""The real embedder and a real embedded Qdrant store, on the demo corpus."""

import pytest

from askfirst.config import load_config
from askfirst.datasets.corpus import Document, load_corpus
from askfirst.retrieval.embedder import get_embedder
from askfirst.retrieval.hybrid import HybridRetriever
from askfirst.retrieval.indexer import build_index
from askfirst.retrieval.qdrant_store import PassageStore, StoreError


def test_demo_index_is_complete(demo_index):
    _, store, retriever, report = demo_index
    assert report.added == report.passages == store.count() == len(retriever) >= 30


@pytest.mark.parametrize(("query", "expected"), [
    ("How much is the laboratory fee?", "fees-lab"),
    ("prerequisite for CS 201 Data Structures", "course-cs201"),
    ("Birchwood Hall single room price", "housing-residence-halls"),
])
@pytest.mark.parametrize("mode", ["hybrid", "bm25", "dense"])
def test_each_mode_finds_the_obvious_passage(demo_index, query, expected, mode):
    _, store, retriever, _ = demo_index
    searcher = HybridRetriever(store, retriever.embedder, mode=mode, per_retriever_k=10)
    assert expected in [h.passage.passage_id for h in searcher.search(query, 3)]


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


def test_incremental_update_and_resume_after_interruption(tmp_path):
    docs = load_corpus("demo")[:12]
    embedder = get_embedder("all-MiniLM-L6-v2")
    store = PassageStore(collection="t", dim=embedder.dim, path=tmp_path / "q")

    class Interrupt(Exception):
        pass

    def stop_after_first_batch(done, todo):
        raise Interrupt

    with pytest.raises(Interrupt):
        build_index(docs, store, embedder, batch_size=5, progress=stop_after_first_batch)
    assert store.count() == 5  # the finished batch was kept
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
    reopened = PassageStore(collection="t", dim=embedder.dim, path=tmp_path / "q")  # persisted on disk
    assert reopened.count() == 10
    reopened.close()


def test_dimension_mismatch_is_refused(tmp_path):
    PassageStore(collection="c", dim=8, path=tmp_path / "q").close()
    with pytest.raises(StoreError, match="8-d vectors"):
        PassageStore(collection="c", dim=384, path=tmp_path / "q")


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
