"""Loaders on the real benchmark data in ../shared/data (skipped where it is absent)."""

import pytest

from askfirst.datasets.corpus import load_corpus
from askfirst.datasets.mtrag import COLLECTIONS, load_mtrag_tasks, passage_pool_path
from askfirst.datasets.shared_data import shared_data_dir

DATA = shared_data_dir()
pytestmark = pytest.mark.skipif(not (DATA / "mtrag").is_dir(), reason=f"shared MTRAG data not found at {DATA} (set ASKFIRST_DATA_DIR)")


def test_mtrag_tasks_load_with_qrels_and_collections():
    tasks = load_mtrag_tasks(DATA)
    assert len(tasks) == 265
    assert {t.collection for t in tasks} == set(COLLECTIONS)
    assert {t.answerability for t in tasks} == {"ANSWERABLE", "PARTIAL", "UNANSWERABLE", "UNDERSPECIFIED"}
    answerable = [t for t in tasks if t.answerability == "ANSWERABLE"]
    assert sum(bool(t.qrels) for t in answerable) / len(answerable) > 0.9
    assert all(t.conversation[-1]["role"] == "user" for t in tasks)


def test_every_judged_passage_is_in_the_pool():
    tasks = load_mtrag_tasks(DATA)
    for name in COLLECTIONS:
        ids = {d.doc_id for d in load_corpus(passage_pool_path(DATA, name))}
        judged = {p for t in tasks if t.collection == name for p in t.qrels}
        assert judged <= ids, name
