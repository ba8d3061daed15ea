"""Build GEPA or MIPROv2 from the ``compile`` section of a config."""

from __future__ import annotations

from pathlib import Path

import dspy

from askfirst.config import CompileConfig, ConfigError
from askfirst.optimizers.demo_selection import labels_agree
from askfirst.optimizers.instruction_candidates import CandidateMIPROv2


def build_optimizer(cfg: CompileConfig, metric, *, reflection_lm: dspy.LM, log_dir: Path, seed: int = 0, use_mlflow: bool = False,
                    candidates: dict[str, list[str]] | None = None):
    """An optimiser whose checkpoints go to ``log_dir``, so an interrupted compile resumes from there.

    Args:
        metric: An objective from ``build_objective``: GEPA gets its feedback form, MIPROv2 its float form.
        reflection_lm: GEPA's reflection LM, MIPROv2's prompt model.
        use_mlflow: GEPA logs its per-iteration scores into the active MLflow run.
        candidates: MIPROv2: the ``compile.instruction_candidates`` file as ``read_candidates`` gives it.
    """
    if cfg.demos_by_label and cfg.optimizer != "bootstrap":
        raise ConfigError(f"compile.demos_by_label chooses BootstrapFewShot's demonstrations: it needs compile.optimizer=bootstrap, not {cfg.optimizer}")
    if cfg.instruction_candidates and cfg.optimizer != "miprov2":
        raise ConfigError(f"compile.instruction_candidates are choices for MIPROv2's search: it needs compile.optimizer=miprov2, not {cfg.optimizer}")
    budget = {"auto": cfg.auto} if cfg.auto else {}
    if cfg.optimizer == "gepa":
        if not cfg.auto:
            budget = {k: v for k, v in (("max_metric_calls", cfg.max_metric_calls), ("max_full_evals", cfg.max_full_evals)) if v}
            if len(budget) != 1:
                raise ConfigError("GEPA needs exactly one budget: compile.auto, or (with compile.auto=null) compile.max_metric_calls or compile.max_full_evals")
        # A multi-objective metric ('both') gets GEPA's frontier per objective as well as per example.
        frontier = {"gepa_kwargs": {"frontier_type": "hybrid"}} if metric.multi_objective else {}
        return dspy.GEPA(metric=metric, reflection_lm=reflection_lm, num_threads=cfg.threads, log_dir=str(log_dir),
                         seed=seed, track_stats=True, use_mlflow=use_mlflow, **budget, **frontier)
    if cfg.optimizer == "bootstrap":
        if cfg.max_demos < 1:
            raise ConfigError("compile.optimizer=bootstrap adds demonstrations only: compile.max_demos must be at least 1")
        # Demonstrations only: a small offline LM rewrites instructions badly (GEPA's 1.5B reflection copied them or
        # replaced one with a request for more information), but can follow worked examples of its own steps.
        scored = labels_agree(metric.as_float()) if cfg.demos_by_label else metric.as_float()
        return dspy.BootstrapFewShot(metric=scored, max_bootstrapped_demos=cfg.max_demos, max_labeled_demos=0, max_rounds=1)
    if not cfg.auto:
        budget = {"auto": None, "num_candidates": cfg.num_candidates or 3}
    # No labelled demos: a task's gold fields are not its steps' outputs, so they cannot show a step what to write.
    return CandidateMIPROv2(metric=metric.as_float(), prompt_model=reflection_lm, num_threads=cfg.threads, log_dir=str(log_dir),
                            seed=seed, max_bootstrapped_demos=cfg.max_demos, max_labeled_demos=0, guard=cfg.instruction_guard,
                            candidates=candidates, **budget)


def mipro_proposer_options(cfg: CompileConfig) -> dict:
    """``MIPROv2.compile``'s switches for what its prompt model sees, from ``compile.proposer_context``."""
    seen = set(cfg.proposer_context)
    return {"program_aware_proposer": "program" in seen, "data_aware_proposer": "data" in seen,
            "tip_aware_proposer": "tips" in seen, "fewshot_aware_proposer": "demos" in seen}


GEPA_MINIBATCH = 3  # GEPA's default reflection minibatch


def budget_warning(cfg: CompileConfig, *, n_train: int, n_val: int) -> str | None:
    """Why an explicit GEPA budget cannot propose anything, or ``None`` when it can (or the budget is a preset).

    GEPA first scores the seed program on the whole valset; one reflection round then scores a minibatch of the
    trainset with the parent and with the new candidate. A budget below that ends before any proposal, and the
    "compiled" program is the seed.
    """
    if cfg.optimizer != "gepa" or cfg.auto:
        return None
    needed = n_val + 2 * min(GEPA_MINIBATCH, n_train)
    budget = cfg.max_metric_calls if cfg.max_metric_calls else (cfg.max_full_evals or 0) * (n_train + n_val)
    if budget >= needed:
        return None
    return (f"GEPA's budget of {budget} metric calls cannot cover the seed evaluation ({n_val} validation questions) plus one "
            f"reflection round ({2 * min(GEPA_MINIBATCH, n_train)} calls): nothing will be proposed. Raise compile.max_metric_calls "
            f"to at least {needed}.")
