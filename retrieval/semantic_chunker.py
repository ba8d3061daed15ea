"""Semantic chunking (URASys Phase 1): break a document where the meaning of adjacent sentences shifts.

Each sentence is embedded together with its neighbours (a buffer of ``buffer`` sentences either side), and
the document breaks between two sentences whose cosine distance is above the ``percentile``-th percentile
of the document's distances (80 in the URASys authors' code). Chunks are then held between ``min_chars`` and
``max_chars``: a longer one is split at the sentence where its own distance peaks, a shorter one is merged
into its nearer neighbour. Every chunk keeps its character span in the document, for citation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+[\"')\]]*|\n+|$)")


@dataclass(frozen=True)
class Span:
    """A chunk of a document: its text and ``[start, end)`` character offsets in the document."""

    start: int
    end: int
    text: str


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence, whitespace trimmed; a sentence ends at . ! ? or a line break."""
    spans = []
    for match in _SENTENCE.finditer(text):
        raw = match.group()
        stripped = raw.strip()
        if stripped:
            start = match.start() + raw.index(stripped[0])
            spans.append((start, start + len(stripped)))
    return spans


class SemanticChunker:
    """Split documents at drops in adjacent-sentence similarity, within size bounds.

    Args:
        embed: ``embed(list_of_texts) -> (n, dim)`` array of normalised vectors (``Embedder.embed``).
        percentile: A gap whose distance is above this percentile of the document's gaps is a break.
        min_chars: Chunks shorter than this are merged into a neighbour (a whole short document stays one chunk).
        max_chars: Chunks longer than this are split at their largest internal gap (a single longer
            sentence is kept whole).
        buffer: Neighbouring sentences embedded with each sentence, which steadies the distances.
    """

    def __init__(self, embed, *, percentile: float = 80.0, min_chars: int = 100, max_chars: int = 1000, buffer: int = 1):
        if not 0 < min_chars < max_chars:
            raise ValueError(f"need 0 < min_chars < max_chars, got {min_chars} and {max_chars}")
        self.embed, self.percentile, self.min_chars, self.max_chars, self.buffer = embed, percentile, min_chars, max_chars, buffer

    def gaps(self, text: str, sentences: list[tuple[int, int]]) -> np.ndarray:
        """Cosine distance between each sentence (with its buffer) and the next; ``len(sentences) - 1`` values."""
        windows = [text[sentences[max(0, i - self.buffer)][0] : sentences[min(len(sentences) - 1, i + self.buffer)][1]]
                   for i in range(len(sentences))]
        vectors = np.asarray(self.embed(windows), dtype=np.float32)
        return 1.0 - np.sum(vectors[:-1] * vectors[1:], axis=1)

    def split(self, text: str) -> list[Span]:
        sentences = sentence_spans(text)
        if len(sentences) <= 1 or len(text.strip()) <= self.min_chars:
            return [Span(sentences[0][0], sentences[-1][1], text[sentences[0][0] : sentences[-1][1]])] if sentences else []
        gaps = self.gaps(text, sentences)
        threshold = float(np.percentile(gaps, self.percentile))
        breaks = [i + 1 for i, g in enumerate(gaps) if g > threshold]  # chunk boundaries, as sentence indices
        groups = self._bounded(list(zip([0, *breaks], [*breaks, len(sentences)], strict=True)), sentences, gaps)
        return [Span(sentences[a][0], sentences[b - 1][1], text[sentences[a][0] : sentences[b - 1][1]]) for a, b in groups]

    def _chars(self, group: tuple[int, int], sentences) -> int:
        return sentences[group[1] - 1][1] - sentences[group[0]][0]

    def _bounded(self, groups: list[tuple[int, int]], sentences, gaps: np.ndarray) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        stack = list(reversed(groups))
        while stack:  # split what is too long at its largest internal gap
            a, b = stack.pop()
            if self._chars((a, b), sentences) > self.max_chars and b - a > 1:
                cut = a + 1 + int(np.argmax(gaps[a : b - 1]))
                stack += [(cut, b), (a, cut)]
            else:
                out.append((a, b))
        merged = True
        while merged and len(out) > 1:  # merge what is too short into the neighbour across the smaller gap
            merged = False
            for i, group in enumerate(out):
                if self._chars(group, sentences) >= self.min_chars:
                    continue
                left = gaps[group[0] - 1] if i > 0 else np.inf
                right = gaps[group[1] - 1] if i + 1 < len(out) else np.inf
                j = i - 1 if left <= right else i + 1
                lo, hi = sorted((i, j))
                out[lo : hi + 1] = [(out[lo][0], out[hi][1])]
                merged = True
                break
        return out
