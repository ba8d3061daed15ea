"""``askfirst ablate``: every cell of a grid over one question set, compared with the reference cell."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from askfirst.cli.options import SetOpt, check_compiled, data_overrides, resolve
from askfirst.cli.render import augment_progress, augment_summary, index_progress, labelled, progress_console


def _saved_grid(grid: Path, cells: list[str] | None) -> str:
    """The grid file's text for the run folder, with ``--cells`` recorded as ``only`` so a resume runs the same cells."""
    import yaml

    text = grid.read_text(encoding="utf-8")
    if not cells:
        return text
    raw = {**(yaml.safe_load(text) or {}), "only": cells}
    return f"# {grid} run with --cells {','.join(cells)}\n" + yaml.safe_dump(raw, sort_keys=False)


def _widen_saved_grid(grid: Path, added: list[str]) -> None:
    """Record cells added on a resume in the run folder's ``grid.yaml``, so a later plain ``--resume`` runs them too."""
    import itertools

    import yaml

    text = grid.read_text(encoding="utf-8")
    raw = yaml.safe_load(text) or {}
    if not raw.get("only"):
        return  # the run already has every cell of its grid
    header = "".join(itertools.takewhile(lambda line: line.startswith("#"), text.splitlines(keepends=True)))
    raw["only"] = [*raw["only"], *(name for name in added if name not in raw["only"])]
    grid.write_text(f"{header}# cells added on resume: {','.join(added)}\n" + yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")


def rescoped_warning(saved, resumed) -> str | None:
    """A warning when a resume changes which questions a question-scoped corpus is built from: the questions
    already answered saw the old, smaller corpus, so old and new answers are not comparable."""
    from askfirst.datasets.splits import question_selection

    before, after = question_selection(saved), question_selection(resumed)
    if resumed.data.corpus_scope != "questions" or before == after:
        return None
    return (f"data.corpus_scope=questions and the question selection changed ({before} -> {after}): the corpus "
            "is re-scoped, so questions answered before this resume saw a different corpus. For a clean comparison start a "
            "new ablation at the full size and stop it early (--resume continues, --upto N reports on the first N).")


def _resumed(run_dir: Path, set_: list[str] | None, cells: list[str] | None):
    """The grid, base config and cell configs an ablation folder saved, with ``--set`` applied on top
    (e.g. ``data.limit=50`` to extend a finished 10-question ablation)."""
    from askfirst.ablation import cell_folder, load_spec
    from askfirst.config import ConfigError
    from askfirst.trust import apply_overrides, check_operator_settings, operator_config, read_run_config

    grid = run_dir / "grid.yaml"
    if not grid.is_file():
        raise ConfigError(f"{run_dir} is not an ablation run folder (no grid.yaml)")
    spec = load_spec(grid, only=cells)
    overrides = set_ or []
    operator = operator_config(run_dir, None, overrides)  # the folder's files are untrusted: askfirst.trust
    saved_base, _ = read_run_config(run_dir / "config.yaml", operator, adopt=False)
    base = apply_overrides(saved_base, overrides)
    warning = rescoped_warning(saved_base, base)
    if warning:
        progress_console.print(labelled("warning:", warning, style="yellow"))
    configs, added = {}, []
    for cell in spec.cells:
        saved = cell_folder(run_dir, cell.name) / "config.yaml"
        if saved.is_file():
            configs[cell.name] = apply_overrides(read_run_config(saved, operator, adopt=False)[0], overrides)
        elif cells:  # named with --cells but not run yet: added on the run's base, so it is paired on the same questions and index
            added_cfg = apply_overrides(saved_base, [*cell.overrides, *overrides])
            configs[cell.name] = check_operator_settings(added_cfg, operator, origin=f"{grid}'s cell {cell.name!r}")
            added.append(cell.name)
        else:
            raise ConfigError(f"{saved} is missing: the ablation stopped before its cells were set up; start it again")
    if added:
        _widen_saved_grid(grid, added)
        progress_console.print(f"adding cells {', '.join(added)} to this run: they answer the questions the others already did")
    return spec, base, configs


def ablate(
    grid: Annotated[Path | None, typer.Argument(help="Ablation grid YAML (see askfirst/ablation.py for the format).")] = None,
    set_: SetOpt = None,
    resume: Annotated[Path | None, typer.Option(help="An ablation run folder to finish: its saved grid and cell configs are reused, "
                                                      "answered questions are skipped; --set applies on top (data.limit=N extends it).")] = None,
    upto: Annotated[int | None, typer.Option(min=1, help="Stop after the first N questions of the selection (the selection, and so a "
                                                         "question-scoped index, stay as configured): a report on part of a long ablation.")] = None,
    cells: Annotated[str | None, typer.Option(help="Comma-separated cells to run (they must include the reference), e.g. "
                                                   "urasys,foundation: a cheaper run of a costly grid. With --resume, a cell "
                                                   "the run has not run yet is added to it.")] = None,
    format_: Annotated[str | None, typer.Option("--format", help="Also write the comparison as comparison.md, .csv or .tex "
                                                               "(md, csv, latex) in the run folder.")] = None,
) -> None:
    """Run every cell of an ablation grid over one question set; compare each with the reference cell (paired bootstrap 95% CIs).

    The cells take the questions in turn, so an interrupted ablation has every cell on the same questions.
    """
    from dataclasses import replace

    from askfirst.table_export import FORMATS

    if format_ is not None and format_ not in FORMATS:
        raise typer.BadParameter(f"--format must be one of {', '.join(FORMATS)}")

    from askfirst.ablation import load_spec, run_cells
    from askfirst.cli.render import console, print_comparison
    from askfirst.config import ConfigError
    from askfirst.run_dir import save_resolved
    from askfirst.datasets.splits import configured_questions
    from askfirst.evaluation.exports import write_exports
    from askfirst.evaluation.judge_run import judge_result
    from askfirst.lm.factory import build_lm
    from askfirst.programs.registry import build_program
    from askfirst.retrieval.factory import open_retriever
    from askfirst.run_dir import new_run_dir, write_atomic
    from askfirst.session import open_session
    from askfirst.tracking import tracked_run

    only = [c.strip() for c in cells.split(",") if c.strip()] if cells else None
    if resume:
        spec, base, configs = _resumed(resume, set_, only)
        run_dir = resume
        save_resolved(base, run_dir)
    elif grid is None:
        raise ConfigError("give an ablation grid file, or --resume RUN_FOLDER")
    else:
        spec = load_spec(grid, only=only)
        extra = data_overrides(spec.questions, spec.limit)
        # The grid's questions/limit, then --set (so --set data.limit=5 wins), then each cell's own overrides.
        base = resolve(spec.base, None, [*extra, *(set_ or [])])
        configs = {c.name: resolve(spec.base, None, [*extra, *(set_ or []), *c.overrides]) for c in spec.cells}
    index_fields = {"mode", "per_retriever_k", "rrf_k"}  # what a cell may vary without another index
    for name, cfg in configs.items():
        if cfg.data != base.data or cfg.retriever.model_dump(exclude=index_fields) != base.retriever.model_dump(exclude=index_fields):
            raise ConfigError(f"cell {name!r} changes the data or the index; cells may vary the program, LMs and retrieval mode/k only")
    examples = configured_questions(base)[:upto]
    for cfg in configs.values():
        check_compiled(cfg)  # a bad file fails here, before any index or model work
    if not resume:
        run_dir = new_run_dir(base, "ablate")
        write_atomic(run_dir / "grid.yaml", _saved_grid(grid, only))
    console.print(f"run folder: {run_dir}  ({len(spec.cells)} cells x {len(examples)} questions, taken in turn; reference {spec.reference!r})")
    session = open_session(base, progress=index_progress, augment_progress=augment_progress)
    if session.augment_result:
        progress_console.print(augment_summary(session.augment_result))
    texts = session.store.texts()  # for the judges and exports

    def program_for(cfg, cell):
        resources = session.resources
        if cfg.retriever != base.retriever:
            resources = replace(resources, retriever=open_retriever(cfg, session.store))
        return build_program(cfg, resources)

    def judge(cfg, result):
        write_exports(examples[: len(result.records)], result.records, run_dir=result.run_dir, passage_text=texts)
        return judge_result(cfg, examples, result, embedder=session.retriever.embedder, passage_text=texts,
                            say=lambda note: console.print(f"{result.run_dir.name}: {note}"))

    def progress(cell, i, n, rec):
        console.print(f"  [{i}/{n}] {cell:>22s} {rec['id']}: {rec['route']:8s} {rec['seconds']:6.1f}s {rec['lm_calls']:3d} calls")

    try:
        with tracked_run(base, run_name=run_dir.name, tags={"askfirst.kind": "ablate"}) as tracker:
            tracker.log_artifact(run_dir / "grid.yaml")
            rows = run_cells(spec, configs, examples, run_dir=run_dir, program_for=program_for, tracker=tracker,
                             lm_for=lambda cfg: session.lm if cfg.lm == base.lm else build_lm(cfg.lm, seed=cfg.seed),
                             k=base.program.evidence_k, on_question=progress, judge=judge)
    finally:
        session.close()
    print_comparison(rows, reference=spec.reference)
    if format_:
        from askfirst.table_export import EXTENSIONS, comparison_table, render

        path = write_atomic(run_dir / f"comparison.{EXTENSIONS[format_]}", render(*comparison_table(rows), format_))
        console.print(f"comparison table: {path}")
    console.print(f"outputs: {run_dir}")
