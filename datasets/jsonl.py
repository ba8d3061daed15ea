"""Line-by-line JSONL reading that names the file and line of any malformed record."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO

from askfirst.datasets.errors import DataError

logger = logging.getLogger(__name__)


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, record)`` for each non-blank line.

    Raises:
        DataError: The file is missing, or a line is not a JSON object (message: ``file:line: why``).
    """
    p = Path(path)
    if not p.is_file():
        raise DataError(f"file not found: {p}")
    offset = 0
    with p.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            line = decode_utf8(raw, where=f"{p}:{number}", offset=offset)
            offset += len(raw)
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{p}:{number}: malformed JSON ({exc.msg} at column {exc.colno})") from None
            if not isinstance(record, dict):
                raise DataError(f"{p}:{number}: expected a JSON object, got {type(record).__name__}")
            yield number, record


def decode_utf8(data: bytes, *, where: str, offset: int = 0) -> str:
    """``data`` as UTF-8 text.

    Raises:
        DataError: ``<where>: not UTF-8 text (byte N of the file: why)``, N counted from the file's start.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{where}: not UTF-8 text (byte {offset + exc.start} of the file: {exc.reason}); "
                        "save it as UTF-8") from None


def read_checkpoint(path: str | Path, *, key: str) -> dict[str, dict]:
    """Records of an append-only progress file (predictions, an index ledger, judged rows) by ``record[key]``;
    the last wins.

    A missing file is an empty checkpoint. A last line cut short by an interruption (no newline; possibly
    inside a multi-byte character) is cut off the file, so the next append starts a clean line and the file
    stays valid JSONL; that item is simply done again. A complete line that does not parse is skipped with a
    warning naming its file and line.
    """
    p = Path(path)
    if not p.is_file():
        return {}
    data = p.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        logger.warning("%s: dropping a last line cut short by an interruption (%d bytes); that item is done again", p, len(data) - end)
        with p.open("r+b") as handle:
            handle.truncate(end)
        data = data[:end]
    done: dict[str, dict] = {}
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            logger.warning("%s:%d: skipping a malformed line (%s)", p, number, exc)
            continue
        if isinstance(rec, dict) and key in rec:
            done[rec[key]] = rec
    return done


def append_record(handle: IO[str], record: dict) -> None:
    """Append one record as one line and flush it, so a finished item survives an interruption."""
    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    handle.flush()


def write_jsonl(path: str | Path, records: Iterable[dict]) -> None:
    """Write ``records`` to ``path`` (replacing it), one line each, each flushed as it is written."""
    with Path(path).open("w", encoding="utf-8") as handle:
        for record in records:
            append_record(handle, record)


def each_resumably(examples, measure: Callable[[object], dict], *, checkpoint: Path | None, what: str) -> dict[str, dict]:
    """``{id: record}`` for ``examples``: ``{"id": …} | measure(example)``, each appended to ``checkpoint`` (a JSONL file)
    as it is done. Examples already there are not measured again; one whose ``measure`` raised is recorded with its
    error (``what`` names the job in the warning), left for the caller to skip, and tried again on the next run."""
    done = read_checkpoint(checkpoint, key="id") if checkpoint else {}
    out = checkpoint.open("a", encoding="utf-8") if checkpoint else None
    try:
        for example in examples:
            if example.id in done and "error" not in done[example.id]:
                continue
            try:
                line = {"id": example.id, **measure(example)}
            except Exception as exc:  # noqa: BLE001 - one question's failure must not end the run
                logger.warning("%s: question %s failed: %s", what, example.id, exc)
                line = {"id": example.id, "error": f"{type(exc).__name__}: {exc}"}
            done[example.id] = line
            if out is not None:
                append_record(out, line)
    finally:
        if out is not None:
            out.close()
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
        return json.loads(decode_utf8(p.read_bytes(), where=str(p)))
    except json.JSONDecodeError as exc:
        raise DataError(f"{p}:{exc.lineno}: malformed JSON ({exc.msg})") from None
