"""Multi-hop QA samples (``multihop/{hotpot,musique,wikihop}_dev.jsonl``) with their paragraphs as the corpus.

HotpotQA and 2WikiMultiHopQA give ``context`` as ``[title, [sentences]]`` and supporting facts by title;
MuSiQue gives ``paragraphs`` with ``is_supporting``. Paragraph ids are content hashes, so a paragraph shared by
several questions is indexed once.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import dspy

from askfirst.datasets.corpus import Document
from askfirst.datasets.errors import DataError
from askfirst.datasets.jsonl import read_jsonl

SETS = {"hotpot": "hotpot_dev.jsonl", "musique": "musique_dev.jsonl", "wikihop": "wikihop_dev.jsonl"}


def _path(data_dir: Path, name: str | None) -> Path:
    if name not in SETS:
        raise DataError(f"unknown multi-hop set {name!r}; use multihop:<set> with one of {', '.join(SETS)}")
    return data_dir / "multihop" / SETS[name]


def _paragraph_id(title: str, text: str) -> str:
    return "mh-" + hashlib.sha1(f"{title}\n{text}".encode()).hexdigest()[:12]


def _paragraphs(record: dict) -> list[tuple[str, str, bool]]:
    """``(title, text, supporting)`` for each paragraph of a record, in either schema."""
    if "paragraphs" in record:
        return [(str(p.get("title", "")), str(p.get("paragraph_text", "")), bool(p.get("is_supporting"))) for p in record["paragraphs"]]
    supporting = {title for title, _ in record.get("supporting_facts") or []}
    return [(str(title), "".join(sentences).strip(), title in supporting) for title, sentences in record.get("context") or []]


def load_multihop_corpus(data_dir: Path, name: str | None) -> list[Document]:
    path, docs = _path(data_dir, name), {}
    for number, record in read_jsonl(_path(data_dir, name)):
        for title, text, _ in _paragraphs(record):
            pid = _paragraph_id(title, text)
            docs.setdefault(pid, Document(pid, title, text, f"{path}:{number}"))
    return list(docs.values())


def load_multihop_questions(data_dir: Path, name: str | None) -> list[dspy.Example]:
    path, examples = _path(data_dir, name), []
    for number, record in read_jsonl(path):
        paragraphs = _paragraphs(record)
        if not record.get("question"):
            raise DataError(f"{path}:{number}: a multi-hop record needs a 'question'")
        answerable = record.get("answerable", True)
        answers = [str(record.get("answer", "")), *[str(a) for a in record.get("answer_aliases") or []]]
        examples.append(dspy.Example(
            id=f"{name}-{record.get('_id', record.get('id', number))}", conversation=[{"role": "user", "content": record["question"]}],
            answerability="ANSWERABLE" if answerable else "UNANSWERABLE", gold_answers=[a for a in answers if a] if answerable else [],
            gold_passages=sorted({_paragraph_id(t, x) for t, x, s in paragraphs if s}), clarification_options=[], kind=name,
        ).with_inputs("conversation"))
    return examples
