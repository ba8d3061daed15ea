"""Print an ablation run's ``comparison.json`` as a Markdown table (for the results log (bench/RESULTS.md in git history)), or CSV or LaTeX.

Usage: python bench/ablation_report.py runs/ablate-… [md|csv|latex]

Each metric is the cell's mean; for cells other than the reference, the paired difference from it follows
with its 95% bootstrap CI in brackets.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from askfirst.table_export import FORMATS, comparison_table, render

def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2) or (len(argv) == 2 and argv[1] not in FORMATS):
        print(__doc__, file=sys.stderr)
        return 2
    path = Path(argv[0]) / "comparison.json"
    if not path.is_file():
        print(f"{path} not found: the ablation has not finished (run `askfirst ablate --resume {argv[0]}`)", file=sys.stderr)
        return 2
    print(render(*comparison_table(json.loads(path.read_text(encoding="utf-8"))), argv[1] if len(argv) == 2 else "md"), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
