"""The trust boundary: what a run folder or a downloaded config may set, and what only the operator may.

A run folder (its ``config.yaml``, ``grid.yaml``, ``program.json``, checkpoints and predictions) or a config file
someone sent may come from anyone. It may set prompts, demonstrations, fitted parameters and program switches.
It may not set what reaches outside the program: LM and embedding models and endpoints, API key variables, file
paths, store locations, tracking servers, code to import. Those settings carry ``operator_only()`` in the config
models (``askfirst config`` marks them), and only the operator's own ``--config``, ``--set`` and flags set them.

Where a folder's value of such a setting differs from the operator's, the reader either refuses the folder,
naming the settings (``eval --resume`` without ``--config``), or uses the operator's values and says which it
replaced (``serve RUN_DIR``, and a resume given the operator's ``--config``). A few values are safe whoever sets
them (``SAFE_VALUES``): a pinned local model, a named benchmark set, a compiled program shipped in the package or
in the operator's own runs folder.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

from askfirst.config import AskFirstConfig, ConfigError, LMConfig, _full_config_model, config_from_tree, read_mapping


def _local_model(value: Any, _: AskFirstConfig) -> bool:
    from askfirst.lm.local_models import REGISTRY

    return isinstance(value, str) and value.startswith("local/") and value.removeprefix("local/") in REGISTRY


def _named_source(value: Any, _: AskFirstConfig) -> bool:
    from askfirst.datasets.sources import is_named_source

    return value == "demo" or is_named_source(str(value))


def _compiled_program(value: Any, operator: AskFirstConfig) -> bool:
    """No compiled program, one the package ships, or one in the operator's own runs folder (state JSON either way)."""
    if value is None or (isinstance(value, str) and re.fullmatch(r"askfirst:[A-Za-z0-9_-]+", value)):
        return True
    return isinstance(value, str) and Path(value).resolve().is_relative_to(operator.runs_path)


SAFE_VALUES: dict[str, Callable[[Any, AskFirstConfig], bool]] = {
    "local-model": _local_model, "named-source": _named_source, "compiled-program": _compiled_program,
}


class UntrustedSettingsError(ConfigError):
    """A run folder's config sets what only the operator may set; the message names the settings."""


def _sections(annotation: Any) -> list[type[BaseModel]]:
    """The config sections an annotation holds (``LMConfig | None`` -> ``[LMConfig]``)."""
    options = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else (annotation,)
    return [a for a in options if get_origin(a) is None and isinstance(a, type) and issubclass(a, BaseModel)]


def operator_settings(model: type[BaseModel] | None = None, prefix: str = "") -> Iterator[tuple[str, str | None]]:
    """Every operator-only setting of the config, as ``(dotted name, safe kind or None)``, sections walked."""
    model = model or _full_config_model()
    for name, field in model.model_fields.items():
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        if extra.get("trust") == "operator":
            yield prefix + name, extra.get("safe")
        for section in _sections(field.annotation):
            yield from operator_settings(section, f"{prefix}{name}.")


def _get(config: AskFirstConfig, dotted: str) -> Any:
    """The value at ``dotted``; an unset LM section (``retrieval_lm: null``) reads as the main ``lm``."""
    node: Any = config
    for part in dotted.split(".")[:-1]:
        child = getattr(node, part)
        node = config.lm if child is None and LMConfig in _sections(type(node).model_fields[part].annotation) else child
    return getattr(node, dotted.rsplit(".", 1)[-1])


def foreign_settings(config: AskFirstConfig, operator: AskFirstConfig) -> list[str]:
    """The operator-only settings where ``config`` differs from ``operator``, leaving out safe values and locations."""
    return [name for name, safe in operator_settings()
            if safe != "location" and _get(config, name) != _get(operator, name) and not (safe and SAFE_VALUES[safe](_get(config, name), operator))]


def _adopt(config: AskFirstConfig, operator: AskFirstConfig, names: list[str]) -> AskFirstConfig:
    """``config`` with the operator's values at ``names``; an LM section with one of them becomes the operator's whole."""
    tree = config.model_dump(mode="json")
    for name in names:
        parts = name.split(".")
        node, model, source = tree, type(config), operator
        for part in parts[:-1]:
            source = getattr(source, part)
            if LMConfig in _sections(model.model_fields[part].annotation):
                node[part] = source.model_dump(mode="json") if source is not None else None
                break
            node, model = node[part], type(source)
        else:
            node[parts[-1]] = getattr(source, parts[-1])
    return config_from_tree(tree, origin="the operator's values")


