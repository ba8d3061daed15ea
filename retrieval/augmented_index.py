"""The URASys two-phase index, built resumably: a ledger records every finished chunk, so a re-run after an
interruption or after adding documents pays LM calls only for chunks that are new or changed.

Retrieval units: ``<doc_id>~u<n>`` is the n-th chunk of a document (title + rewritten chunk);
``<unit>~q<j>.<l>`` is paraphrase ``l`` of that chunk's FAQ ``j`` (``l = 0`` is the FAQ Creator's own question).
Both keep the source document as ``doc_id``, so citations and qrels resolve to documents, and an FAQ id
names its chunk (``faq_source_unit``).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from askfirst.datasets.corpus import Document
from askfirst.datasets.jsonl import append_record, read_checkpoint
from askfirst.retrieval.chunking import Passage
from askfirst.retrieval.semantic_chunker import SemanticChunker

logger = logging.getLogger(__name__)
LEDGER_FILE = "ledger.jsonl"
DOCUMENT_CHARS = 6000  # the chunk rewriter sees at most this much of the document around the chunk


def document_context(document: str, start: int, end: int, *, max_chars: int = DOCUMENT_CHARS) -> str:
    """The document, or for a long one the window of ``max_chars`` characters centred on the chunk."""
    if len(document) <= max_chars:
        return document
    middle = (start + end) // 2
    lo = max(0, min(middle - max_chars // 2, len(document) - max_chars))
    return document[lo : lo + max_chars]


def unit_id(doc_id: str, n: int) -> str:
    return f"{doc_id}~u{n}"


def faq_id(unit: str, j: int, paraphrase: int) -> str:
    return f"{unit}~q{j}.{paraphrase}"


def faq_source_unit(faq_passage_id: str) -> str:
    """The chunk an FAQ entry was written from."""
    return faq_passage_id.rsplit("~q", 1)[0]


@dataclass
class AugmentReport:
    chunks: int
    processed: int  # chunks that went through the LM steps in this run
    reused: int  # chunks taken from the ledger
    failed: int  # chunks whose LM steps failed; kept with fallbacks, and retried next run
    faqs: int
    seconds: float


def read_ledger(path: Path) -> dict[str, dict]:
    """Finished chunks by unit id (a line cut by an interruption is skipped: that chunk is processed again)."""
    return read_checkpoint(path, key="unit_id")


def augment_corpus(docs: list[Document], *, chunker: SemanticChunker, chunk_and_title, ask_and_augment, ledger: Path,
                   settings: str, progress: Callable[[int, int, str], None] | None = None) -> tuple[list[Passage], list[Passage], AugmentReport]:
    """Chunk, rewrite and title every document, and write FAQs for every chunk, reusing finished chunks.

    Args:
        chunk_and_title: ``(chunk=, document=, document_title=) -> Prediction(text, title)``, or ``None`` to keep
            raw chunks under their document's title.
        ask_and_augment: ``(titled_chunk) -> [{question, answer, paraphrases}]``.
        ledger: JSONL file of finished chunks (appended as each finishes).
        settings: What else the outputs depend on (LM, m, k, switches); a change re-processes every chunk.
        progress: Called as ``progress(done, total, unit_id)`` after each chunk.

    Returns:
        The document units, the FAQ entries, and a report.
    """
    start = time.perf_counter()
    ledger.parent.mkdir(parents=True, exist_ok=True)
    finished = read_ledger(ledger)
    # A document whose text and settings are unchanged and whose every chunk is in the ledger is not even
    # re-chunked (chunking embeds every sentence), so an `ask` on an indexed corpus starts at once.
    by_version: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for rec in finished.values():
        by_version[rec["doc_id"], rec.get("doc_key", "")].append(rec)
    work: list[tuple[Document, int, object, str, int]] = []  # (doc, n, span or ledger record, doc key, chunks in doc)
    for doc in docs:
        doc_key = hashlib.sha256(f"{settings}\n{doc.title}\n{doc.text}".encode()).hexdigest()[:16]
        done = sorted(by_version[doc.doc_id, doc_key], key=lambda r: r["start"])
        if done and len(done) == done[0].get("doc_chunks"):
            work += [(doc, n, rec, doc_key, len(done)) for n, rec in enumerate(done)]
        else:
            spans = chunker.split(doc.text)
            work += [(doc, n, span, doc_key, len(spans)) for n, span in enumerate(spans)]
    units, faqs = [], []
    processed = reused = failed = 0
    with ledger.open("a", encoding="utf-8") as out:
        for i, (doc, n, span, doc_key, doc_chunks) in enumerate(work, start=1):
            uid = unit_id(doc.doc_id, n)
            if isinstance(span, dict):
                rec = span
                reused += 1
            else:
                key = hashlib.sha256(f"{settings}\n{doc.title}\n{span.text}".encode()).hexdigest()[:16]
                rec, ok = finished.get(uid), True
                if rec is not None and rec["key"] == key:
                    reused += 1
                else:
                    rec, ok = _process(doc, span, uid, key, chunk_and_title, ask_and_augment)
                    processed += 1
                    failed += not ok
                stamped = rec | {"doc_key": doc_key, "doc_chunks": doc_chunks}
                if ok and stamped != rec:  # a new chunk, or a reused one not yet recorded under this document version
                    append_record(out, stamped)
                rec = stamped
            units.append(Passage(uid, doc.doc_id, rec["title"], rec["text"]))
            for j, faq in enumerate(rec["faqs"]):
                for l, question in enumerate([faq["question"], *faq["paraphrases"]]):
                    faqs.append(Passage(faq_id(uid, j, l), doc.doc_id, question, f"Q: {question}\nA: {faq['answer']}"))
            if progress:
                progress(i, len(work), uid)
    return units, faqs, AugmentReport(len(work), processed, reused, failed, len(faqs), time.perf_counter() - start)


def _process(doc: Document, span, uid: str, key: str, chunk_and_title, ask_and_augment) -> tuple[dict, bool]:
    from askfirst.programs.common.robust import StepFailed  # the one failure an LM step reports

    rec = {"unit_id": uid, "key": key, "doc_id": doc.doc_id, "start": span.start, "end": span.end,
           "title": doc.title, "text": span.text, "faqs": []}
    try:
        if chunk_and_title is not None:
            unit = chunk_and_title(chunk=span.text, document=document_context(doc.text, span.start, span.end), document_title=doc.title)
            rec["title"], rec["text"] = unit.title, unit.text
        rec["faqs"] = ask_and_augment(titled_chunk=f"# {rec['title']}\n{rec['text']}")
    except StepFailed as exc:
        # Kept with what finished (or the raw chunk), but not recorded, so the next run tries it again.
        logger.warning("chunk %s: %s", uid, exc)
        return rec, False
    return rec, True
