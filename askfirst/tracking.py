"""MLflow tracking: one MLflow run per askfirst run, in a local SQLite store under ``runs/`` by default."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from askfirst.config import AskFirstConfig


def tracking_uri(config: AskFirstConfig) -> str:
    """``tracking.tracking_uri``, else ``MLFLOW_TRACKING_URI``, else ``sqlite:///<runs_dir>/mlflow.db``."""
    return config.tracking.tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{config.runs_path / 'mlflow.db'}"


def flatten(tree: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


class Tracker:
    """What a run logs; a disabled tracker accepts the same calls and records nothing."""

    def __init__(self, mlflow=None):
        self._mlflow = mlflow

    @property
    def enabled(self) -> bool:
        return self._mlflow is not None

    @property
    def run_id(self) -> str | None:
        return self._mlflow.active_run().info.run_id if self._mlflow else None

    def log_params(self, params: dict) -> None:
        if self._mlflow:
            self._mlflow.log_params({k: str(v)[:6000] for k, v in params.items()})

    def log_metrics(self, metrics: dict, step: int | None = None) -> None:
        if self._mlflow:
            # MLflow metric names may not contain "@"; None (metric not applicable) is not logged.
            clean = {k.replace("@", "_at_"): float(v) for k, v in metrics.items() if isinstance(v, (int, float))}
            self._mlflow.log_metrics(clean, step=step)

    def log_artifact(self, path: Path) -> None:
        if self._mlflow and Path(path).exists():
            self._mlflow.log_artifact(str(path))


@contextmanager
def tracked_run(config: AskFirstConfig, *, run_name: str, tags: dict | None = None) -> Iterator[Tracker]:
    """Open an MLflow run with the resolved config as parameters (or a no-op tracker when tracking is off)."""
    if not config.tracking.enabled:
        yield Tracker()
        return
    import mlflow  # imported here: it costs seconds, and only tracked runs need it

    mlflow.set_tracking_uri(tracking_uri(config))
    if mlflow.get_experiment_by_name(config.tracking.experiment) is None:
        artifacts = (config.runs_path / "mlartifacts").as_uri()
        mlflow.create_experiment(config.tracking.experiment, artifact_location=artifacts)
    mlflow.set_experiment(config.tracking.experiment)
    if config.tracking.traces:
        import mlflow.dspy

        # One trace per program call (every module and LM call inside it), linked to this run.
        mlflow.dspy.autolog(log_traces=True, log_traces_from_compile=False, log_traces_from_eval=True, silent=True)
    try:
        with mlflow.start_run(run_name=run_name, tags=tags or {}):
            tracker = Tracker(mlflow)
            tracker.log_params(flatten(config.model_dump(mode="json")))
            yield tracker
    finally:
        if config.tracking.traces:
            mlflow.dspy.autolog(disable=True, silent=True)


@contextmanager
def child_run(tracker: Tracker, *, run_name: str, params: dict, kind: str = "ablate-cell") -> Iterator[Tracker]:
    """A nested MLflow run under the tracker's active run (an ablation cell, an optimisation trial)."""
    if tracker._mlflow is None:
        yield Tracker()
        return
    with tracker._mlflow.start_run(run_name=run_name, nested=True, tags={"askfirst.kind": kind}):
        child = Tracker(tracker._mlflow)
        child.log_params(params)
        yield child


def log_program_model(tracker: Tracker, run_dir: Path) -> None:
    """Log a compiled run (its ``program.json`` and ``config.yaml``) as an MLflow pyfunc model named ``model``.

    The model is logged from code (``askfirst/serve/mlflow_model.py``), not pickled, so ``mlflow models
    serve -m runs:/<run_id>/model --env-manager local`` rebuilds the program from the config and loads its
    state JSON.
    """
    if not tracker.enabled:
        return
    import mlflow.pyfunc

    from askfirst.serve import mlflow_model

    mlflow.pyfunc.log_model(
        name="model", python_model=mlflow_model.__file__,
        artifacts={"program": str(run_dir / "program.json"), "config": str(run_dir / "config.yaml")},
        # The askfirst checkout itself is the requirement; listing it stops MLflow from loading the model
        # (and its LM) just to infer requirements.
        pip_requirements=["askfirst[local]"],
        # The operator's own config file, given when loading (model_config={"config": FILE}); MLflow only lets a load
        # set keys the logged model has, so the key is logged, empty (the defaults).
        model_config={"config": ""},
    )
