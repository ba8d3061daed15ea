"""Options shared by every command: a config file and ``--set section.key=value`` overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from askfirst.config import AskFirstConfig, builtin_config_path, config_path, load_config

BUILTIN_CONFIGS = sorted(p.stem for p in builtin_config_path("default").parent.glob("*.yaml"))
ConfigOpt = Annotated[str | None, typer.Option("--config", "-c", help=f"YAML config file, or the name of a built-in one ({', '.join(BUILTIN_CONFIGS)}).")]
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


def warn(message: str) -> None:
    """A warning line on stderr, where progress goes."""
    from askfirst.cli.render import labelled, progress_console

    progress_console.print(labelled("warning:", message, style="bold yellow"), highlight=False)


def resumed_config(run_dir: Path, program: Path | None, overrides: list[str] = (), *, config: str | None = None) -> AskFirstConfig:
    """The saved config.yaml of a run to resume, read as an untrusted file (``askfirst.trust``), with the compiled
    program it started with and ``overrides`` applied.

    What only the operator may set (models, endpoints, key variables, paths, stores) comes from ``config``, the
    operator's own file; without it the folder must agree with the defaults there, or it is refused.

    Raises:
        ConfigError: ``program`` is not the compiled program the run started with, or the folder sets operator-only
            settings otherwise (``UntrustedSettingsError``). A run folder from before ``program.compiled`` was
            recorded takes ``program`` (and records it).
    """
    from askfirst.config import ConfigError
    from askfirst.run_dir import save_resolved
    from askfirst.trust import apply_overrides, operator_config, read_run_config

    operator = operator_config(run_dir, config, [*overrides, *compiled_override(program)])
    saved, warnings = read_run_config(run_dir / "config.yaml", operator, adopt=config is not None, refuse=("program.compiled",))
    for line in warnings:
        warn(line)
    if program and saved.program.compiled is None:
        saved.program.compiled = str(program)
        save_resolved(check_compiled(saved), run_dir)
    elif program and Path(saved.program.compiled) != program:
        raise ConfigError(f"--resume continues {run_dir} with the compiled program it started with ({saved.program.compiled}), not {program}")
    return check_compiled(apply_overrides(saved, overrides))
