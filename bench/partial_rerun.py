"""The figures of a finished eval run with some of its questions run again under another config: each rerun question's
scores in place of the base run's, the rest kept (no LM).

Usage: python bench/partial_rerun.py BASE=runs/eval-…[,…] RERUN=runs/eval-…[,…]
       python bench/partial_rerun.py --overrulable THRESHOLD runs/eval-…   (the data.ids to run again, as JSON)

For a switch that can act only on questions a rule picks from the base run's records (``askfirst.label_unanswerable_below``
acts only where an assessment said UNANSWERABLE at a top cosine reaching it; ``--overrulable`` lists those of a run made
without it): run those questions again with ``data.ids`` and read the whole set's figures here. That the other questions
would take the same routes is the rule's claim, not checked here; the configs' differences are printed so the reader sees
what changed. Prints, per expected route, the right routes before and after, issue 15's route targets before and after,
the questions whose route changed, and the route accuracy's paired difference with its 95% bootstrap CI. A side may be
comma-separated chunk runs, or a stopped run with the questions it finished.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from askfirst.evaluation.pooled_runs import pooled_run
from askfirst.evaluation.runner import PREDICTIONS_FILE, read_finished
from askfirst.evaluation.route_targets import route_rates
from askfirst.evaluation.stats import paired_bootstrap
from askfirst.tracking import flatten


def config_changes(base: dict, other: dict) -> list[str]:
    """The dotted settings whose values differ between two dumped configs, as ``key: base -> other``."""
    base, other = flatten(base), flatten(other)
    return [f"{key}: {base.get(key)} -> {other.get(key)}" for key in sorted(set(base) | set(other)) if base.get(key) != other.get(key)]


def patched(base: list[dict], rerun: list[dict]) -> list[dict]:
    """``base``'s score rows with each question ``rerun`` holds replaced by its row there.

    Raises:
        ValueError: ``rerun`` holds a question ``base`` does not.
    """
    by_id = {row["id"]: row for row in rerun}
    unknown = set(by_id) - {row["id"] for row in base}
    if unknown:
        raise ValueError(f"{len(unknown)} rerun question(s) not in the base run: {', '.join(sorted(unknown))}")
    return [by_id.get(row["id"], row) for row in base]


def overrulable(records: list[dict], threshold: float) -> list[str]:
    """The ids of the askfirst program's records that ``askfirst.label_unanswerable_below=threshold`` could route
    otherwise: assessed (the gate and the lexical checks decide without an assessment) at a top cosine reaching the
    threshold, and with an assessment that may have said UNANSWERABLE: the final label, a first label escalation
    overturned, or an "I don't know" the referent cue made a clarifying question. Any other record's path has no
    UNANSWERABLE label for the switch to overrule."""
    ids = []
    for record in records:
        extras = record.get("extras") or {}
        cosine = extras.get("top_cosine")
        if extras.get("probability_source") is None or cosine is None or cosine < threshold:
            continue
        if record.get("label") == "UNANSWERABLE" or extras.get("escalated") or extras.get("referent_cue"):
            ids.append(record["id"])
    return ids


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "--overrulable":
        print(json.dumps(overrulable(list(read_finished(Path(argv[2]) / PREDICTIONS_FILE).values()), float(argv[1]))))
        return 0
    if len(argv) != 2 or not all("=" in arg for arg in argv):
        print(__doc__, file=sys.stderr)
        return 2
    (base_label, base_dirs), (rerun_label, rerun_dirs) = (arg.split("=", 1) for arg in argv)
    try:
        base, rerun = (pooled_run([Path(d) for d in dirs.split(",")]) for dirs in (base_dirs, rerun_dirs))
        after = patched(base.scores, rerun.scores)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    changes = [c for c in config_changes(base.config.model_dump(mode="json"), rerun.config.model_dump(mode="json"))
               if not c.startswith("data.ids:")]
    print(f"{rerun_label}: {len(rerun.scores)} of {base_label}'s {len(base.scores)} questions run again with "
          + ("; ".join(changes) or "the same config") + "\n")
    print(f"| expected route | n | {base_label} right | patched right |\n|---|---|---|---|")
    for route in sorted({row["expected_route"] for row in base.scores}):
        pairs = [(b, a) for b, a in zip(base.scores, after) if b["expected_route"] == route]
        print(f"| {route} | {len(pairs)} | {sum(b['route_correct'] for b, _ in pairs)} | {sum(a['route_correct'] for _, a in pairs)} |")
    print(f"| all | {len(after)} | {sum(b['route_correct'] for b in base.scores)} | {sum(a['route_correct'] for a in after)} |\n")
    before_rates, after_rates = route_rates(base.scores), route_rates(after)
    for label, rate in before_rates.items():
        now = after_rates[label]
        print(f"- {label}: {rate['hits']} of {rate['n']} ({rate['share']:.3f}, {'met' if rate['met'] else 'missed'}) -> "
              f"{now['hits']} ({now['share']:.3f}, {'met' if now['met'] else 'missed'})")
    moved = [(b, a) for b, a in zip(base.scores, after) if b["route"] != a["route"]]
    print(f"\n{len(moved)} route(s) changed:" + "".join(f"\n- {b['id']} ({b['expected_route']}): {b['route']} -> {a['route']}"
                                                    for b, a in moved))
    diff, low, high = paired_bootstrap([a["route_correct"] for a in after], [b["route_correct"] for b in base.scores])
    print(f"\nroute accuracy, patched minus {base_label}: {diff:+.3f} [{low:+.3f}, {high:+.3f}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
