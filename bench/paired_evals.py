"""Compare two finished eval runs of the same questions, question by question, as ``askfirst ablate`` compares cells:
each metric's mean and the second run's paired difference from the first with its 95% bootstrap CI.

Usage: python bench/paired_evals.py REF_LABEL=runs/eval-…[,runs/eval-…] OTHER_LABEL=runs/eval-…[,…] [md|csv|latex]

For runs made apart (e.g. the main job before and after a compiled program became its default), where an ablation
grid would have run both again. Both sides must hold the same questions; their evidence size ``program.evidence_k``
must match. A side may be several runs, comma-separated: chunks of one question set run apart (``data.ids`` in turn),
whose configs must be the same but for ``data.ids``. Their questions are pooled and the side's means computed from
the pooled scores and records, as one run would have written them (the judged MTRAGEval HM, a whole-run figure, is
then left out).
"""

from __future__ import annotations

import sys

from askfirst.ablation import Cell, CellResult, compare, compared_keys
from askfirst.evaluation.pooled_runs import paired_runs
from askfirst.table_export import FORMATS, comparison_table, render


def main(argv: list[str]) -> int:
    fmt = argv.pop() if argv and argv[-1] in FORMATS else "md"
    try:
        sides = paired_runs(argv)
    except ValueError as exc:
        print(str(exc) or __doc__, file=sys.stderr)
        return 2
    k_ref, k_other = (run.config.program.evidence_k for _, run in sides)
    if k_ref != k_other:
        print(f"the runs differ in their evidence size: evidence_k {k_ref} vs {k_other}", file=sys.stderr)
        return 2
    ref, other = (CellResult(Cell(label, []), run.scores, run.summary) for label, run in sides)
    rows = compare([ref, other], ref.cell.name, keys=compared_keys(k_ref), seed=0)
    print(render(*comparison_table(rows), fmt), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
