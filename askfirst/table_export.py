"""Tables other tools read: an ablation's comparison or a runs listing as Markdown, CSV or LaTeX."""

from __future__ import annotations

import csv
import io
from typing import Literal

Format = Literal["md", "csv", "latex"]
FORMATS: tuple[str, ...] = ("md", "csv", "latex")
EXTENSIONS = {"md": "md", "csv": "csv", "latex": "tex"}
_LAST = ("seconds_per_question", "lm_calls_per_question", "tokens_per_question")
_HEADERS = {"seconds_per_question": "s/question", "lm_calls_per_question": "LM calls/question", "tokens_per_question": "tokens in/out per question"}


def cell_text(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, dict):
        return ", ".join(f"{k} {cell_text(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return " / ".join(cell_text(v) for v in value)
    return str(value)


def comparison_table(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    """An ablation's ``comparison.json`` rows as a header and body: each metric's mean and, for cells other than
    the reference, the paired difference with its 95% CI in brackets."""
    keys = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in ("cell", "n", *_LAST) and not k.endswith(".diff")]
    header = ["cell", "n", *keys, *(_HEADERS[k] for k in _LAST)]
    body = []
    for row in rows:
        cells = [row["cell"], str(row["n"])]
        for key in keys:
            diff = row.get(f"{key}.diff")
            cells.append(cell_text(row.get(key)) + (f" ({diff[0]:+.3f} [{diff[1]:+.3f}, {diff[2]:+.3f}])" if diff else ""))
        body.append(cells + [cell_text(row.get(k)) for k in _LAST])
    return header, body


def records_table(rows: list[dict], *, skip: tuple[str, ...] = ()) -> tuple[list[str], list[list[str]]]:
    """Records (runs, say) as a table of their columns that hold any value."""
    columns = [c for c in dict.fromkeys(c for r in rows for c in r) if c not in skip and any(r.get(c) not in (None, "") for r in rows)]
    return columns, [[cell_text(r.get(c)) for c in columns] for r in rows]


def _latex(text: str) -> str:
    escapes = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
               "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
    return "".join(escapes.get(char, char) for char in text)


def render(header: list[str], body: list[list[str]], fmt: str) -> str:
    """The table as Markdown (``md``), CSV (``csv``) or a LaTeX ``tabular`` (``latex``)."""
    if fmt == "csv":
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows([header, *body])
        return out.getvalue()
    if fmt == "latex":
        lines = [r"\begin{tabular}{" + "l" * len(header) + "}", r"\hline", " & ".join(_latex(h) for h in header) + r" \\", r"\hline"]
        lines += [" & ".join(_latex(c) for c in row) + r" \\" for row in body]
        return "\n".join([*lines, r"\hline", r"\end{tabular}"]) + "\n"
    if fmt == "md":
        def line(cells):
            return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

        return "\n".join([line(header), "|" + "---|" * len(header), *(line(r) for r in body)]) + "\n"
    raise ValueError(f"unknown table format {fmt!r}; choose from {', '.join(FORMATS)}")
