"""The configuration reference page, generated from the pydantic models (``askfirst config --reference``), so it cannot
drift from the code: a test fails when ``docs/reference/configuration.md`` is not what this renders."""

from __future__ import annotations

import json
import types
import typing

from pydantic import BaseModel

from askfirst.config import LMConfig

HEADER = """# Configuration reference

Generated from the config models by `askfirst config --reference`; do not edit by hand. Set any of these in a YAML
file (`--config my.yaml`, which may start from a built-in one with `base: demo`) or on the command line
(`--set section.name=value`). Settings marked **operator** are never taken from a run folder or a downloaded config
(see [the trust model](../trust.md)).
"""


def _type_name(annotation) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in typing.get_args(annotation))
    if origin in (list, dict, tuple):
        return f"{origin.__name__}[{', '.join(_type_name(a) for a in typing.get_args(annotation))}]"
    if annotation is type(None):
        return "null"
    return getattr(annotation, "__name__", str(annotation))


def _default(field) -> str:
    if field.default_factory is not None:
        return "(a section)"
    value = field.default
    if isinstance(value, BaseModel):
        return "(a section)"
    return f"`{json.dumps(value)}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _section(name: str, model: type[BaseModel]) -> list[str]:
    doc = " ".join((model.__doc__ or "").split())
    lines = [f"## `{name}`", "", doc, "", "| setting | type | default | what it does |", "|---|---|---|---|"]
    return [*lines, *(_row(f"{name}.{key}", field) for key, field in model.model_fields.items()), ""]


def _row(name: str, field) -> str:
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    trust = " **operator**" if extra.get("trust") == "operator" else ""
    return f"| `{name}`{trust} | {_type_name(field.annotation)} | {_default(field)} | {_cell(field.description or '')} |"


def render() -> str:
    """The reference page's Markdown: one table per section, in the order the config has them."""
    from askfirst.config import AskFirstConfig

    model = AskFirstConfig
    top = [_row(k, f) for k, f in model.model_fields.items() if not _is_section(f.annotation)]
    out = [HEADER, "## Top level", "", "| setting | type | default | what it does |", "|---|---|---|---|", *top, ""]
    for key, field in model.model_fields.items():
        section = _is_section(field.annotation)
        if section is not None:
            out += _section(key, section)
    return "\n".join(out).rstrip() + "\n"


def _is_section(annotation) -> type[BaseModel] | None:
    """The section model ``annotation`` names (``LMConfig | None`` too), or ``None`` for a plain setting."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return LMConfig if annotation is LMConfig else None
