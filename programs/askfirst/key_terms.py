"""What the question asks about, checked against the passages: MAF-RAG's KeyMatch (the share of the query's keywords
in a passage) turned into an answerability check. A question about a parking permit over passages on fees shares
"how much" with them but not "parking": the thing it asks about is absent, however close the topic. The small
assessment LM misses that (measured on the demo: both fee and tuition passages were taken to answer it), so the
check is lexical, on the words the assessment itself names as what is asked about, Porter-stemmed, against every
passage retrieved."""

from __future__ import annotations

from functools import cache

from askfirst.retrieval.bm25 import tokenize
from askfirst.retrieval.chunking import Passage

# Words that name a quantity rather than the thing asked about ("the cost of a single room").
QUANTITY_WORDS = frozenset("much many long cost costs price amount number maximum minimum total".split())


@cache
def stem(word: str) -> str:
    """Porter's stem (nltk's, which rouge-score already brings): "starts" and "starting" count as "start"."""
    return _porter().stem(word)


@cache
def _porter():
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


def content_stems(text: str) -> set[str]:
    """The stems of ``text``'s content words: BM25's tokens (lower-cased, stopwords dropped) without quantity words."""
    return {stem(t) for t in tokenize(text) if t not in QUANTITY_WORDS}


def passage_stems(passages: list[Passage]) -> set[str]:
    """The stems of every BM25 token in ``passages``' titles and texts."""
    return {stem(t) for p in passages for t in tokenize(f"{p.title} {p.text}")}


def documents_with(word: str, passages: list[Passage]) -> set[str]:
    """The ids of the documents among ``passages`` that have ``word`` (by stem) in a title or text."""
    target = stem(word.lower())
    return {p.doc_id for p in passages if target in passage_stems([p])}


def unmatched_terms(text: str, passages: list[Passage]) -> list[str]:
    """The content words of ``text`` (BM25's tokens: lower-cased, stopwords and quantity words dropped) that appear in
    no passage's title or text, once each, in order."""
    seen = passage_stems(passages)
    return list(dict.fromkeys(t for t in tokenize(text) if t not in QUANTITY_WORDS and stem(t) not in seen))


def echoes(text: str, description: str) -> bool:
    """Whether ``text`` has content words and all of them are ``description``'s: an output that repeats its field's
    description ("What the question asks about, in its own words, a few words", written by the offline 1.5B on
    MTRAG-UN) rather than filling it in."""
    stems = content_stems(text)
    return bool(stems) and stems <= content_stems(description)
