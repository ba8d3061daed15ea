"""Named benchmark sources read from the shared data folder: ``name`` or ``name:variant`` in ``data.corpus``
and ``data.questions`` (for example ``mtrag``, ``mtrag:cloud``, ``mtrag_synthetic`` (questions only, over ``mtrag``'s pool;
``mtrag_synthetic:cloud``), ``urasys:squad2``, ``urasys:squad2_ambiguous``, ``asqa``, ``ambignq`` (questions only),
``multihop:hotpot|musique|wikihop``).

A name that is not registered here is read as a path, so a file called ``mtrag`` still needs ``./mtrag``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import dspy

from askfirst.datasets.ambiguous_qa import load_ambignq_questions, load_asqa_corpus, load_asqa_questions
from askfirst.datasets.corpus import Document, load_corpus_file
from askfirst.datasets.errors import DataError
from askfirst.datasets.mtrag import COLLECTIONS, load_mtrag_synthetic, load_mtrag_tasks, passage_pool_path
from askfirst.datasets.multihop import load_multihop_corpus, load_multihop_questions
from askfirst.datasets.shared_data import shared_data_dir
from askfirst.datasets.urasys import load_urasys_corpus, load_urasys_questions


def _mtrag_collections(variant: str | None) -> tuple[str, ...]:
    if variant is None:
        return COLLECTIONS
    if variant not in COLLECTIONS:
        raise DataError(f"unknown MTRAG collection {variant!r}; choose from {', '.join(COLLECTIONS)}")
    return (variant,)


def _mtrag_corpus(data_dir: Path, variant: str | None) -> list[Document]:
    docs: list[Document] = []
    for name in _mtrag_collections(variant):
        docs += load_corpus_file(passage_pool_path(data_dir, name))
    return docs


def _in_collections(load: Callable[[Path], list[dspy.Example]]) -> Callable[[Path, str | None], list[dspy.Example]]:
    """An MTRAG task loader as a question source whose variant keeps one collection's tasks (``mtrag:cloud``)."""
    def questions(data_dir: Path, variant: str | None) -> list[dspy.Example]:
        keep = set(_mtrag_collections(variant))
        return [e for e in load(data_dir) if e.collection in keep]
    return questions


CORPORA: dict[str, Callable[[Path, str | None], list[Document]]] = {
    "mtrag": _mtrag_corpus, "urasys": load_urasys_corpus, "asqa": load_asqa_corpus, "multihop": load_multihop_corpus,
}
QUESTION_SETS: dict[str, Callable[[Path, str | None], list[dspy.Example]]] = {
    "mtrag": _in_collections(load_mtrag_tasks), "urasys": load_urasys_questions, "asqa": load_asqa_questions, "ambignq": load_ambignq_questions,
    "multihop": load_multihop_questions, "mtrag_synthetic": _in_collections(load_mtrag_synthetic),
}


_VARIANT = re.compile(r"[A-Za-z0-9_,-]*")


def _lookup(spec: str, registry: dict) -> tuple[Callable, str | None] | None:
    name, _, variant = str(spec).partition(":")
    return (registry[name], variant or None) if name in registry else None


def is_named_source(spec: str) -> bool:
    """Whether ``spec`` names a registered corpus or question set with a well-formed variant (so it is no path)."""
    found = _lookup(spec, CORPORA) or _lookup(spec, QUESTION_SETS)
    return found is not None and bool(_VARIANT.fullmatch(found[1] or ""))


def _data_dir(configured: str | None) -> Path:
    root = shared_data_dir(configured)
    if not root.is_dir():
        raise DataError(f"shared data folder not found: {root} (set ASKFIRST_DATA_DIR or data.shared_data_dir)")
    return root


def named_corpus(spec: str, *, data_dir: str | None = None) -> list[Document] | None:
    """The documents of a registered corpus name, or ``None`` when ``spec`` is not one (it is a path)."""
    found = _lookup(spec, CORPORA)
    return found[0](_data_dir(data_dir), found[1]) if found else None


def named_questions(spec: str, *, data_dir: str | None = None) -> list[dspy.Example] | None:
    """The examples of a registered question-set name, or ``None`` when ``spec`` is not one (it is a path)."""
    found = _lookup(spec, QUESTION_SETS)
    return found[0](_data_dir(data_dir), found[1]) if found else None
