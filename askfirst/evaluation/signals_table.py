"""A signals table: the questions of eval runs with the signals they recorded, as one plain JSON file.

Recording the signals costs an LM pass over the questions (hours on 2 cores for MTRAG-UN's 265 tasks); fitting and
cross-validating a route policy on them costs seconds. A table keeps what ``askfirst policy cv / fit / score`` read
from a run folder (each question's id, conversation, collection, expected route, the rules' route, its route and its signals)
without the passages, answers or prompts, so a fit can be reproduced, shared and pooled across sittings. It is read
back through a schema check: a table is data, never settings.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator

from askfirst.datasets.errors import DataError
from askfirst.programs.askfirst.policy import ROUTES
from askfirst.programs.askfirst.signals import FEATURES

FORMAT = "askfirst-signals/1"
Text = Annotated[str, StringConstraints(min_length=1, max_length=500)]
Expected = Annotated[str, StringConstraints(pattern=f"^({'|'.join(ROUTES)})$")]
Route = Annotated[str, StringConstraints(pattern=f"^({'|'.join(ROUTES)}|error)$")]  # a failed question's route is 'error'


class SignalsRow(BaseModel):
    """One question: what ``policy_cv.policy_questions`` reads from a run."""

    model_config = ConfigDict(extra="forbid")

    id: Text
    conversation: Text
    collection: Annotated[str, StringConstraints(max_length=200)] = ""  # the question's collection ("" where it names none)
    expected: Expected
    rules: Route
    route: Route
    signals: dict[str, float]

    @field_validator("signals")
    @classmethod
    def _known_and_finite(cls, signals: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(signals) - set(FEATURES))
        if unknown:
            raise ValueError(f"unknown signal(s) {unknown[:5]}")
        if not all(math.isfinite(v) for v in signals.values()):
            raise ValueError("every signal must be a finite number")
        return signals


class SignalsTable(BaseModel):
    """A signals table file.

    Attributes:
        source: What the rows were recorded with, in words (the config, the commit, the LM), for the reader.
    """

    model_config = ConfigDict(extra="forbid")

    format: Annotated[str, StringConstraints(pattern=f"^{FORMAT}$")] = FORMAT
    source: Annotated[str, StringConstraints(max_length=2000)] = ""
    rows: list[SignalsRow] = Field(min_length=1)


def is_signals_table(path: Path) -> bool:
    """Whether ``path`` names a table (a file) rather than a run folder."""
    return path.is_file()


def write_signals_table(rows: list[dict], path: Path, *, source: str = "") -> SignalsTable:
    """Write ``rows`` (``policy_questions``'s) as a table at ``path``; the write is atomic."""
    from askfirst.run_dir import write_atomic

    table = SignalsTable(source=source, rows=[SignalsRow(**{k: row[k] for k in SignalsRow.model_fields if k in row}) for row in rows])
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(table.model_dump(), indent=1) + "\n")
    return table


def read_signals_table(path: Path) -> list[dict]:
    """The rows of the table at ``path``, checked (as :func:`read_table`)."""
    return [row.model_dump() for row in read_table(path).rows]


def read_table(path: Path) -> SignalsTable:
    """The table at ``path``, its source and rows, checked.

    Raises:
        DataError: Not JSON, or not a signals table (the first problem named, with where).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not a signals table ({exc})") from None
    try:
        table = SignalsTable.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise DataError(f"{path}: not a signals table ({'.'.join(map(str, first['loc'])) or 'table'}: {first['msg']})") from None
    return table


def rescaled_rows(rows: list[dict], store, embedder) -> list[dict]:
    """``rows`` with ``top_cosine_percentile`` read again from each recorded ``top_cosine`` on ``store``'s own scale (as the
    program computes it, ``retrieval.cosine_reference``): a table recorded before the scale changed, or against another
    build of the same index, made current without the LM pass.

    Raises:
        DataError: The store has no scale (an empty index, or one of a single document).
    """
    from askfirst.retrieval.cosine_reference import cosine_percentile

    if cosine_percentile(store, embedder, 0.0) is None:
        raise DataError("the config's index has no cosine scale (is it built? `askfirst index --config ...` first)")
    out = []
    for row in rows:
        cosine = row["signals"].get("top_cosine", 0.0)
        percentile = cosine_percentile(store, embedder, cosine) if cosine else 0.0  # 0: the question had no dense hit
        out.append(row | {"signals": row["signals"] | {"top_cosine_percentile": float(percentile)}})
    return out
