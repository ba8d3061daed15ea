"""What the collection's BM25 index says of a word: whether some passage has it, and how many do.

The askfirst program's lexical signals (words the collection never uses, the rarest word of a question) ask the
whole collection, not the passages retrieved; these read the retriever's lexical index, and say nothing that could
make a check fire when the retriever has none.
"""

from __future__ import annotations

from typing import Any


def has_term(retriever: Any, token: str) -> bool:
    """Whether the BM25 index of ``retriever`` has ``token`` (one of BM25's tokens) in some passage; ``True`` when it
    has no lexical index to ask, so a check built on it cannot fire on a guess."""
    lexical = getattr(retriever, "lexical", None)
    return lexical is None or bool(lexical.search(token, 1))


def document_frequency(retriever: Any, token: str) -> int | None:
    """How many passages have ``token`` (one of BM25's tokens), from the BM25 index of ``retriever``; ``None`` when it
    has no lexical index to ask."""
    lexical = getattr(retriever, "lexical", None)
    return None if lexical is None else lexical.document_frequency(token)
