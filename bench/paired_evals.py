"""Compare two finished eval runs of the same questions, question by question, as ``askfirst ablate`` compares cells:
each metric's mean and the second run's paired difference from the first with its 95% bootstrap CI.

Usage: python bench/paired_evals.py REF_LABEL=runs/eval-… OTHER_LABEL=runs/eval-… [md|csv|latex]

For runs made apart (e.g. the main job before and after a compiled program became its default), where an ablation
grid would have run both again. Both runs must hold the same questions; their evidence size ``program.evidence_k``
must match.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from askfirst.ablation import Cell, CellResult, compare, compared_keys
from askfirst.config import load_config
from askfirst.evaluation.runner import read_scores
from askfirst.table_export import FORMATS, comparison_table, render


def load_run(label: str, folder: Path) -> tuple[CellResult, int]:
    """The run's per-question scores and summary as a comparison cell, and its evidence size."""
    scores = read_scores(folder)
    summary = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    return CellResult(Cell(label, []), sorted(scores, key=lambda sc: sc["id"]), summary), load_config(folder / "config.yaml").program.evidence_k


def main(argv: list[str]) -> int:
    fmt = argv.pop() if argv and argv[-1] in FORMATS else "md"
    if len(argv) != 2 or not all("=" in a for a in argv):
        print(__doc__, file=sys.stderr)
        return 2
    (ref, k_ref), (other, k_other) = (load_run(label, Path(folder)) for label, folder in (a.split("=", 1) for a in argv))
    ids = [sc["id"] for sc in ref.scores], [sc["id"] for sc in other.scores]
    if ids[0] != ids[1] or k_ref != k_other:
        print(f"the runs differ: {len(set(ids[0]) ^ set(ids[1]))} question(s) in one only, evidence_k {k_ref} vs {k_other}", file=sys.stderr)
        return 2
    rows = compare([ref, other], ref.cell.name, keys=compared_keys(k_ref), seed=0)
    print(render(*comparison_table(rows), fmt), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
