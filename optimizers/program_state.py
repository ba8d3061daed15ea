"""Reading a compiled program's state JSON by a schema: instructions and demos, nothing else.

DSPy's ``Predict.load_state`` sets every unknown key of a predictor's state as an attribute, so a crafted
``program.json`` could set, say, a per-predictor ``config`` with another ``api_base`` and send the user's API
key there. Run folders get shared and downloaded, so a file is checked against what the program it is
loaded into can hold, and anything else is refused with a message naming the key.
"""

from __future__ import annotations

import json
from pathlib import Path

import dspy

from askfirst.datasets.errors import DataError
from askfirst.programs.askfirst.policy import POLICY_KEY, PolicyError, RoutePolicy

# What an optimiser may change in a predictor; the rest of a saved state is checked and dropped.
_PREDICTOR_KEYS = {"demos", "signature", "lm", "traces", "train", "fields"}
_SIGNATURE_KEYS = {"instructions", "fields"}
_FIELD_KEYS = {"prefix", "description"}
_DEMO_EXTRA_KEYS = {"augmented"}  # DSPy marks bootstrapped demos


class ProgramStateError(DataError):
    """A compiled program's state that does not fit the program it is loaded into."""


def _text(value, where: str) -> str:
    if not isinstance(value, str):
        raise ProgramStateError(f"{where} must be text, not {type(value).__name__}")
    return value


def _signature(state, predictor: dspy.Predict, where: str) -> dict:
    if not isinstance(state, dict) or set(state) - _SIGNATURE_KEYS:
        extra = sorted(set(state) - _SIGNATURE_KEYS) if isinstance(state, dict) else type(state).__name__
        raise ProgramStateError(f"{where}.signature: only instructions and fields can be loaded (found {extra})")
    fields = state.get("fields", [])
    expected = len(predictor.signature.fields)
    if not isinstance(fields, list) or len(fields) != expected:
        raise ProgramStateError(f"{where}.signature.fields: expected {expected} fields, as the program's Signature has")
    for i, field in enumerate(fields):
        if not isinstance(field, dict) or set(field) - _FIELD_KEYS:
            raise ProgramStateError(f"{where}.signature.fields[{i}]: only 'prefix' and 'description' can be loaded")
        for key, value in field.items():
            _text(value, f"{where}.signature.fields[{i}].{key}")
    return {"instructions": _text(state.get("instructions", predictor.signature.instructions), f"{where}.signature.instructions"),
            "fields": fields or [{"prefix": f.json_schema_extra["prefix"], "description": f.json_schema_extra["desc"]}
                                 for f in predictor.signature.fields.values()]}


def demo_keys(predictor: dspy.Predict) -> set[str]:
    """What a demonstration of ``predictor`` may hold: its Signature's fields, and DSPy's mark of a bootstrapped one."""
    return set(predictor.signature.fields) | _DEMO_EXTRA_KEYS


def _demos(demos, predictor: dspy.Predict, where: str) -> list[dict]:
    if not isinstance(demos, list):
        raise ProgramStateError(f"{where}.demos must be a list")
    allowed = demo_keys(predictor)
    for i, demo in enumerate(demos):
        if not isinstance(demo, dict):
            raise ProgramStateError(f"{where}.demos[{i}] must be an object")
        if set(demo) - allowed:
            raise ProgramStateError(f"{where}.demos[{i}]: {sorted(set(demo) - allowed)} are not fields of its Signature")
    return demos


def _predictor_state(state, predictor: dspy.Predict, where: str) -> dict:
    if not isinstance(state, dict):
        raise ProgramStateError(f"{where} must be an object")
    unknown = set(state) - _PREDICTOR_KEYS
    if unknown:
        raise ProgramStateError(f"{where}: {sorted(unknown)} cannot be loaded from a file (only instructions and demos)")
    if state.get("lm") is not None:
        raise ProgramStateError(f"{where}.lm: an LM is never loaded from a file; the config gives each step its LM")
    if state.get("fields"):
        raise ProgramStateError(f"{where}.fields: decision settings cannot be loaded from a file")
    for key in ("traces", "train"):
        if not isinstance(state.get(key, []), list):
            raise ProgramStateError(f"{where}.{key} must be a list")
    if "signature" not in state:
        raise ProgramStateError(f"{where}: no signature")
    return {"signature": _signature(state["signature"], predictor, where), "demos": _demos(state.get("demos", []), predictor, where),
            "traces": [], "train": [], "lm": None}


def read_program_state(path: Path, program: dspy.Module) -> dict[str, dict]:
    """The checked state of each predictor of ``program`` that the JSON at ``path`` names.

    A compile saves only the predictors it changed (``save_compiled``), so a compiled program loads into its program
    with other stages switched on or off; a predictor the file does not name keeps its own instruction and demos.

    Raises:
        ProgramStateError: Not JSON, not an object, a predictor this program does not have, or any key beyond the
            instructions and demos a predictor of this program can hold (the message names it).
    """
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ProgramStateError(f"{path}: not a compiled program's state JSON ({exc})") from None
    if not isinstance(state, dict):
        raise ProgramStateError(f"{path}: a compiled program's state is a JSON object, not {type(state).__name__}")
    predictors = dict(program.named_predictors())
    if not isinstance(state.get("metadata", {}), dict):
        raise ProgramStateError(f"{path}: metadata must be an object")
    saved = {k: v for k, v in state.items() if k not in ("metadata", POLICY_KEY)}  # the policy has its own schema (read_route_policy)
    unknown = sorted(set(saved) - set(predictors))
    if unknown:
        raise ProgramStateError(f"{path} does not fit this program: unknown predictor(s) {unknown}. Its predictors: {sorted(predictors)} "
                                "(was it compiled with another program.kind or switches? program.compiled=none runs it uncompiled)")
    return {name: _predictor_state(saved[name], predictors[name], f"{path.name}: {name}") for name in predictors if name in saved}


def read_route_policy(path: Path, program: dspy.Module) -> RoutePolicy | None:
    """The route policy the state JSON at ``path`` holds, checked by its schema (``None`` when it holds none).

    Raises:
        ProgramStateError: A policy that is not one, or one for a program with no route policy to set.
    """
    state = json.loads(path.read_text(encoding="utf-8"))
    if POLICY_KEY not in state:
        return None
    if not hasattr(program, "route_policy"):
        raise ProgramStateError(f"{path}: holds a route policy, but this program decides without one (program.kind=askfirst has one)")
    try:
        return RoutePolicy.from_json(state[POLICY_KEY], where=f"{path.name}: {POLICY_KEY}")
    except PolicyError as exc:
        raise ProgramStateError(str(exc)) from None
