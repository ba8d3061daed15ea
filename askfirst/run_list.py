"""Tracked runs as rows: what ``askfirst runs`` lists and compares."""

from __future__ import annotations

from askfirst.config import AskFirstConfig
from askfirst.evaluation.metrics import shown_in
from askfirst.tracking import tracking_uri

# The registry's metrics for this view (recall@k at the two evidence sizes the built-in configs use), and compile's score.
COLUMNS = tuple(dict.fromkeys(key for m in shown_in("runs") for key in (m.mlflow_key(k=3), m.mlflow_key(k=5)))) + ("best_score",)


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
