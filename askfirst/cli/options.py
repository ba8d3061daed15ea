"""Options shared by every command: a config file and ``--set section.key=value`` overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from askfirst.config import AskFirstConfig, config_path, load_config

ConfigOpt = Annotated[str | None, typer.Option("--config", "-c", help="YAML config file, or the name of a built-in one (default, demo).")]
SetOpt = Annotated[list[str] | None, typer.Option("--set", "-s", help="Override a config field: section.key=value (repeatable).")]


def resolve(config: str | None, overrides: list[str] | None, extra: list[str] = ()) -> AskFirstConfig:
    return load_config(config_path(config) if config else None, overrides=[*(overrides or []), *extra])


def data_overrides(questions: str | None = None, limit: int | None = None) -> list[str]:
    """``--questions``/``--limit`` as config overrides (only those given)."""
    return [f"data.questions={questions}"] * bool(questions) + [f"data.limit={limit}"] * bool(limit)


def compiled_override(program: Path | None) -> list[str]:
    """``--program`` as the ``program.compiled`` override, so the run's config.yaml records it (none if not given)."""
    return [f"program.compiled={program}"] if program else []


def check_compiled(config: AskFirstConfig) -> AskFirstConfig:
    """Fail on a bad ``program.compiled`` now, before any index or model work (the state is loaded as the program is built)."""
    if config.program.compiled:
        from askfirst.optimizers.compile import program_state_path

        program_state_path(config.program.compiled)
    return config


def resumed_config(run_dir: Path, program: Path | None, overrides: list[str] = ()) -> AskFirstConfig:
    """The saved config.yaml of a run to resume, with the compiled program it started with.

    Raises:
        ConfigError: ``program`` is not the compiled program the run started with. A run folder from before
            ``program.compiled`` was recorded takes ``program`` (and records it).
    """
    from askfirst.config import ConfigError, save_resolved

    saved = load_config(run_dir / "config.yaml")
    if program and saved.program.compiled is None:
        save_resolved(check_compiled(load_config(run_dir / "config.yaml", overrides=compiled_override(program))), run_dir)
    elif program and Path(saved.program.compiled) != program:
        raise ConfigError(f"--resume continues {run_dir} with the compiled program it started with ({saved.program.compiled}), not {program}")
    return check_compiled(load_config(run_dir / "config.yaml", overrides=list(overrides)))
