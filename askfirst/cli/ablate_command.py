"""``askfirst ablate``: every cell of a grid over one question set, compared with the reference cell."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from askfirst.cli.options import SetOpt, data_overrides, resolve
from askfirst.cli.render import augment_progress, index_progress


def ablate(
    grid: Annotated[Path, typer.Argument(help="Ablation grid YAML (see askfirst/ablation.py for the format).")],
    set_: SetOpt = None,
) -> None:
    """Run every cell of an ablation grid over one question set; compare each with the reference cell (paired bootstrap 95% CIs)."""
    from askfirst.ablation import load_spec, run_cells
    from askfirst.cli.render import console, print_comparison
    from askfirst.config import ConfigError
    from askfirst.datasets.splits import configured_questions
    from askfirst.lm.factory import build_lm
    from askfirst.optimizers.compile import load_compiled
    from askfirst.programs.factory import build_program
    from askfirst.retrieval.factory import open_retriever
    from askfirst.run_dir import new_run_dir
    from askfirst.session import open_session
    from askfirst.tracking import tracked_run

    spec = load_spec(grid)
    extra = data_overrides(spec.questions, spec.limit)
    base = resolve(spec.base, set_, extra)
    configs = {c.name: resolve(spec.base, set_, [*extra, *c.overrides]) for c in spec.cells}
    index_fields = {"mode", "per_retriever_k", "rrf_k"}  # what a cell may vary without another index
    for name, cfg in configs.items():
        if cfg.data != base.data or cfg.retriever.model_dump(exclude=index_fields) != base.retriever.model_dump(exclude=index_fields):
            raise ConfigError(f"cell {name!r} changes the data or the index; cells may vary the program, LMs and retrieval mode/k only")
    examples = configured_questions(base)
    run_dir = new_run_dir(base, "ablate")
    (run_dir / "grid.yaml").write_text(grid.read_text(encoding="utf-8"), encoding="utf-8")
    console.print(f"run folder: {run_dir}  ({len(spec.cells)} cells x {len(examples)} questions; reference {spec.reference!r})")
    session = open_session(base, progress=index_progress, augment_progress=augment_progress)

    def program_for(cfg, cell):
        retriever = session.retriever if cfg.retriever == base.retriever else open_retriever(cfg, session.store)
        program = build_program(cfg, retriever, store=session.store)
        console.print(f"[bold]cell {cell.name}[/bold]: {' '.join(cell.overrides) or '(base)'}")
        return load_compiled(program, cell.program_state) if cell.program_state else program

    try:
        with tracked_run(base, run_name=run_dir.name, tags={"askfirst.kind": "ablate"}) as tracker:
            tracker.log_artifact(run_dir / "grid.yaml")
            rows = run_cells(spec, configs, examples, run_dir=run_dir, program_for=program_for, tracker=tracker,
                             lm_for=lambda cfg: session.lm if cfg.lm == base.lm else build_lm(cfg.lm, seed=cfg.seed),
                             k=base.program.evidence_k, on_question=lambda i, n, rec: console.print(f"  [{i}/{n}] {rec['id']}: {rec['route']}"))
    finally:
        session.close()
    print_comparison(rows, reference=spec.reference)
    console.print(f"outputs: {run_dir}")
