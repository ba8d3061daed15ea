"""Split long documents into passages on sentence boundaries, with ids stable across runs."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from askfirst.datasets.corpus import Document

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n{2,}")


@dataclass(frozen=True)
class Passage:
    """The indexed and cited unit. ``passage_id`` equals ``doc_id`` when the document is not split,
    so qrels written against document ids still match."""

    passage_id: str
    doc_id: str
    title: str
    text: str

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(f"{self.title}\n{self.text}".encode()).hexdigest()[:16]


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def _word_windows(words: list[str], max_words: int) -> list[str]:
    return [" ".join(words[i : i + max_words]) for i in range(0, len(words), max_words)]


def chunk_document(doc: Document, *, max_words: int = 180, overlap_sentences: int = 1) -> list[Passage]:
    """Cut a document into passages of at most ``max_words`` words.

    Sentences are kept whole unless one alone is longer than ``max_words``; consecutive chunks share
    ``overlap_sentences`` sentences so a fact on a boundary is retrievable from either side.
    Chunk ids are ``<doc_id>#<n>`` and depend only on the text, so re-indexing yields the same ids.
    """
    if len(doc.text.split()) <= max_words:
        return [Passage(doc.doc_id, doc.doc_id, doc.title, doc.text.strip())]
    units: list[str] = []
    for sentence in split_sentences(doc.text):
        words = sentence.split()
        units.extend(_word_windows(words, max_words) if len(words) > max_words else [sentence])
    chunks: list[list[str]] = []
    current: list[str] = []
    for unit in units:
        if current and sum(len(u.split()) for u in current) + len(unit.split()) > max_words:
            chunks.append(current)
            kept = current[-overlap_sentences:] if overlap_sentences else []
            # Overlap only while it leaves room for the next unit; otherwise the chunk would overflow.
            while kept and sum(len(u.split()) for u in kept) + len(unit.split()) > max_words:
                kept = kept[1:]
            current = list(kept)
        current.append(unit)
    if current:
        chunks.append(current)
    return [Passage(f"{doc.doc_id}#{n}", doc.doc_id, doc.title, " ".join(c)) for n, c in enumerate(chunks)]


def chunk_corpus(docs: list[Document], *, max_words: int = 180, overlap_sentences: int = 1) -> list[Passage]:
    return [p for d in docs for p in chunk_document(d, max_words=max_words, overlap_sentences=overlap_sentences)]
