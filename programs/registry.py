"""The registry of programs: ``program.kind`` names one, and a program may build others through it.

Every sub-package of ``askfirst.programs`` that defines ``SPEC`` is registered, so adding a strategy is adding
one package. A program outside this project registers through the ``askfirst.programs`` entry-point group
(its value: a ``ProgramSpec`` object, ``module:SPEC``).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import pkgutil
from functools import cache
from typing import TYPE_CHECKING

from askfirst.programs.base import ProgramSpec, Resources

if TYPE_CHECKING:
    import dspy

    from askfirst.config import AskFirstConfig

ENTRY_POINT_GROUP = "askfirst.programs"


class UnknownProgramError(ValueError):
    """A ``program.kind`` that no registered program has."""


@cache
def specs() -> dict[str, ProgramSpec]:
    """Every registered program by name: this package's sub-packages first, then entry points."""
    import askfirst.programs as package

    found: dict[str, ProgramSpec] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.ispkg:
            spec = getattr(importlib.import_module(f"{package.__name__}.{info.name}"), "SPEC", None)
            if isinstance(spec, ProgramSpec):
                found[spec.name] = spec
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        spec = entry.load()
        if not isinstance(spec, ProgramSpec):
            raise TypeError(f"entry point {entry.value!r} in {ENTRY_POINT_GROUP!r} is not a ProgramSpec")
        found.setdefault(spec.name, spec)
    return found


def get_spec(kind: str) -> ProgramSpec:
    """The spec registered as ``kind``.

    Raises:
        UnknownProgramError: No program has that name (the message names the registered ones).
    """
    registered = specs()
    if kind not in registered:
        raise UnknownProgramError(f"unknown program {kind!r}; registered programs: {', '.join(registered)}")
    return registered[kind]


class Registry:
    """Builds programs over one set of resources; handed to every ``ProgramSpec.build`` so it can compose."""

    def __init__(self, resources: Resources):
        self.resources = resources

    def build(self, kind: str, config: AskFirstConfig) -> dspy.Module:
        """Build program ``kind`` from ``config`` on these resources, its steps on the LMs its roles name."""
        spec = get_spec(kind)
        program = spec.build(config, self.resources, self)
        assign_lms(program, spec, config, self.resources)
        return program


def assign_lms(program: dspy.Module, spec: ProgramSpec, config: AskFirstConfig, resources: Resources) -> None:
    """Put each predictor whose name starts with a role's prefix on that role's LM, when the config sets one."""
    for role, prefixes in spec.lm_roles.items():
        lm_config = getattr(config, role, None)
        if lm_config is None or not prefixes:
            continue
        lm = resources.lm_for(lm_config, seed=config.seed)
        for name, predictor in program.named_predictors():
            if name.startswith(tuple(prefixes)):
                predictor.lm = lm


def build_program(config: AskFirstConfig, resources: Resources) -> dspy.Module:
    """The program ``program.kind`` names, built on ``resources``, with ``program.compiled``'s state loaded into it.

    Raises:
        ProgramStateError: The compiled program does not fit the program this config builds.
    """
    program = Registry(resources).build(config.program.kind, config)
    if config.program.compiled:
        from askfirst.optimizers.compile import load_compiled

        load_compiled(program, config.program.compiled)
    return program
