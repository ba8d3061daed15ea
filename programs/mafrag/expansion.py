"""EVR's query expansion and its KeyMatch score."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from askfirst.datasets.errors import DataError
from askfirst.retrieval.chunking import Passage

_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    "a an and are as at be by can do does for from has have how i in is it its me my of on or that the their there this to was "
    "what when where which who why will with you your".split()
)


def keywords(text: str) -> list[str]:
    """Lower-cased word tokens without stopwords or one-letter words, in order, once each."""
    return list(dict.fromkeys(w for w in _WORD.findall(text.lower()) if w not in STOPWORDS and len(w) > 1))


def key_match(query_keywords: list[str], passage: Passage) -> float:
    """KeyMatch: the share of the expanded query's keywords that occur in the passage's title or text.

    The paper names KeyMatch without defining it; this is the simplest reading (word containment).
    """
    if not query_keywords:
        return 0.0
    words = set(_WORD.findall(f"{passage.title} {passage.text}".lower()))
    return sum(k in words for k in query_keywords) / len(query_keywords)


def hybrid_score(terms: list[str], passage: Passage, cosine: float, *, cosine_weight: float, keymatch_weight: float) -> float:
    """EVR's S_hybrid of a dense hit: ``cosine_weight`` * its cosine + ``keymatch_weight`` * KeyMatch(``terms``, it)
    (the paper's alpha = 0.7 and 1 - alpha)."""
    return cosine_weight * cosine + keymatch_weight * key_match(terms, passage)


def load_synonyms(path: str | None) -> dict[str, list[str]]:
    """The domain dictionary: a YAML mapping of a term to one expansion or a list of them (keys matched case-insensitively).

    Raises:
        DataError: The file is missing or is not such a mapping.
    """
    if not path:
        return {}
    file = Path(path).expanduser()
    if not file.is_file():
        raise DataError(f"mafrag.synonyms_file {file} does not exist")
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise DataError(f"{file}: not a YAML mapping of term -> expansions ({exc})") from None
    if not isinstance(data, dict):
        raise DataError(f"{file}: not a YAML mapping of term -> expansions")
    return {str(k).lower(): [str(v)] if isinstance(v, str) else [str(x) for x in v or []] for k, v in data.items()}


def expand_with_synonyms(query: str, synonyms: dict[str, list[str]]) -> list[str]:
    """Expansions of every dictionary term the query contains (whole words or phrases)."""
    lowered = f" {' '.join(_WORD.findall(query.lower()))} "
    return [e for term, expansions in synonyms.items() if f" {' '.join(_WORD.findall(term))} " in lowered for e in expansions]
