"""Load a document collection: BEIR/MTRAG-style JSONL (``{_id, title, text}``) or a folder of text files."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from askfirst.datasets.errors import DataError
from askfirst.datasets.jsonl import decode_utf8, read_jsonl

TEXT_SUFFIXES = (".txt", ".md", ".markdown")
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Document:
    """One source document; ``doc_id`` is what citations and qrels point back to."""

    doc_id: str
    title: str
    text: str
    source: str


def demo_corpus_path() -> Path:
    """The demo collection shipped with askfirst (a fictional university's advising handbook)."""
    return Path(str(resources.files("askfirst.datasets.demo") / "corpus.jsonl"))


def resolve_corpus_path(spec: str) -> Path:
    return demo_corpus_path() if spec == "demo" else Path(spec).expanduser()


def _load_jsonl(path: Path) -> list[Document]:
    docs = []
    for number, record in read_jsonl(path):
        doc_id = record.get("_id", record.get("id"))
        text = record.get("text")
        if doc_id is None or not isinstance(text, str) or not str(doc_id).strip():
            raise DataError(f"{path}:{number}: a corpus record needs a non-empty '_id' and a string 'text'")
        docs.append(Document(str(doc_id), str(record.get("title") or ""), text, f"{path}:{number}"))
    return docs


def _load_folder(folder: Path) -> list[Document]:
    docs = []
    for file in sorted(p for p in folder.rglob("*") if p.suffix.lower() in TEXT_SUFFIXES and p.is_file()):
        text = decode_utf8(file.read_bytes(), where=str(file))
        rel = file.relative_to(folder).as_posix()
        first = text.lstrip().splitlines()[0] if text.strip() else ""
        title = first.lstrip("# ").strip() if first.startswith("#") else file.stem.replace("_", " ")
        docs.append(Document(rel.rsplit(".", 1)[0], title, text, str(file)))
    return docs


def load_corpus(spec: str | Path, *, data_dir: str | None = None) -> list[Document]:
    """Read every document of a corpus.

    Args:
        spec: ``"demo"``, a named benchmark corpus (``mtrag``, ``mtrag:cloud``; see ``datasets/sources.py``),
            a ``.jsonl`` file, or a folder of ``.txt``/``.md`` files (ids are relative paths).
        data_dir: The shared data folder for named corpora (default: ``ASKFIRST_DATA_DIR`` or ``../shared/data``).

    Raises:
        DataError: Missing path, malformed line (file and line named), duplicate id, or no documents.
    """
    from askfirst.datasets.sources import named_corpus

    docs = named_corpus(str(spec), data_dir=data_dir)
    return _checked(docs, str(spec)) if docs is not None else load_corpus_file(resolve_corpus_path(str(spec)))


def load_corpus_file(path: Path) -> list[Document]:
    """Read a ``.jsonl`` corpus file or a folder of text files (see ``load_corpus``)."""
    if path.is_dir():
        docs = _load_folder(path)
    elif path.is_file():
        docs = _load_jsonl(path)
    else:
        raise DataError(f"corpus not found: {path} (give a .jsonl file, a folder of .txt/.md files, 'demo' or a named corpus such as 'mtrag')")
    return _checked(docs, str(path))


def _checked(docs: list[Document], where: str) -> list[Document]:
    empty = [d for d in docs if not d.text.strip()]
    if empty:  # nothing to index, but the user should know which files or lines were left out
        logger.warning("corpus %s: %d document(s) with no text left out (first: %s)", where, len(empty), empty[0].source)
    docs = [d for d in docs if d.text.strip()]
    if not docs:
        raise DataError(f"corpus {where} has no documents with text")
    seen: dict[str, str] = {}
    for doc in docs:
        if doc.doc_id in seen:
            raise DataError(f"duplicate document id {doc.doc_id!r} at {doc.source} (first at {seen[doc.doc_id]})")
        seen[doc.doc_id] = doc.source
    return docs
