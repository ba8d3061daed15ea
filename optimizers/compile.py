"""Compile (prompt-optimise) the whole program, save it as DSPy state JSON, and load it back."""

from __future__ import annotations

import hashlib
from pathlib import Path

import dspy

from askfirst.config import AskFirstConfig
from askfirst.datasets.errors import DataError
from askfirst.optimizers.factory import build_optimizer
from askfirst.optimizers.objectives import build_objective

PROGRAM_FILE = "program.json"


def split_by_conversation(examples: list[dspy.Example], *, train_fraction: float, seed: int = 0) -> tuple[list, list]:
    """Deterministic train/validation split that keeps each conversation's turns on one side.

    Conversations are ordered by a hash of their id (and the seed) and the first ``train_fraction`` of them
    form the trainset, so the split does not depend on the file's order and never leaks a conversation.
    """
    def conversation(example) -> str:
        return str(example.get("conversation_id") or example.id)

    ids = sorted({conversation(e) for e in examples}, key=lambda c: hashlib.sha256(f"{seed}:{c}".encode()).hexdigest())
    if len(ids) < 2:
        raise DataError(f"cannot split {len(examples)} examples from {len(ids)} conversation(s) into non-empty train and validation sets")
    n_train = min(max(round(len(ids) * train_fraction), 1), len(ids) - 1)
    train_ids = set(ids[:n_train])
    return [e for e in examples if conversation(e) in train_ids], [e for e in examples if conversation(e) not in train_ids]


def compile_program(program: dspy.Module, trainset: list, valset: list, *, config: AskFirstConfig, reflection_lm: dspy.LM,
                    run_dir: Path, judges=None) -> dspy.Module:
    """Optimise every predictor of ``program`` against ``compile.objective``; checkpoints go under ``run_dir``.

    ``judges`` (an ``MTRAGJudges``) is needed for the ``hm`` objective; the judges themselves are not optimised.
    """
    cfg = config.compile
    metric = build_objective(cfg.objective, recall_k=cfg.recall_k, judges=judges)
    optimizer = build_optimizer(cfg, metric, reflection_lm=reflection_lm, log_dir=run_dir / cfg.optimizer, seed=config.seed)
    if cfg.optimizer == "miprov2":
        # MIPROv2 refuses a minibatch larger than the valset (its default is 35).
        extra = {"minibatch_size": min(35, len(valset))} | ({} if cfg.auto else {"num_trials": cfg.num_trials or 5})
        return optimizer.compile(program, trainset=trainset, valset=valset, **extra)
    return optimizer.compile(program, trainset=trainset, valset=valset)


def save_compiled(program: dspy.Module, run_dir: Path) -> Path:
    """Save the optimised instructions and demos as DSPy state JSON (never pickle) beside the run's config.yaml."""
    path = run_dir / PROGRAM_FILE
    program.save(str(path))
    return path


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
    """Load compiled state (JSON) into a program built from the same config."""
    program.load(str(program_state_path(path)))
    return program
