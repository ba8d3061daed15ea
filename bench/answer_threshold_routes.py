"""What ``program.answer_threshold`` would do to an askfirst eval run's routes, read from its records (no LM).

Each record holds the assessment's label and P(answerable) from the label's log-probabilities. With a threshold T,
``route_for`` answers (or partly answers) a question whose P(answerable) is at least T and says "I don't know" below
it, whatever label the model wrote. Printed: the AUC of P(answerable) for ANSWERABLE against UNANSWERABLE tasks,
and for each T the route accuracy and the right routes per expected route. A clarification keeps its route, and so does
an answer or partial route at or above T. An "I don't know" that no assessment gave keeps its route: the collection
check's, the retrieval gate's or one with no passages record P(answerable) 0.

An estimate: the run's escalations are not replayed. With T set, a question below it escalates (retrieves again and is
assessed again) where the run's did not, and one above it stops escalating. Check a chosen T with
``askfirst eval --set program.answer_threshold=T``; most of its LM calls come from the cache.

    python bench/answer_threshold_routes.py runs/eval-…  [--thresholds 0.3,0.5,0.6,0.7]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from scipy.stats import mannwhitneyu

from askfirst.evaluation.runner import read_finished, read_scores
from askfirst.programs.common.answerability import route_for

ROUTES = ("answer", "idk", "clarify", "partial")


def read_run(run: Path) -> list[dict]:
    """Each scored record's expected route, route, label, confidence and P(answerable)."""
    predictions = read_finished(run / "predictions.jsonl")
    rows = []
    for score in read_scores(run):
        record = predictions[score["id"]]
        rows.append({"expected": score["expected_route"], "route": record["route"], "label": record.get("label"),
                     "confidence": record.get("confidence"), "p": (record.get("extras") or {}).get("p_answerable")})
    return rows


def rerouted(row: dict, threshold: float) -> str:
    """The route the record would take with ``threshold`` (see the module docstring for what is kept)."""
    if row["p"] is None or row["label"] in (None, "UNDERSPECIFIED") or row["route"] == "clarify":
        return row["route"]
    if row["p"] < threshold:
        return "idk"
    return route_for(row["label"], row["confidence"], threshold=threshold, p_answer=row["p"]) if row["route"] == "idk" else row["route"]


def auc(rows: list[dict]) -> float:
    """P(answerable)'s AUC, ANSWERABLE over UNANSWERABLE tasks with a measured P."""
    answerable = [r["p"] for r in rows if r["expected"] == "answer" and r["p"] is not None]
    unanswerable = [r["p"] for r in rows if r["expected"] == "idk" and r["p"] is not None]
    return mannwhitneyu(answerable, unanswerable).statistic / (len(answerable) * len(unanswerable))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="An askfirst eval run folder")
    parser.add_argument("--thresholds", default="0.3,0.4,0.5,0.55,0.6,0.65,0.7,0.75,0.8")
    args = parser.parse_args()
    rows = read_run(args.run)
    totals = {route: sum(r["expected"] == route for r in rows) for route in ROUTES}
    print(f"{len(rows)} tasks; P(answerable) AUC, ANSWERABLE over UNANSWERABLE: {auc(rows):.3f}\n")
    print("| answer_threshold | route accuracy | " + " | ".join(f"{route} ({totals[route]})" for route in ROUTES) + " | idk on ANSWERABLE |")
    print("|---|---|" + "---|" * len(ROUTES) + "---|")
    for threshold in [None, *map(float, args.thresholds.split(","))]:
        routes = [r["route"] if threshold is None else rerouted(r, threshold) for r in rows]
        right = {route: sum(got == r["expected"] == route for got, r in zip(routes, rows)) for route in ROUTES}
        idk_answerable = sum(got == "idk" and r["expected"] == "answer" for got, r in zip(routes, rows))
        print(f"| {'none (as run)' if threshold is None else threshold} | {sum(right.values()) / len(rows):.3f} | "
              + " | ".join(str(right[route]) for route in ROUTES) + f" | {idk_answerable / totals['answer']:.0%} |")


if __name__ == "__main__":
    main()
