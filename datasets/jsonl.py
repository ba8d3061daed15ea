"""Line-by-line JSONL reading that names the file and line of any malformed record."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from askfirst.datasets.errors import DataError


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, record)`` for each non-blank line.

    Raises:
        DataError: The file is missing, or a line is not a JSON object (message: ``file:line: why``).
    """
    p = Path(path)
    if not p.is_file():
        raise DataError(f"file not found: {p}")
    with p.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{p}:{number}: malformed JSON ({exc.msg} at column {exc.colno})") from None
            if not isinstance(record, dict):
                raise DataError(f"{p}:{number}: expected a JSON object, got {type(record).__name__}")
            yield number, record


def read_checkpoint(path: str | Path, *, key: str) -> dict[str, dict]:
    """Records of an append-only progress file (predictions, an index ledger) by ``record[key]``; the last wins.

    A missing file is an empty checkpoint, and a line cut short by an interruption is skipped, so that item
    is simply done again.
    """
    done: dict[str, dict] = {}
    p = Path(path)
    if p.is_file():
        for line in p.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict) and key in rec:
                done[rec[key]] = rec
    return done


def read_json(path: str | Path, *, what: str = "file") -> object:
    """One JSON document.

    Raises:
        DataError: ``<what> not found: path``, or ``path:line: malformed JSON (why)``.
    """
    p = Path(path)
    if not p.is_file():
        raise DataError(f"{what} not found: {p}")
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{p}:{exc.lineno}: malformed JSON ({exc.msg})") from None
