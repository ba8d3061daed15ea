"""``askfirst eval``: run the program over a question set; score, judge and track it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from askfirst.cli.options import ConfigOpt, SetOpt, check_compiled, compiled_override, data_overrides, resolve, resumed_config
from askfirst.cli.render import augment_progress, augment_summary, index_progress, progress_console


def evaluate(
    config: ConfigOpt = None, set_: SetOpt = None,
    questions: Annotated[str | None, typer.Option(help="Question-set JSONL (default: data.questions).")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N questions.")] = None,
    resume: Annotated[Path | None, typer.Option(help="A run folder to finish: its saved config is reused and answered questions are skipped; "
                                                      "models, endpoints and paths come from --config (yours), not from the folder.")] = None,
    program: Annotated[Path | None, typer.Option(
        help="Compiled program: a compile run folder or its program.json (state JSON); sets program.compiled.")] = None,
) -> None:
    """Index the corpus if needed, run the program over a question set, print and log the metrics."""
    from askfirst.cli.render import console, print_summary
    from askfirst.config import ConfigError
    from askfirst.datasets.splits import configured_questions
    from askfirst.evaluation.exports import is_mtrag, write_exports
    from askfirst.evaluation.judge_run import judge_result
    from askfirst.evaluation.runner import run_eval
    from askfirst.optimizers.compile import program_state_digest
    from askfirst.run_dir import new_run_dir
    from askfirst.session import open_session
    from askfirst.tracking import tracked_run

    extra = data_overrides(questions, limit)
    if resume:
        given = [name for name, value in (("--set", set_), ("--questions", questions), ("--limit", limit)) if value]
        if given:  # a resumed run keeps the config its answers were made with; ignoring these silently would mislead
            raise ConfigError(f"--resume continues {resume} with its saved config.yaml; {', '.join(given)} cannot change it "
                              "(start a new run, or edit a copy of that config and pass it with --config). --config on a "
                              "resume gives your own models, endpoints and paths, which a run folder may not set")
        cfg, run_dir = resumed_config(resume, program, config=config), resume
    else:
        cfg = check_compiled(resolve(config, set_, [*extra, *compiled_override(program)]))
        run_dir = None
    examples = configured_questions(cfg)
    fresh = run_dir is None
    run_dir = run_dir or new_run_dir(cfg, "eval")
    console.print(f"run folder: {run_dir}")
    try:
        session = open_session(cfg, progress=index_progress, augment_progress=augment_progress)
    except BaseException:
        if fresh and [p.name for p in run_dir.iterdir()] == ["config.yaml"]:  # nothing was run: leave no empty run folder
            (run_dir / "config.yaml").unlink()
            run_dir.rmdir()
        raise
    if session.augment_result:
        progress_console.print(augment_summary(session.augment_result))
    k = cfg.program.evidence_k
    try:
        with tracked_run(cfg, run_name=run_dir.name, tags={"askfirst.kind": "eval"}) as tracker:
            tracker.log_params({"model_id": session.lm.model, "questions": cfg.data.questions, "n_questions": len(examples),
                                "compiled_program": cfg.program.compiled or "",
                                "compiled_program_sha256": program_state_digest(cfg.program.compiled) if cfg.program.compiled else ""})

            def progress(i, n, rec):
                console.print(f"[{i}/{n}] {rec['id']}: {rec['route']:8s} {rec['seconds']:6.1f}s  {rec['answer'][:90]!r}")

            texts = session.store.texts()  # for the judges and exports
            result = run_eval(session.program, examples, run_dir=run_dir, k=k, on_question=progress,
                              retry_errors=cfg.eval.retry_errors, threads=cfg.eval.threads)
            for path in write_exports(examples, result.records, run_dir=run_dir, passage_text=texts):
                tracker.log_artifact(path)
            if is_mtrag(examples):  # run_retrieval_eval.py's own figures, beside ours (askfirst/evaluation/mtrag_retrieval.py)
                import json

                from askfirst.evaluation.mtrag_retrieval import official_retrieval
                from askfirst.run_dir import write_atomic

                result.summary["mtrag_official_retrieval"] = official_retrieval(examples, result.records)
                write_atomic(run_dir / "metrics.json", json.dumps(result.summary, indent=2))
            judged = judge_result(cfg, examples, result, embedder=session.retriever.embedder, passage_text=texts, say=console.print)
            tracker.log_metrics(judged)
            for name in ("hm.jsonl", "ambiguity.jsonl"):
                if (run_dir / name).is_file():
                    tracker.log_artifact(run_dir / name)
            tracker.log_metrics({key: v for key, v in result.summary.items() if not isinstance(v, dict)})
            for route, row in result.summary["per_route"].items():
                tracker.log_metrics({f"{route}.route_accuracy": row["route_accuracy"], f"{route}.outcome_accuracy": row["outcome_accuracy"]})
            for name, row in result.summary.get("per_collection", {}).items():
                tracker.log_metrics({f"{name}.{m}": v for m, v in row.items()})
            for name in ("config.yaml", "predictions.jsonl", "scores.jsonl", "metrics.json"):
                tracker.log_artifact(run_dir / name)
    finally:
        session.close()
    print_summary(result.summary, k=k)
    console.print(f"outputs: {run_dir}")
