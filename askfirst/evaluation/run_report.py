"""What one eval run's finished questions say, a stopped run included, read back without the LM or the index.

Each expected route's accuracy with its Wilson 95% interval and the routes taken, the route targets' rates,
P(answerable)'s calibration and its mean per expected route, seconds and LM calls per question, what decided each
"I don't know", and the misroutes the "I don't know" targets trade against each other (ANSWERABLE sent to
"I don't know", UNANSWERABLE answered), each with what decided it and the signals that might tell the two apart.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from askfirst.datasets.splits import configured_questions
from askfirst.evaluation.pooled_runs import pooled_run
from askfirst.evaluation.route_targets import route_rates
from askfirst.evaluation.runner import run_summary

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


def run_report(run_dir: Path) -> dict:
    """The report of ``run_dir``'s finished questions (its config read as an untrusted folder's, ``askfirst.trust``)."""
    run = pooled_run([run_dir])
    scores = run.scores
    records = [run.records[sc["id"]] for sc in scores]
    summary = run_summary(scores, records) if scores else {}
    sources: dict[str, Counter] = {}
    for row, record in zip(scores, records):
        if row["route"] == "idk":
            sources.setdefault(row["expected_route"], Counter())[idk_source(record)] += 1
    p_by_route: dict[str, list[float]] = {route: [] for route in summary.get("per_route", {})}
    for row in scores:
        if row["p_answerable"] is not None:
            p_by_route[row["expected_route"]].append(row["p_answerable"])
    return {"run": str(run_dir), "finished": len(scores), "selected": len(configured_questions(run.config)), "summary": summary,
            "rates": route_rates(scores), "mean_p_answerable_by_route": {route: sum(ps) / len(ps) for route, ps in p_by_route.items() if ps},
            "idk_sources": {route: dict(c) for route, c in sources.items()}, "misroutes": misroutes(scores, records)}
