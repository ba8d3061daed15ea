"""``askfirst compile``: prompt-optimise every predictor, track the run, save and log the compiled program."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from askfirst.cli.options import ConfigOpt, SetOpt, data_overrides, resolve, resumed_config
from askfirst.cli.render import augment_progress, index_progress


def compile_(
    config: ConfigOpt = None, set_: SetOpt = None,
    optimizer: Annotated[str | None, typer.Option(help="gepa, miprov2, bootstrap or rewrite_demos (default: compile.optimizer).")] = None,
    objective: Annotated[str | None, typer.Option(help="recall, outcome, both, hm, str_em or gated_recall (rewrite_demos only) (default: compile.objective).")] = None,
    questions: Annotated[str | None, typer.Option(help="Question set to split into train/validation by conversation.")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N questions (before splitting).")] = None,
    resume: Annotated[Path | None, typer.Option(help="An interrupted compile run folder: its config (plus any --set, e.g. a larger budget) is reused and the optimiser resumes from its checkpoint.")] = None,
) -> None:
    """Prompt-optimise every predictor of the program; save it as state JSON with the config that built it."""
    from askfirst.cli.render import console, labelled
    from askfirst.run_dir import save_resolved
    from askfirst.datasets.splits import configured_questions, split_by_conversation
    from askfirst.lm.call_counter import counting_lm_calls, tracked_tokens, tracking_tokens
    from askfirst.lm.factory import build_lm
    from askfirst.optimizers.compile import changed_steps, compile_program, describe_training_set, save_compiled
    from askfirst.optimizers.curves import instruction_diff, instructions, optimisation_curve
    from askfirst.run_dir import new_run_dir, write_atomic
    from askfirst.session import open_session
    from askfirst.tracking import child_run, log_program_model, tracked_run

    if resume:
        # --set on a resume changes the saved config, e.g. to continue with a larger budget.
        cfg, run_dir = resumed_config(resume, None, set_ or [], config=config), resume
        if set_:
            save_resolved(cfg, run_dir)
    else:
        extra = [f"compile.optimizer={optimizer}"] * bool(optimizer) + [f"compile.objective={objective}"] * bool(objective)
        cfg = resolve(config, set_, extra + data_overrides(questions, limit))
        run_dir = None
    train, val = split_by_conversation(configured_questions(cfg, split=cfg.compile.split), train_fraction=cfg.compile.train_fraction, seed=cfg.seed)
    from askfirst.optimizers.factory import budget_warning

    warning = budget_warning(cfg.compile, n_train=len(train), n_val=len(val))
    if warning:  # said before any index or LM work, so the user can stop and raise it
        console.print(labelled("warning:", warning, style="bold yellow"))
    run_dir = run_dir or new_run_dir(cfg, "compile")
    console.print(f"run folder: {run_dir}  (train {len(train)}, validation {len(val)}){'  resuming' if resume else ''}")
    write_atomic(run_dir / "trainset.json", json.dumps(describe_training_set(cfg, train, val), indent=2))
    session = open_session(cfg, progress=index_progress, augment_progress=augment_progress)
    try:
        reflection_lm = build_lm(cfg.compile.reflection_lm, seed=cfg.seed) if cfg.compile.reflection_lm else session.lm
        before = instructions(session.program)
        with tracked_run(cfg, run_name=run_dir.name, tags={"askfirst.kind": "compile"}) as tracker:
            tracker.log_params({"model_id": session.lm.model, "n_train": len(train), "n_val": len(val), "resumed": bool(resume)})
            judges = None
            if cfg.compile.objective == "hm":
                from askfirst.programs.factory import build_judges

                judges = build_judges(cfg, session.retriever.embedder)
            with tracking_tokens(), counting_lm_calls() as counter:
                compiled = compile_program(session.program, train, val, config=cfg, reflection_lm=reflection_lm, run_dir=run_dir,
                                           judges=judges, use_mlflow=tracker.enabled)
                tokens_in, tokens_out = tracked_tokens()  # every LM of the run, the reflection LM included; cached calls cost none
            steps = changed_steps(compiled, seed=session.program)
            path = save_compiled(compiled, run_dir, steps=steps)  # only the steps it changed
            curve = optimisation_curve(compiled)
            for row in curve:
                tracker.log_metrics({"candidate_score": row["score"], "best_score": row["best_so_far"], "metric_calls": row["metric_calls"]},
                                    step=row["step"])
                # Each candidate / trial is also a nested run, to filter and compare in the MLflow UI.
                with child_run(tracker, run_name=f"{run_dir.name}-step{row['step']}", kind="optimisation-trial",
                               params={"step": row["step"], "scored_on": "valset" if row["full_eval"] else "minibatch"}) as trial:
                    trial.log_metrics({"score": row["score"], "metric_calls": row["metric_calls"]})
            diff = instruction_diff(before, instructions(compiled))
            write_atomic(run_dir / "curve.json", json.dumps(curve, indent=2))
            write_atomic(run_dir / "instructions.diff", diff + "\n")
            tracker.log_metrics({"lm_calls": counter.count, "tokens_in": tokens_in, "tokens_out": tokens_out})
            for name in ("config.yaml", "trainset.json", "curve.json", "instructions.diff"):
                tracker.log_artifact(run_dir / name)
            tracker.log_artifact(path)
            log_program_model(tracker, run_dir)
    finally:
        session.close()
    changed = sum(1 for line in diff.splitlines() if line.startswith("+++"))
    console.print(f"compiled program: {path}  ({len(steps)} step(s) changed{': ' + ', '.join(steps) if steps else ''}; "
                  f"{changed} instruction(s), see {run_dir / 'instructions.diff'}; {counter.count} LM calls, "
                  f"{tokens_in} input and {tokens_out} output tokens)\n"
                  f"evaluate it with: askfirst eval --config {run_dir / 'config.yaml'} --program {run_dir} --set data.split=validation")
    if (run_dir / "policy_cv.json").is_file():
        console.print(policy_summary(json.loads((run_dir / "policy_cv.json").read_text()), run_dir / "policy_cv.json"))


def policy_summary(report: dict, path: Path) -> str:
    """One line on a fitted route policy: what it was fitted on and its held-out route accuracy beside the rules'."""
    fitted_on = ", ".join(f"{n} {route}" for route, n in report["policy"]["fitted_on"].items())
    if "fitted" not in report:
        return f"route policy fitted on {report['n']} questions ({fitted_on}); {report['cross_validation']}"
    fitted, rules, diff = report["fitted"]["route_accuracy"], report["rules"]["route_accuracy"], report["difference"]
    low, high = diff["ci95"]
    calibration = report.get("calibration")
    brier = (f"; its held-out probabilities' Brier score {calibration['brier']:.3f} vs {calibration['mix_brier']:.3f} for "
             f"the route mix alone") if calibration else ""
    return (f"route policy fitted on {report['n']} questions ({fitted_on}); route accuracy on held-out folds "
            f"({report['folds']} by conversation) {fitted:.3f} vs the rules' {rules:.3f} on the same questions "
            f"({diff['route_accuracy']:+.3f} [{low:+.3f}, {high:+.3f}]){brier}, see {path}")
