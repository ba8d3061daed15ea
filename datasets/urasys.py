"""The URASys paper's question sets (``../shared/data/urasys/*_dev.csv``), with their paragraphs as the corpus.

Standard sets (``*_1000_dev.csv``: paragraph, question, answer): an answer of "No answer" (or empty) marks an
unanswerable question. Ambiguous sets (``*_ambious_dev.csv``: question, info, answer, paragraph): every
question is UNDERSPECIFIED and ``info`` (a JSON list) says what a clarification must ask for.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import json
from pathlib import Path

import dspy

from askfirst.datasets.corpus import Document
from askfirst.datasets.errors import DataError

SETS = {
    "squad2": "Squad2_1000_dev.csv", "squad2_ambiguous": "Squad2_ambious_dev.csv",
    "viquad2": "Viquad2_1000_dev.csv", "viquad2_ambiguous": "Viquad2_ambious_dev.csv",
    "vimqa": "VimQA_1000_dev.csv", "uniqa": "UniQA_1000_anonymous_dev.csv", "uniqa_ambiguous": "UniQA_ambious_anonymous_dev.csv",
}
NO_ANSWER = {"", "no answer", "không đủ thông tin để trả lời"}


def _path(data_dir: Path, name: str | None) -> Path:
    if name not in SETS:
        raise DataError(f"unknown URASys set {name!r}; use urasys:<set> with one of {', '.join(SETS)}")
    return data_dir / "urasys" / SETS[name]


def _paragraphs(cell: str, where: str) -> list[tuple[str, str]]:
    """``(title, text)`` of each paragraph: a plain text, or the standard sets' Python-literal list of
    ``{title, paragraph_text}`` whose text is itself a list literal of strings."""
    cell = (cell or "").strip()
    if not cell.startswith("[{"):
        return [("", cell)] if cell else []
    try:
        items = ast.literal_eval(cell)
        out = []
        for item in items:
            text = item.get("paragraph_text", "")
            parts = ast.literal_eval(text) if isinstance(text, str) and text.startswith("[") else [text]
            out.append((str(item.get("title", "")), " ".join(str(p) for p in parts)))
        return out
    except (ValueError, SyntaxError, AttributeError) as exc:
        raise DataError(f"{where}: unreadable 'paragraph' ({type(exc).__name__})") from None


def _doc_id(text: str) -> str:
    return "p-" + hashlib.sha1(text.encode()).hexdigest()[:12]


def _rows(path: Path):
    if not path.is_file():
        raise DataError(f"URASys question set not found: {path}")
    with path.open(encoding="utf-8", newline="") as handle:
        for number, row in enumerate(csv.DictReader(handle), start=2):  # line 1 is the header
            if not (row.get("question") or "").strip():
                raise DataError(f"{path}:{number}: missing 'question'")
            yield number, row, _paragraphs(row.get("paragraph", ""), f"{path}:{number}")


def load_urasys_corpus(data_dir: Path, name: str | None) -> list[Document]:
    """Every distinct paragraph of the set, once; ids are content hashes, so both files of a language agree."""
    docs: dict[str, Document] = {}
    path = _path(data_dir, name)
    for number, _, paragraphs in _rows(path):
        for title, text in paragraphs:
            doc_id = _doc_id(text)
            docs.setdefault(doc_id, Document(doc_id, title, text, f"{path}:{number}"))
    return list(docs.values())


def load_urasys_questions(data_dir: Path, name: str | None) -> list[dspy.Example]:
    path = _path(data_dir, name)
    ambiguous = name.endswith("_ambiguous")
    examples = []
    for number, row, paragraphs in _rows(path):
        answer = (row.get("answer") or "").strip()
        unanswerable = not ambiguous and answer.lower() in NO_ANSWER
        try:
            info = [str(i) for i in json.loads(row["info"])] if ambiguous and row.get("info") else []
        except json.JSONDecodeError:
            raise DataError(f"{path}:{number}: 'info' is not a JSON list") from None
        examples.append(dspy.Example(
            id=f"{name}-{number}", conversation=[{"role": "user", "content": row["question"].strip()}],
            answerability="UNDERSPECIFIED" if ambiguous else "UNANSWERABLE" if unanswerable else "ANSWERABLE",
            gold_answers=[] if unanswerable or ambiguous else [answer], gold_passages=[_doc_id(t) for _, t in paragraphs],
            clarification_options=info, kind=name, reference=answer,
        ).with_inputs("conversation"))
    return examples
