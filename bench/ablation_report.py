"""Print an ablation run's ``comparison.json`` as a Markdown table (for docs/results.md), or CSV or LaTeX.

Usage: ``.venv/bin/python bench/ablation_report.py runs/ablate-… [--format md|csv|latex]``

Each metric is the cell's mean; for cells other than the reference, the paired difference from it follows
with its 95% bootstrap CI in brackets.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from askfirst.table_export import FORMATS, comparison_table, render


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", help="a finished ablation's run folder (runs/ablate-…)")
    parser.add_argument("--format", choices=sorted(FORMATS), default="md", help="table format (default: md)")
    args = parser.parse_args(argv)
    path = Path(args.run_dir) / "comparison.json"
    if not path.is_file():
        print(f"{path} not found: the ablation has not finished (run `askfirst ablate --resume {args.run_dir}`)", file=sys.stderr)
        return 2
    print(render(*comparison_table(json.loads(path.read_text(encoding="utf-8"))), args.format), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
