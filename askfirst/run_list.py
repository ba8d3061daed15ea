"""Tracked runs as rows: what ``askfirst runs`` lists and compares."""

from __future__ import annotations

from askfirst.config import AskFirstConfig
from askfirst.tracking import tracking_uri

COLUMNS = ("outcome_correct", "route_correct", "answer_correct", "recall_at_3", "recall_at_5", "ranking_recall_at_10",
           "ranking_ndcg_at_5", "HM", "best_score", "seconds_per_question", "lm_calls_per_question")


def list_runs(config: AskFirstConfig, *, kind: str | None = None, limit: int = 20, names: list[str] | None = None) -> list[dict]:
    """Newest runs of the configured experiment (optionally one kind: eval, compile, ablate, bench-retrieval, or named runs)."""
    import mlflow

    mlflow.set_tracking_uri(tracking_uri(config))
    experiment = mlflow.get_experiment_by_name(config.tracking.experiment)
    if experiment is None:
        return []
    filters = []
    if kind:
        filters.append(f"tags.`askfirst.kind` = '{kind}'")
    runs = mlflow.search_runs([experiment.experiment_id], filter_string=" and ".join(filters), order_by=["attributes.start_time DESC"],
                              max_results=limit if not names else 1000, output_format="list")
    rows = []
    for run in runs:
        name = run.info.run_name
        if names and name not in names:
            continue
        metrics = run.data.metrics
        rows.append({"run": name, "kind": run.data.tags.get("askfirst.kind", ""), "status": run.info.status,
                     "model": run.data.params.get("model_id", ""), "run_id": run.info.run_id,
                     **{c: metrics.get(c) for c in COLUMNS}})
    return rows
