"""Score an eval run's finished questions, a stopped run included, without the LM or the index.

Reads the run's ``config.yaml`` (which names the questions) and ``predictions.jsonl`` (one line per finished
question), scores the finished questions as ``askfirst eval`` does, and prints what issue 15 asks of an MTRAG-UN
validation run: each expected route's accuracy with its Wilson 95% interval, the routes taken per expected route,
the rates of "I don't know" and of clarifying on ANSWERABLE tasks, "I don't know" on UNANSWERABLE ones, clarifying
on UNDERSPECIFIED ones, the ranking metrics, P(answerable)'s calibration against the labels and its mean per expected
route, seconds and LM calls per question, and what decided each "I don't know" (``idk_source``).

``--misroutes`` also lists the tasks of the two routes the class targets trade against each other (ANSWERABLE sent to
"I don't know", UNANSWERABLE answered), each with what decided it, the retrieval gate's top cosine, the ranking's
Recall@10 and P(answerable): whether the evidence was found, and whether a signal tells the two apart.

    python bench/eval_report.py runs/eval-… [--misroutes]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from askfirst.cli.render import fmt
from askfirst.config import load_config
from askfirst.datasets.splits import configured_questions
from askfirst.evaluation.runner import read_finished
from askfirst.evaluation.scoring import aggregate, score_prediction
from askfirst.evaluation.route_targets import route_rates

MISROUTES = (("answer", "idk"), ("idk", "answer"))  # (expected, taken): the two the "I don't know" targets trade


def idk_source(record: dict) -> str:
    """What decided an "I don't know", from the askfirst program's extras: the retrieval gate (``gated``), the collection
    check (``absent_terms`` none), the key-term check overruling the label (``key_terms.overruled``), else the label the
    assessment gave (after escalation; for another program, its own label)."""
    extras = record.get("extras") or {}
    if extras.get("gated"):
        return "retrieval gate"
    if (extras.get("absent_terms") or {}).get("verdict") == "none":
        return "collection check"
    if (extras.get("key_terms") or {}).get("overruled"):
        return "key-term check"
    return "label"


def answer_source(record: dict) -> str | None:
    """What decided an answer the assessment's UNANSWERABLE would have kept from it: the top cosine overruling that label
    (``label_unanswerable_below``); ``None`` for an answer the label gave."""
    return "label overruled" if (record.get("extras") or {}).get("unanswerable_overruled") is not None else None


def misroutes(scores: list[dict], records: list[dict]) -> list[dict]:
    """The tasks that took one of ``MISROUTES``, ordered by that route then by top cosine, with what the run recorded."""
    rows = []
    for row, record in zip(scores, records):
        if (row["expected_route"], row["route"]) in MISROUTES:
            extras = record.get("extras") or {}
            rows.append({"id": record["id"], "expected": row["expected_route"], "taken": row["route"],
                         "decided_by": idk_source(record) if row["route"] == "idk" else answer_source(record), "top_cosine": extras.get("top_cosine"),
                         "recall@10": row.get("ranking_recall@10"), "p_answerable": row["p_answerable"]})
    return sorted(rows, key=lambda r: (MISROUTES.index((r["expected"], r["taken"])), r["top_cosine"] is None, r["top_cosine"] or 0))


def report(run_dir: Path) -> dict:
    config = load_config(run_dir / "config.yaml")
    finished = read_finished(run_dir / "predictions.jsonl")
    examples = [e for e in configured_questions(config) if e.id in finished]
    scores = [score_prediction(e, finished[e.id], k=config.program.evidence_k) for e in examples]
    summary = aggregate(scores)
    rates = route_rates(scores)
    records = [finished[e.id] for e in examples]
    sources: dict[str, Counter] = {}
    for row, record in zip(scores, records):
        if row["route"] == "idk":
            sources.setdefault(row["expected_route"], Counter())[idk_source(record)] += 1
    p_by_route: dict[str, list[float]] = {route: [] for route in summary["per_route"]}
    for row in scores:
        if row["p_answerable"] is not None:
            p_by_route[row["expected_route"]].append(row["p_answerable"])
    mean_p = {route: sum(ps) / len(ps) for route, ps in p_by_route.items() if ps}
    return {"run": str(run_dir), "finished": len(examples), "selected": len(configured_questions(config)), "summary": summary,
            "rates": rates, "mean_p_answerable_by_route": mean_p, "idk_sources": {route: dict(c) for route, c in sources.items()},
            "misroutes": misroutes(scores, records),
            "seconds_per_question": sum(r["seconds"] for r in records) / max(len(records), 1),
            "lm_calls_per_question": sum(r["lm_calls"] for r in records) / max(len(records), 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--misroutes", action="store_true", help='list ANSWERABLE tasks sent to "I don\'t know" and UNANSWERABLE ones answered')
    args = parser.parse_args(argv)
    r = report(args.run_dir)
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    if not r["finished"]:
        print(f"{args.run_dir}: no finished question", file=sys.stderr)
        return 2
    s = r["summary"]
    print(f"{r['finished']} of {r['selected']} questions finished in {args.run_dir}\n")
    print("| expected route | n | route accuracy [95% CI] | routes taken |")
    print("|---|---|---|---|")
    for route, row in s["per_route"].items():
        low, high = row["route_accuracy_ci95"]
        taken = ", ".join(f"{k} {v}" for k, v in sorted(s["confusion"][route].items(), key=lambda kv: -kv[1]))
        print(f"| {route} | {row['n']} | {row['route_accuracy']:.3f} [{low:.2f}, {high:.2f}] | {taken} |")
    print(f"\nroute accuracy {s['route_correct']:.3f}, outcome {s['outcome_correct']:.3f}; "
          f"Recall@10 {s.get('ranking_recall@10') or float('nan'):.4f}, nDCG@5 {s.get('ranking_ndcg@5') or float('nan'):.4f} "
          f"(tasks with qrels); {r['seconds_per_question']:.1f} s and {r['lm_calls_per_question']:.2f} LM calls per question\n")
    for label, row in r["rates"].items():
        print(f"- {label}: {row['share']:.3f} of {row['n']} [{row['ci95'][0]:.2f}, {row['ci95'][1]:.2f}]")
    if s.get("answerability_n"):
        auc = s["answerability_auc"]
        print(f"- P(answerable) on the {s['answerability_n']} assessed questions ({s['answerability_share']:.3f} answerable, mean P "
              f"{s['mean_p_answerable']:.3f}): AUC {'n/a' if auc is None else f'{auc:.3f}'}, Brier {s['answerability_brier']:.3f}, "
              f"ECE {s['answerability_ece']:.3f}; mean P by expected route: "
              + ", ".join(f"{route} {p:.3f}" for route, p in r["mean_p_answerable_by_route"].items()))
    if r["idk_sources"]:
        print('- "I don\'t know" by what decided it, per expected route: ' + "; ".join(
            f"{route}: " + ", ".join(f"{source} {n}" for source, n in sorted(c.items(), key=lambda kv: -kv[1]))
            for route, c in sorted(r["idk_sources"].items())))
    if args.misroutes:
        print("\n| task | expected | taken | decided by | top cosine | Recall@10 | P(answerable) |\n|---|---|---|---|---|---|---|")
        for m in r["misroutes"]:
            print(f"| {m['id']} | {m['expected']} | {m['taken']} | {m['decided_by'] or '-'} | {fmt(m['top_cosine'])} | "
                  f"{fmt(m['recall@10'])} | {fmt(m['p_answerable'])} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
