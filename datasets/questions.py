"""Question sets in askfirst's JSONL format, as ``dspy.Example``s.

One JSON object per line::

    {"id": "a01", "turns": [{"role": "user", "content": "..."}], "answerability": "ANSWERABLE",
     "gold_answers": ["4,200"], "gold_passages": ["fees-tuition-undergraduate"],
     "clarification_options": [], "kind": "single-hop"}

``answerability`` is one of ANSWERABLE, PARTIAL, UNDERSPECIFIED, UNANSWERABLE (MTRAG-UN's labels).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import dspy

from askfirst.datasets.errors import DataError
from askfirst.datasets.jsonl import read_jsonl

LABELS = ("ANSWERABLE", "PARTIAL", "UNDERSPECIFIED", "UNANSWERABLE")


def demo_questions_path() -> Path:
    return Path(str(resources.files("askfirst.datasets.demo") / "questions.jsonl"))


def _check_turns(turns, where: str) -> list[dict]:
    if not isinstance(turns, list) or not turns:
        raise DataError(f"{where}: 'turns' must be a non-empty list of {{role, content}} objects")
    for t in turns:
        if not isinstance(t, dict) or t.get("role") not in ("user", "assistant") or not isinstance(t.get("content"), str):
            raise DataError(f"{where}: each turn needs role 'user' or 'assistant' and string 'content'")
    if turns[-1]["role"] != "user" or not turns[-1]["content"].strip():
        raise DataError(f"{where}: the last turn must be a non-empty user question")
    return turns


def _optional_name(rec: dict, key: str, where: str) -> str | None:
    """``rec[key]`` as a non-empty string, or ``None`` where it is absent (a number is taken as its text)."""
    value = rec.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
        raise DataError(f"{where}: {key!r} is a non-empty string, not {value!r}")
    return str(value).strip()


def load_questions(spec: str | Path = "demo", *, limit: int | None = None, data_dir: str | None = None) -> list[dspy.Example]:
    """Read a question set: ``"demo"`` (shipped with the demo corpus), a named benchmark set (``mtrag``,
    ``mtrag:cloud``; see ``datasets/sources.py``, read from ``data_dir``) or a JSONL file in askfirst's format.

    Raises:
        DataError: Missing file, malformed line or record (file and line named), or duplicate ids.
    """
    from askfirst.datasets.sources import named_questions

    named = named_questions(str(spec), data_dir=data_dir)
    if named is not None:
        if not named:
            raise DataError(f"question set {spec!r} is empty")
        return named[:limit] if limit else named
    path = demo_questions_path() if str(spec) == "demo" else Path(spec).expanduser()
    examples, seen = [], set()
    for number, rec in read_jsonl(path):
        where = f"{path}:{number}"
        qid = str(rec.get("id", "")).strip()
        if not qid:
            raise DataError(f"{where}: missing 'id'")
        if qid in seen:
            raise DataError(f"{where}: duplicate id {qid!r}")
        seen.add(qid)
        label = rec.get("answerability", "ANSWERABLE")
        if label not in LABELS:
            raise DataError(f"{where}: answerability {label!r} is not one of {', '.join(LABELS)}")
        examples.append(dspy.Example(
            id=qid, conversation=_check_turns(rec.get("turns"), where), answerability=label,
            gold_answers=[str(a) for a in rec.get("gold_answers", [])], gold_passages=[str(p) for p in rec.get("gold_passages", [])],
            clarification_options=[str(o) for o in rec.get("clarification_options", [])], kind=str(rec.get("kind", "")),
            conversation_id=_optional_name(rec, "conversation_id", where), collection=_optional_name(rec, "collection", where),
        ).with_inputs("conversation"))
        if limit and len(examples) >= limit:
            break
    if not examples:
        raise DataError(f"question set {path} is empty")
    return examples
