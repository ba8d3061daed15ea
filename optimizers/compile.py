"""Compile (prompt-optimise) the whole program, save it as DSPy state JSON, and load it back."""

from __future__ import annotations

import json
from pathlib import Path

import dspy

from askfirst.config import AskFirstConfig
from askfirst.datasets.errors import DataError
from askfirst.datasets.splits import split_by_conversation  # noqa: F401  (re-exported: callers split as compile does)
from askfirst.optimizers.factory import build_optimizer
from askfirst.optimizers.objectives import build_objective

PROGRAM_FILE = "program.json"


def compile_program(program: dspy.Module, trainset: list, valset: list, *, config: AskFirstConfig, reflection_lm: dspy.LM,
                    run_dir: Path, judges=None, use_mlflow: bool = False) -> dspy.Module:
    """Optimise every predictor of ``program`` against ``compile.objective``; checkpoints go under ``run_dir``.

    Running again with the same ``run_dir`` resumes: GEPA reloads its state from ``run_dir/gepa``, and every
    LM call MIPROv2 (seeded, so it proposes the same candidates) already made is answered from the DSPy cache.

    Args:
        judges: An ``MTRAGJudges``, needed for the ``hm`` objective; the judges themselves are not optimised.
        use_mlflow: GEPA logs per-iteration scores into the active MLflow run.
    """
    cfg = config.compile
    metric = build_objective(cfg.objective, recall_k=cfg.recall_k, judges=judges)
    optimizer = build_optimizer(cfg, metric, reflection_lm=reflection_lm, log_dir=run_dir / cfg.optimizer, seed=config.seed,
                                use_mlflow=use_mlflow)
    if cfg.optimizer == "miprov2":
        # MIPROv2 refuses a minibatch larger than the valset (its default is 35).
        extra = {"minibatch_size": min(35, len(valset))} | ({} if cfg.auto else {"num_trials": cfg.num_trials or 5})
        return optimizer.compile(program, trainset=trainset, valset=valset, **extra)
    return optimizer.compile(program, trainset=trainset, valset=valset)


def save_compiled(program: dspy.Module, run_dir: Path) -> Path:
    """Save the optimised instructions and demos as DSPy state JSON (never pickle) beside the run's config.yaml.

    Per-step LMs are left out: the config rebuilds them, and a saved llama.cpp engine would name a local
    class that DSPy (rightly) refuses to import from a file.
    """
    path = run_dir / PROGRAM_FILE
    lms = {name: predictor.lm for name, predictor in program.named_predictors()}
    try:
        for _, predictor in program.named_predictors():
            predictor.lm = None
        program.save(str(path))
    finally:
        for name, predictor in program.named_predictors():
            predictor.lm = lms[name]
    return path


def _without_lms(state: dict) -> dict:
    return {name: ({**part, "lm": None} if isinstance(part, dict) and "lm" in part else part) for name, part in state.items()}


def program_state_path(path: str | Path) -> Path:
    """The state JSON a path names (a compile run folder or the file itself), checked before anything is loaded.

    Raises:
        DataError: Not a ``.json`` file (pickle is never loaded), or missing.
    """
    path = Path(path)
    if path.is_dir():
        path = path / PROGRAM_FILE
    if path.suffix != ".json":
        raise DataError(f"{path}: only DSPy state JSON is loaded (no pickle)")
    if not path.is_file():
        raise DataError(f"compiled program not found: {path}")
    return path


def load_compiled(program: dspy.Module, path: str | Path) -> dspy.Module:
    """Load compiled state (JSON) into a program built from the same config.

    Only instructions and demos are taken from the file; each step keeps the LM its config gave it.
    """
    state = json.loads(program_state_path(path).read_text(encoding="utf-8"))
    lms = {name: predictor.lm for name, predictor in program.named_predictors()}
    program.load_state(_without_lms(state))
    for name, predictor in program.named_predictors():
        predictor.lm = lms[name]
    return program