def read_run_config(path: Path, operator: AskFirstConfig, *, adopt: bool, refuse: tuple[str, ...] = ()) -> tuple[AskFirstConfig, list[str]]:
    """The config a run folder's (or a downloaded) file holds, checked against the operator's.

    The file is read without following a ``base:`` (it would name another file); ``runs_dir`` is always the operator's.

    Args:
        path: The untrusted ``config.yaml``.
        operator: The operator's own config (their ``--config`` and ``--set``, else the defaults).
        adopt: Where the file sets operator-only settings otherwise: ``True`` uses the operator's values and returns
            a warning naming them, ``False`` raises.
        refuse: Settings refused even when ``adopt`` (``program.compiled`` on a resume: the run's answers were made with it).

    Returns:
        The config, and the warnings to show (empty when nothing was replaced).

    Raises:
        ConfigError: The file is missing, not YAML, or not a valid config.
        UntrustedSettingsError: ``adopt`` is false and the file sets operator-only settings.
    """
    if not path.is_file():
        raise ConfigError(f"{path} not found: not a run folder of askfirst's")
    tree = read_mapping(path)
    if tree is None:
        raise ConfigError(f"{path} is empty: a run folder's config.yaml is a whole, resolved config")
    if "base" in tree:
        raise UntrustedSettingsError(f"{path} names a base config ({tree['base']!r}); a run folder's config.yaml is a whole, resolved config")
    config = config_from_tree(tree | {"runs_dir": operator.runs_dir}, origin=str(path))
    foreign = foreign_settings(config, operator)
    if not foreign:
        return config, []
    listed = ", ".join(f"{name}={_get(config, name)!r}" for name in foreign)
    if not adopt or set(foreign) & set(refuse):
        raise UntrustedSettingsError(
            f"{path} sets what only your own config may set: {listed}. A run folder may set prompts, demos, fitted "
            "parameters and program switches, not models, endpoints, key variables, paths or stores; pass your own "
            "config with --config (its values are used for these) and the compiled program with --program, or start a new run")
    return _adopt(config, operator, foreign), [f"{path} sets {listed}; your own values are used for these"]


def check_operator_settings(config: AskFirstConfig, operator: AskFirstConfig, *, origin: str) -> AskFirstConfig:
    """``config`` (built from untrusted overrides, e.g. a saved grid's cell) if it sets no operator-only setting otherwise.

    Raises:
        UntrustedSettingsError: It does; the message names the settings and ``origin``.
    """
    foreign = foreign_settings(config, operator)
    if foreign:
        raise UntrustedSettingsError(f"{origin} sets what only your own config may set: "
                                     + ", ".join(f"{name}={_get(config, name)!r}" for name in foreign))
    return config


def operator_config(run_dir: Path, config: str | None = None, overrides: list[str] | tuple[str, ...] = ()) -> AskFirstConfig:
    """The operator's own settings for reading ``run_dir``: their config file or built-in name (else the defaults) with
    their ``overrides``; ``runs_dir`` is the folder's parent unless they set one."""
    from askfirst.config import config_path, load_config

    operator = load_config(config_path(config) if config else None, overrides=overrides)
    if "runs_dir" not in operator.model_fields_set and not any(item.startswith("runs_dir=") for item in overrides):
        operator.runs_dir = str(Path(run_dir).resolve().parent)
    return operator


def apply_overrides(config: AskFirstConfig, overrides: list[str] | tuple[str, ...]) -> AskFirstConfig:
    """``config`` with the operator's ``section.key=value`` overrides applied (validated as ``load_config`` does)."""
    return config_from_tree(config.model_dump(mode="json"), overrides, origin="the resumed run's config") if overrides else config


def describe() -> str:
    """The operator-only settings as Markdown lines, for the docs."""
    return "\n".join(f"- `{name}`" + (f" (a run folder may name a {safe.replace('-', ' ')})" if safe and safe != "location" else "")
                     for name, safe in operator_settings())
