"""``askfirst index --augment``: the URASys two-phase index (chunk-and-title units, FAQ collection) of a corpus."""

from __future__ import annotations

import json
from dataclasses import dataclass

import dspy

from askfirst.config import AskFirstConfig
from askfirst.datasets.corpus import Document
from askfirst.datasets.splits import configured_corpus
from askfirst.lm.call_counter import counting_lm_calls
from askfirst.lm.factory import build_lm
from askfirst.retrieval.augmented_index import LEDGER_FILE, AugmentReport, augment_corpus
from askfirst.retrieval.embedder import embedder_for
from askfirst.retrieval.factory import collection_name
from askfirst.retrieval.indexer import IndexReport, write_passages
from askfirst.retrieval.qdrant_store import PassageStore
from askfirst.retrieval.semantic_chunker import SemanticChunker

UNITS, FAQ = "urasys_units", "urasys_faq"


def augmented_collection(config: AskFirstConfig, part: str) -> str:
    """The Qdrant collection of the corpus's URASys units (``UNITS``) or FAQ entries (``FAQ``)."""
    return f"{collection_name(config)}_{part}"


def augmented_parts(urasys) -> set[str]:
    """The collections of the two-phase index the configured agents search: ``FAQ`` (the FAQ agent) and ``UNITS`` (the
    document agent over chunk-and-title units; without them it searches the plain index)."""
    parts = {FAQ} if urasys.faq_agent else set()
    if urasys.document_agent and urasys.chunk_and_title:
        parts.add(UNITS)
    return parts


def augmented_search(config: AskFirstConfig, store, part: str):
    """``search(query, k) -> list[Passage]`` over the corpus's URASys units (``UNITS``) or FAQ entries (``FAQ``).

    Raises:
        DataError: The collection is empty (``askfirst index --augment`` has not built it).
    """
    from askfirst.datasets.errors import DataError
    from askfirst.retrieval.factory import open_retriever

    name = augmented_collection(config, part)
    found = open_retriever(config, store.sibling(name))
    if not len(found):
        raise DataError(f"the URASys collection {name!r} of corpus {config.data.corpus!r} is empty; build it with: askfirst index "
                        "--augment (with the same config and --set options)")
    return lambda query, k: found(query, k)


@dataclass
class AugmentResult:
    report: AugmentReport
    units: IndexReport
    faqs: IndexReport
    lm_calls: int


def augment_index(config: AskFirstConfig, store: PassageStore, *, docs: list[Document] | None = None, progress=None) -> AugmentResult:
    """Build or update both URASys collections beside ``store``'s, with ``urasys.indexing_lm`` (default: the configured LM).

    Finished chunks are read back from ``runs/urasys/<collection>/ledger.jsonl``; only new or changed chunks
    (or all of them, after a change of LM, m, k or the chunk-and-title switch) go through the LM.
    """
    from askfirst.programs.urasys.indexing import AskAndAugment, ChunkAndTitle

    u, retries = config.urasys, config.lm.parse_retries
    docs = docs if docs is not None else configured_corpus(config)
    embedder = embedder_for(config.retriever)
    chunker = SemanticChunker(embedder.embed, percentile=u.break_percentile, min_chars=u.chunk_min_chars, max_chars=u.chunk_max_chars)
    settings = json.dumps({"lm": (u.indexing_lm or config.lm).model, "m": u.faqs_per_chunk, "k": u.paraphrases, "percentile": u.break_percentile,
                           "chars": [u.chunk_min_chars, u.chunk_max_chars]}, sort_keys=True)
    ledger = config.runs_path / "urasys" / collection_name(config) / LEDGER_FILE
    lm = build_lm(u.indexing_lm, seed=config.seed) if u.indexing_lm else dspy.settings.lm
    with counting_lm_calls() as counter, dspy.context(lm=lm):
        units, faqs, report = augment_corpus(
            docs, chunker=chunker, chunk_and_title=ChunkAndTitle(retries=retries), ledger=ledger, settings=settings, progress=progress,
            ask_and_augment=AskAndAugment(faqs_per_chunk=u.faqs_per_chunk, paraphrases=u.paraphrases, retries=retries),
        )
    batch = config.retriever.batch_size
    unit_report = write_passages(units, store.sibling(augmented_collection(config, UNITS)), embedder, batch_size=batch, prune=True)
    faq_report = write_passages(faqs, store.sibling(augmented_collection(config, FAQ)), embedder, batch_size=batch, prune=True)
    return AugmentResult(report, unit_report, faq_report, counter.count)
