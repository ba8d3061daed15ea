"""Print eval runs side by side as a Markdown table (the report metrics and the MTRAG HM), and compile runs' curves and
changed instructions: an uncompiled program against its compiled ones.

Usage: python bench/compile_report.py LABEL=runs/eval-… [LABEL=runs/eval-… ...] [--compile runs/compile-… ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from askfirst.cli.render import fmt
from askfirst.datasets.jsonl import read_jsonl
from askfirst.evaluation.metrics import shown_in

COLUMNS = [(m.label, m.name) for m in shown_in("report") if m.section is None]
HM = [("RL_F", "RL_F_cond"), ("RB_llm", "RB_llm_cond"), ("RB_agg", "RB_agg_cond"), ("HM", "HM"), ("IDK rate", "idk_rate")]


def hm_from_rows(path: Path) -> dict:
    """The judged means from ``hm.jsonl`` (for runs whose metrics.json predates the judging being saved there)."""
    import dspy

    from askfirst.evaluation.mtrag_judges import aggregate_hm

    if not path.is_file():
        return {}
    rows = [row for _, row in read_jsonl(path) if "error" not in row]  # a failed judging is left out, as judge_records does
    return aggregate_hm([dspy.Prediction(**row) for row in rows]) if rows else {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("evals", nargs="+", help="LABEL=EVAL_RUN_FOLDER")
    parser.add_argument("--compile", nargs="*", default=[], help="compile run folders: their curve and changed instructions")
    args = parser.parse_args(argv)
    print("| program | n | " + " | ".join(h for h, _ in COLUMNS + HM) + " |")
    print("|---" * (2 + len(COLUMNS) + len(HM)) + "|")
    for item in args.evals:
        label, folder = item.split("=", 1)
        m = json.loads((Path(folder) / "metrics.json").read_text())
        hm = m.get("mtrag") or hm_from_rows(Path(folder) / "hm.jsonl")
        print(f"| {label} | {m['n']} | " + " | ".join(fmt(m.get(k)) for _, k in COLUMNS) + " | " + " | ".join(fmt(hm.get(k)) for _, k in HM) + " |")
    for folder in args.compile:
        folder = Path(folder)
        curve = json.loads((folder / "curve.json").read_text()) if (folder / "curve.json").is_file() else []
        diff = (folder / "instructions.diff").read_text() if (folder / "instructions.diff").is_file() else ""
        changed = [line[4:].split(" (after)")[0] for line in diff.splitlines() if line.startswith("+++")]
        print(f"\n{folder.name}: {len(curve)} steps, scores {[round(r['score'], 3) for r in curve]}, instructions changed: {changed or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
