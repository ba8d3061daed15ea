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
from askfirst.evaluation.pooled_runs import labelled_run
from askfirst.table_export import FORMATS, comparison_table, render


def load_run(argument: str) -> tuple[CellResult, int]:
    """A ``LABEL=run[,run…]`` argument's per-question scores and summary as one comparison cell, and its evidence size.

    Raises:
        ValueError: The runs' configs differ in more than ``data.ids``, or a question is in two of them.
    """
    label, run = labelled_run(argument)
    return CellResult(Cell(label, []), run.scores, run.summary), run.config.program.evidence_k


def main(argv: list[str]) -> int:
    fmt = argv.pop() if argv and argv[-1] in FORMATS else "md"
    if len(argv) != 2 or not all("=" in a for a in argv):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        (ref, k_ref), (other, k_other) = (load_run(argument) for argument in argv)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    ids = [sc["id"] for sc in ref.scores], [sc["id"] for sc in other.scores]
    if ids[0] != ids[1] or k_ref != k_other:
        print(f"the runs differ: {len(set(ids[0]) ^ set(ids[1]))} question(s) in one only, evidence_k {k_ref} vs {k_other}", file=sys.stderr)
        return 2
    rows = compare([ref, other], ref.cell.name, keys=compared_keys(k_ref), seed=0)
    print(render(*comparison_table(rows), fmt), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
