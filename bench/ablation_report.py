"""Print an ablation run's ``comparison.json`` as a Markdown table (for ``bench/RESULTS.md``).

Usage: python bench/ablation_report.py runs/ablate-…

Each metric is the cell's mean; for cells other than the reference, the paired difference from it follows
with its 95% bootstrap CI in brackets.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

LAST = ("seconds_per_question", "lm_calls_per_question")
HEADERS = {"seconds_per_question": "s/question", "lm_calls_per_question": "LM calls/question"}


def fmt(value) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def table(rows: list[dict]) -> str:
    keys = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in ("cell", "n", *LAST) and not k.endswith(".diff")]
    lines = ["| cell | n | " + " | ".join(HEADERS.get(k, k) for k in (*keys, *LAST)) + " |", "|---" * (2 + len(keys) + len(LAST)) + "|"]
    for row in rows:
        cells = []
        for key in keys:
            diff = row.get(f"{key}.diff")
            cells.append(fmt(row.get(key)) + (f" ({diff[0]:+.2f} [{diff[1]:+.2f}, {diff[2]:+.2f}])" if diff else ""))
        lines.append(f"| {row['cell']} | {row['n']} | " + " | ".join(cells + [fmt(row.get(k)) for k in LAST]) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    path = Path(argv[0]) / "comparison.json"
    if not path.is_file():
        print(f"{path} not found: the ablation has not finished (run `askfirst ablate --resume {argv[0]}`)", file=sys.stderr)
        return 2
    print(table(json.loads(path.read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
