"""Everything a command needs, opened once: store, retriever, LM and program."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import dspy

from askfirst.config import AskFirstConfig
from askfirst.datasets.splits import configured_corpus
from askfirst.lm.factory import configure_dspy
from askfirst.programs.base import Resources
from askfirst.programs.registry import build_program, get_spec
from askfirst.retrieval.embedder import embedder_for
from askfirst.retrieval.factory import index_corpus, open_retriever, open_store
from askfirst.retrieval.hybrid import HybridRetriever
from askfirst.retrieval.indexer import IndexReport
from askfirst.retrieval.qdrant_store import PassageStore

@dataclass
class Session:
    config: AskFirstConfig
    store: PassageStore
    retriever: HybridRetriever
    lm: dspy.LM
    program: dspy.Module
    index_report: IndexReport | None
    augment_result: Any = None  # what the program's prepare_index reported (URASys: its index update)
    resources: Resources | None = None

    def close(self) -> None:
        self.store.close()


def open_session(config: AskFirstConfig, *, update_index: bool = True, progress=None, augment_progress=None) -> Session:
    """Open the store (bringing the index up to date with the corpus unless told not to), the LM and the program.

    The corpus is read and the LM configured before any index work, so bad input or a missing model fails
    fast, before minutes of embedding. A program that needs more than the plain index (its spec's
    ``prepare_index``: URASys's two-phase index) has it brought up to date too (``augment_progress(done, total,
    unit_id)`` reports each chunk).
    """
    spec = get_spec(config.program.kind)
    docs = configured_corpus(config) if update_index else None
    lm = configure_dspy(config)
    store = open_store(config)
    try:
        report = index_corpus(config, store, docs=docs, progress=progress) if update_index else None
        augmented = None
        if update_index and spec.prepare_index is not None:
            augmented = spec.prepare_index(config, store, docs=docs, progress=augment_progress)
        retriever = open_retriever(config, store)
        resources = Resources(retriever=retriever, store=store, embedder=embedder_for(config.retriever), lms={"lm": lm})
        program = build_program(config, resources)
    except BaseException:
        store.close()
        raise
    return Session(config, store, retriever, lm, program, report, augmented, resources)
