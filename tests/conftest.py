"""Shared fixtures: a small in-memory retriever for program tests, a real index for retrieval tests."""

from __future__ import annotations

import dspy
import pytest

from askfirst.config import load_config
from askfirst.retrieval.chunking import Passage
from askfirst.retrieval.hybrid import Hit

PASSAGES = [
    Passage("fees-lab", "fees-lab", "Laboratory fee", "A laboratory fee of EUR 85 is charged for each laboratory course."),
    Passage("fees-registration", "fees-registration", "Registration fee", "Every student pays a registration fee of EUR 60 each semester."),
    Passage("course-cs201", "course-cs201", "CS 201", "The prerequisite for CS 201 is CS 101 with a grade of C or better."),
]


class ListRetriever:
    """Returns fixed passages for every query and records the queries it was given."""

    def __init__(self, passages=PASSAGES):
        self.passages = list(passages)
        self.calls: list[list[str]] = []

    def search_many(self, queries, k):
        self.calls.append(list(queries))
        return [Hit(p, 1.0 / (i + 1)) for i, p in enumerate(self.passages[:k])]


@pytest.fixture
def retriever():
    return ListRetriever()


@pytest.fixture
def empty_retriever():
    return ListRetriever([])


@pytest.fixture
def use_dummy_lm():
    """``use_dummy_lm(answers)`` configures DSPy with a DummyLM on the JSON adapter for the test's duration."""
    contexts = []

    def _use(answers):
        lm = dspy.utils.DummyLM(answers, adapter=dspy.JSONAdapter())
        ctx = dspy.context(lm=lm, adapter=dspy.JSONAdapter())
        ctx.__enter__()
        contexts.append(ctx)
        return lm

    yield _use
    for ctx in reversed(contexts):
        ctx.__exit__(None, None, None)


@pytest.fixture(scope="session")
def demo_index(tmp_path_factory):
    """The demo corpus indexed once per test session into a temporary Qdrant folder (real embedder, real Qdrant)."""
    from askfirst.retrieval.factory import index_corpus, open_retriever, open_store

    runs = tmp_path_factory.mktemp("runs")
    config = load_config(overrides=[f"runs_dir={runs}"])
    store = open_store(config)
    report = index_corpus(config, store)
    retriever = open_retriever(config, store)
    yield config, store, retriever, report
    store.close()
