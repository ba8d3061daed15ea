"""Options shared by every command: a config file and ``--set section.key=value`` overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from askfirst.config import AskFirstConfig, builtin_config_path, load_config

ConfigOpt = Annotated[str | None, typer.Option("--config", "-c", help="YAML config file, or the name of a built-in one (default, demo).")]
SetOpt = Annotated[list[str] | None, typer.Option("--set", "-s", help="Override a config field: section.key=value (repeatable).")]


def resolve(config: str | None, overrides: list[str] | None, extra: list[str] = ()) -> AskFirstConfig:
    path = None
    if config:
        builtin = builtin_config_path(config)
        path = builtin if not Path(config).exists() and builtin.is_file() else Path(config)
    return load_config(path, overrides=[*(overrides or []), *extra])


def data_overrides(questions: str | None = None, limit: int | None = None) -> list[str]:
    """``--questions``/``--limit`` as config overrides (only those given)."""
    return [f"data.questions={questions}"] * bool(questions) + [f"data.limit={limit}"] * bool(limit)
