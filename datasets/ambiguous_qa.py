"""ASQA (``asqa/asqa_dev_half.json``) with its annotators' Wikipedia snippets as the corpus, and AmbigNQ light
(``ambignq/dev_light.json``, questions only: the release has no passages, so pair it with another corpus).

Every ASQA question is ambiguous: ``qa_pairs`` holds each interpretation's clarified question and short-answer
aliases (what STR-EM and Disambig-F1 score), ``clarification_options`` the clarified questions, ``reference``
the first annotator's long answer.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import dspy

from askfirst.datasets.corpus import Document
from askfirst.datasets.errors import DataError
from askfirst.datasets.jsonl import read_json


def _load(path: Path) -> list[dict]:
    records = read_json(path)
    if not isinstance(records, list):
        raise DataError(f"{path}: expected a list of records")
    return records


def _snippet_id(text: str) -> str:
    return "asqa-" + hashlib.sha1(text.encode()).hexdigest()[:12]


def _snippets(record: dict) -> list[tuple[str, str]]:
    return [(str(k.get("wikipage") or ""), k["content"]) for a in record.get("annotations") or [] for k in a.get("knowledge") or [] if k.get("content")]


def load_asqa_corpus(data_dir: Path, _variant: str | None = None) -> list[Document]:
    path = data_dir / "asqa" / "asqa_dev_half.json"
    docs: dict[str, Document] = {}
    for number, record in enumerate(_load(path), start=1):
        for title, text in _snippets(record):
            docs.setdefault(_snippet_id(text), Document(_snippet_id(text), title, text, f"{path}[{number}]"))
    return list(docs.values())


def load_asqa_questions(data_dir: Path, _variant: str | None = None) -> list[dspy.Example]:
    path = data_dir / "asqa" / "asqa_dev_half.json"
    examples = []
    for number, record in enumerate(_load(path), start=1):
        pairs = [(str(p["question"]), [str(a) for a in p.get("short_answers") or []]) for p in record.get("qa_pairs") or []]
        if not record.get("ambiguous_question") or not pairs:
            raise DataError(f"{path}[{number}]: an ASQA record needs 'ambiguous_question' and 'qa_pairs'")
        annotations = record.get("annotations") or [{}]
        examples.append(dspy.Example(
            id=f"asqa-{record.get('id', number)}", conversation=[{"role": "user", "content": record["ambiguous_question"]}],
            answerability="UNDERSPECIFIED", gold_answers=[a for _, aliases in pairs for a in aliases], qa_pairs=pairs,
            clarification_options=[q for q, _ in pairs], gold_passages=sorted({_snippet_id(t) for _, t in _snippets(record)}),
            reference=str(annotations[0].get("long_answer") or ""), kind="asqa",
        ).with_inputs("conversation"))
    return examples


def load_ambignq_questions(data_dir: Path, _variant: str | None = None) -> list[dspy.Example]:
    """AmbigNQ light: singleAnswer questions are ANSWERABLE; multipleQAs ones UNDERSPECIFIED, with their readings."""
    path = data_dir / "ambignq" / "dev_light.json"
    examples = []
    for number, record in enumerate(_load(path), start=1):
        annotations = record.get("annotations") or []
        multi = [a for a in annotations if a.get("type") == "multipleQAs"]
        if multi:
            pairs = [(str(p["question"]), [str(x) for x in p.get("answer") or []]) for p in multi[0].get("qaPairs") or []]
            label, answers = "UNDERSPECIFIED", [a for _, aliases in pairs for a in aliases]
        else:
            pairs, label = [], "ANSWERABLE"
            answers = [str(x) for a in annotations for x in a.get("answer") or []]
        examples.append(dspy.Example(
            id=f"ambignq-{record.get('id', number)}", conversation=[{"role": "user", "content": str(record.get("question", ""))}],
            answerability=label, gold_answers=answers, qa_pairs=pairs, clarification_options=[q for q, _ in pairs],
            gold_passages=[], kind="ambignq",
        ).with_inputs("conversation"))
    return examples
