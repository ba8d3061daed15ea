"""``askfirst tune-threshold``: the abstention threshold tuned against the IDK-conditioned HM, or one of the askfirst
program's gates (the retrieval gate, the unnamed-referent check) tuned on answerability labels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import typer

from askfirst.cli.options import ConfigOpt, SetOpt, check_compiled, compiled_override, data_overrides, resolve, resumed_config
from askfirst.cli.render import augment_progress, index_progress


def tune_threshold_(
    config: ConfigOpt = None, set_: SetOpt = None,
    program: Annotated[Path | None, typer.Option(help="Compiled program (run folder or program.json) to tune; sets program.compiled.")] = None,
    questions: Annotated[str | None, typer.Option(help="Question set; its validation half (by conversation) is used.")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N questions before splitting.")] = None,
    resume: Annotated[Path | None, typer.Option(help="An interrupted tune-threshold run folder: questions judged there are not judged again.")] = None,
    signal: Annotated[Literal["hm", "top-cosine", "referent"], typer.Option(
        help="hm: program.answer_threshold against the IDK-conditioned HM (judged replies); top-cosine: the askfirst "
             "program's retrieval gate (askfirst.min_top_cosine); referent: its unnamed-referent check "
             "(askfirst.referent_threshold); both from the questions' answerability labels, no judges.")] = "hm",
    split: Annotated[Literal["train", "validation", "all"], typer.Option(
        help="Which half (by conversation) to tune on; keep the other for evaluation.")] = "validation",
    max_answerable_rate: Annotated[float, typer.Option(
        help="top-cosine, referent: the largest share of ANSWERABLE / PARTIAL questions the gate may flag.")] = 0.10,
) -> None:
    """Tune the abstention threshold (program.answer_threshold) against the IDK-conditioned HM, or with --signal
    top-cosine / referent one of the askfirst program's gates, on one half of the questions (the validation half by default)."""
    from rich.table import Table

    from askfirst.cli.render import console, fmt
    from askfirst.run_dir import save_resolved
    from askfirst.datasets.splits import configured_questions
    from askfirst.optimizers.threshold import tune_threshold
    from askfirst.programs.factory import build_judges
    from askfirst.run_dir import new_run_dir, write_atomic
    from askfirst.session import open_session
    from askfirst.tracking import tracked_run

    from askfirst.config import ConfigError

    if resume:
        if set_ or questions or limit:
            raise ConfigError(f"--resume continues {resume} with its saved config.yaml; --set, --questions and --limit cannot change it")
        cfg = resumed_config(resume, program, _UNSET[signal], config=config)
    else:
        cfg = check_compiled(resolve(config, set_, [*data_overrides(questions, limit), *compiled_override(program), *_UNSET[signal]]))
    if signal != "hm" and cfg.program.kind != "askfirst":
        raise ConfigError(f"--signal {signal} tunes a gate of the askfirst program; program.kind is {cfg.program.kind!r}")
    val = configured_questions(cfg, split=split)
    run_dir = resume or new_run_dir(cfg, "threshold")
    console.print(f"run folder: {run_dir}  ({split} questions: {len(val)})")
    session = open_session(cfg, progress=index_progress, augment_progress=augment_progress)
    try:
        if signal != "hm":
            return _tune_gate(cfg, session.program, val, run_dir, signal=signal, max_answerable_rate=max_answerable_rate)
        with tracked_run(cfg, run_name=run_dir.name, tags={"askfirst.kind": "tune-threshold"}) as tracker:
            result = tune_threshold(session.program, val, build_judges(cfg, session.retriever.embedder),
                                    checkpoint=run_dir / "threshold_rows.jsonl")
            for step, row in enumerate(result["table"]):
                tracker.log_metrics({"threshold": row["threshold"], "HM": row["HM"], "idk_rate": row["idk_rate"]}, step=step)
            tuned = cfg.model_copy(deep=True)
            tuned.program.answer_threshold = result["threshold"]
            save_resolved(tuned, run_dir)
            write_atomic(run_dir / "threshold.json", json.dumps(result, indent=2))
            tracker.log_metrics({"best_threshold": result["threshold"], "best_HM": result["HM"]})
            tracker.log_artifact(run_dir / "threshold.json")
    finally:
        session.close()
    table = Table(title="IDK-conditioned HM by abstention threshold (validation half)")
    for col in ("threshold", "HM", "RL_F", "RB_llm", "RB_agg", "IDK rate"):
        table.add_column(col)
    for row in result["table"]:
        table.add_row(fmt(row["threshold"]), fmt(row["HM"]), fmt(row["RL_F_cond"]), fmt(row["RB_llm_cond"]), fmt(row["RB_agg_cond"]), fmt(row["idk_rate"]))
    console.print(table)
    console.print(f"best threshold {result['threshold']} (HM {result['HM']:.3f}); config with it: {run_dir / 'config.yaml'}")


# Each tuning starts from its setting unset (the check it tunes switched on).
_UNSET = {"hm": ["program.answer_threshold=null"], "top-cosine": ["askfirst.min_top_cosine=null"],
          "referent": ["askfirst.referent_check=true", "askfirst.referent_threshold=null"]}


def _tune_gate(cfg, program, questions, run_dir: Path, *, signal: str, max_answerable_rate: float) -> None:
    """A gate's table and threshold, saved as ``gate.json`` and a ``config.yaml`` that sets it."""
    from rich.table import Table

    from askfirst.cli.render import console, fmt
    from askfirst.run_dir import save_resolved
    from askfirst.optimizers.gate_tuning import SIGNALS, choose_threshold, collect_signals
    from askfirst.run_dir import write_atomic
    from askfirst.tracking import tracked_run

    gate = SIGNALS[signal]
    with tracked_run(cfg, run_name=run_dir.name, tags={"askfirst.kind": "tune-threshold", "askfirst.signal": signal}) as tracker:
        rows = collect_signals(program, questions, signal=gate, checkpoint=run_dir / "gate_rows.jsonl")
        result = choose_threshold(rows, max_answerable_rate=max_answerable_rate, signal=gate) | {"max_answerable_rate": max_answerable_rate}
        tuned = cfg.model_copy(deep=True)
        setattr(tuned.askfirst, gate.setting, result["threshold"])
        save_resolved(tuned, run_dir)
        write_atomic(run_dir / "gate.json", json.dumps(result, indent=2))
        tracker.log_metrics({f"best_{gate.setting}": result["threshold"] if result["threshold"] is not None else -1.0})
        tracker.log_artifact(run_dir / "gate.json")
    classes = [k for k in result["table"][0] if k not in ("threshold", "should_answer")]
    auc = f"; {gate.target} vs ANSWERABLE AUC {result['auc']:.2f}" if result["auc"] is not None else ""
    table = Table(title=f"Share of each class the gate askfirst.{gate.setting} flags ({result['n']} questions{auc})")
    for col in (gate.setting, "should answer", *classes):
        table.add_column(col)
    for row in result["table"][::5]:
        table.add_row(fmt(row["threshold"]), fmt(row["should_answer"]), *(fmt(row[c]) for c in classes))
    console.print(table)
    chosen = result["threshold"]
    console.print(f"gate askfirst.{gate.setting}={chosen} (flags at most {max_answerable_rate:.0%} of the questions to answer); "
                  f"config with it: {run_dir / 'config.yaml'}" if chosen is not None else
                  f"no threshold flags at most {max_answerable_rate:.0%} of the questions to answer: keep the gate off")
