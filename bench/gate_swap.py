"""The routes a program would take with one run's retrieval-gate decisions and another run's everything else, from the
two finished runs of the same questions (no LM): e.g. gating on the uncompiled rewrite's top cosine while searching with
the compiled rewrite.

Usage: python bench/gate_swap.py GATE=runs/eval-…[,…] REST=runs/eval-…[,…]

Per question: where GATE's gate turned the question away (``extras.gated``), GATE's route, which that decision fixes
("I don't know" with no LM call); where neither run's gate did, REST's route, since then the gate's cosine changes
nothing else. Where only REST's gate turned it away, what the classifier would have said of REST's query is not in
either run: those questions are counted apart and listed, and need a run. Assumes the gate's cosine is used for the
gate alone (true with ``askfirst.escalate_gated`` off, the default). A side may be comma-separated chunk runs.
"""

from __future__ import annotations

import sys
from collections import Counter

from askfirst.evaluation.pooled_runs import paired_runs
from askfirst.evaluation.stats import paired_bootstrap


def swapped(gate, rest) -> tuple[list[dict], list[str]]:
    """Per question (in id order) its expected route and whether GATE's, REST's and the swapped routes are right; the ids
    only REST's gate turned away."""
    rows, unknown = [], []
    for g, r in zip(gate.scores, rest.scores, strict=True):
        gated_g, gated_r = (bool(run.records[g["id"]].get("extras", {}).get("gated")) for run in (gate, rest))
        if gated_r and not gated_g:
            unknown.append(g["id"])
            continue
        swap = g["route_correct"] if gated_g else r["route_correct"]
        rows.append({"expected": g["expected_route"], "gate": bool(g["route_correct"]), "rest": bool(r["route_correct"]), "swap": bool(swap)})
    return rows, unknown


def main(argv: list[str]) -> int:
    try:
        (gate_label, gate), (rest_label, rest) = paired_runs(argv)
    except ValueError as exc:
        print(str(exc) or __doc__, file=sys.stderr)
        return 2
    if any(run.config.askfirst.escalate_gated for run in (gate, rest)):
        print("warning: askfirst.escalate_gated is on in a run: escalation reads the gate's cosine too, so the swap is an estimate",
              file=sys.stderr)
    rows, unknown = swapped(gate, rest)
    swap = f"{gate_label}'s gate, {rest_label}'s rest"
    print(f"| expected route | n | {gate_label} | {rest_label} | {swap} |\n|---|---|---|---|---|")
    for route, n in sorted(Counter(row["expected"] for row in rows).items()):
        sub = [row for row in rows if row["expected"] == route]
        print(f"| {route} | {n} | " + " | ".join(str(sum(row[key] for row in sub)) for key in ("gate", "rest", "swap")) + " |")
    total = [sum(row[key] for row in rows) for key in ("gate", "rest", "swap")]
    print(f"| all | {len(rows)} | " + " | ".join(map(str, total)) + " |\n")
    for other in ("gate", "rest"):
        diff, low, high = paired_bootstrap([row["swap"] for row in rows], [row[other] for row in rows])
        print(f"route accuracy, swapped minus {gate_label if other == 'gate' else rest_label}: {diff:+.3f} [{low:+.3f}, {high:+.3f}]")
    if unknown:
        print(f"\n{len(unknown)} question(s) only {rest_label}'s gate turned away, not counted (they need a run): {', '.join(unknown)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
