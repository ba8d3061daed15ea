"""Words the collection never uses: a question, or a part of one, about something no document mentions.

The key-term check (``key_terms``) reads the words the assessment names as what is asked about, and the offline 1.5B
sometimes drops the one that matters: "What is the tuition for the medical school?" came back as "tuition", which the
tuition passages have, so the question was asked about instead of "I don't know" (demo u03). This check reads the
user's own words instead, and against the whole collection rather than the passages retrieved, so that a generic
word of a question a passage answers in other words ("skip", "want") rarely counts: a word is known when a retrieved
passage has its stem or the collection's BM25 index has the word or a common inflection of its stem, and a word that
names no topic ("did", "could", "over") is never asked about. A question is cut into its parts (at a sentence end, or
at "and" before a question word: "What is the lab fee, and does the university sell used textbooks?"); a part with
``min_words`` or more unknown content words is not covered. No part covered: the collection cannot answer it. Some
parts covered: it can answer those, which is MTRAG's PARTIAL.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from askfirst.programs.askfirst.key_terms import QUANTITY_WORDS, passage_stems, stem
from askfirst.retrieval.bm25 import tokenize
from askfirst.retrieval.chunking import Passage

_QUESTION_WORDS = "what|how|which|when|where|who|whom|whose|why|whether|is|are|was|were|does|do|did|can|could|will|would|should|may|must"
_PART_BREAK = re.compile(rf"[?!;.]+(?:\s+|$)|,?\s+and\s+(?=(?:{_QUESTION_WORDS})\b)", re.IGNORECASE)


def question_parts(question: str) -> list[str]:
    """``question`` cut at sentence ends and at "and" before a question word; empty parts dropped."""
    return [part.strip() for part in _PART_BREAK.split(question) if part and part.strip()]


def word_forms(token: str) -> list[str]:
    """``token`` and the common inflections of its stem: the forms a BM25 index (which does not stem) is asked for,
    so that "offer" finds a collection that says "offered"."""
    root = stem(token)
    return list(dict.fromkeys([token, root, *(root + end for end in ("s", "es", "e", "ed", "d", "ing"))]))


def term_checker(passages: list[Passage], in_collection: Callable[[str], bool]) -> Callable[[str], bool]:
    """Whether a token is known: a passage of ``passages`` has its stem, or ``in_collection`` (the BM25 index) has one
    of its :func:`word_forms`; the collection is asked only about tokens the passages lack."""
    stems = passage_stems(passages)
    return lambda token: stem(token) in stems or any(in_collection(form) for form in word_forms(token))


@cache
def function_words() -> frozenset[str]:
    """Words that name no topic: scikit-learn's English stop words, plus the auxiliaries that list lacks ("did", "can").

    BM25's stopword list is short (its IDF discounts common words), but this check asks whether the collection has a
    word at all, and a small collection lacks ordinary words: over the 22 paragraphs of 20 SQuAD2 questions, "Who could
    handle the calculations at that time?" had "could" and "handle" unknown, and so did not count as covered.
    """
    # Imported on first use: scikit-learn takes seconds to import, and sentence-transformers has usually loaded it by then.
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return ENGLISH_STOP_WORDS | frozenset(_QUESTION_WORDS.split("|"))


def content_words(text: str) -> list[str]:
    """``text``'s BM25 tokens without function words and quantity words: the words that can name what it asks about."""
    no_topic = function_words()
    return [t for t in tokenize(text) if t not in no_topic and t not in QUANTITY_WORDS]


def coverage(question: str, known: Callable[[str], bool], *, min_words: int) -> dict:
    """The check's record: ``{"parts": [{"part", "unknown", "covered"}], "uncovered": n, "verdict", "overruled"}``, where
    a part with at least ``min_words`` unknown words is uncovered, the verdict is ``"none"`` (no part covered), ``"some"`` or
    ``"all"``, and ``overruled`` is left for the program (the label a ``"some"`` verdict turned into PARTIAL)."""
    parts = []
    for part in question_parts(question):
        words = content_words(part)
        if words:  # a part of function words only ("and you?", "could you?") says nothing either way
            unknown = list(dict.fromkeys(t for t in words if not known(t)))  # once each, in order
            parts.append({"part": part, "unknown": unknown, "covered": len(unknown) < min_words})
    uncovered = sum(not p["covered"] for p in parts)
    verdict = "all" if not uncovered else "none" if uncovered == len(parts) else "some"
    return {"parts": parts, "uncovered": uncovered, "verdict": verdict, "overruled": None}
