"""Ablation grids: named cells or a cartesian grid of config overrides, run over one question set.

A grid file (YAML)::

    base: demo                 # built-in config name or file (optional)
    questions: demo            # question set (optional; default: the base config's)
    limit: 10                  # optional
    reference: full            # the cell every other is compared with (default: the first)
    cells:                     # named cells: overrides in dotted form ...
      full: {}
      k1: {notes.iterations: 1}
      compiled: {program.compiled: runs/compile-…/program.json}
    grid:                      # ... and/or a cartesian product, one cell per combination
      notes.build: [true, false]
      notes.reranker: [true, false]
    only: [full, k1]           # optional: run just these cells (``askfirst ablate --cells full,k1``)

``program_state`` (older grids) is ``program.compiled``: the compiled program loaded into that cell.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from askfirst.config import ConfigError
from askfirst.evaluation.metrics import shown_in
from askfirst.run_dir import write_atomic

_GRID_KEYS = {"base", "questions", "limit", "reference", "cells", "grid", "only"}


@dataclass
class Cell:
    name: str
    overrides: list[str]


@dataclass
class AblationSpec:
    cells: list[Cell]
    reference: str
    base: str | None = None
    questions: str | None = None
    limit: int | None = None
    only: list[str] = field(default_factory=list)


def cell_folder(run_dir: Path, name: str) -> Path:
    """The folder of the cell ``name`` inside ``run_dir`` (``/`` written as ``_``); never outside it.

    Raises:
        ConfigError: The name would leave the run folder (``..``, ``.``, empty).
    """
    from askfirst.retrieval.safe_paths import UnsafePathError, inside

    try:
        return inside(Path(run_dir), name.replace("/", "_").replace("\\", "_").replace("\0", "_"))
    except UnsafePathError:
        raise ConfigError(f"cell name {name!r} cannot name a folder inside the run folder; rename the cell") from None


def _fmt(value) -> str:
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _cell(name: str, settings: dict) -> Cell:
    settings = dict(settings or {})
    if "program_state" in settings:
        settings["program.compiled"] = settings.pop("program_state")
    return Cell(name, [f"{k}={_fmt(v)}" for k, v in settings.items()])


def load_spec(path: str | Path, *, only: list[str] | None = None) -> AblationSpec:
    """Read and check a grid file.

    Args:
        only: Run just these cells (they must include the reference); overrides the file's ``only``.

    Raises:
        ConfigError: Missing file, unknown top-level key, no cells, duplicate or unknown reference cell, an
            ``only`` that names an unknown cell or leaves out the reference.
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"ablation grid not found: {p}")
    raw = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{p}: the grid file must hold a mapping")
    unknown = set(raw) - _GRID_KEYS
    if unknown:
        raise ConfigError(f"{p}: unknown key(s) {sorted(unknown)}; allowed: {sorted(_GRID_KEYS)}")
    cells = [_cell(str(name), s) for name, s in (raw.get("cells") or {}).items()]
    grid = raw.get("grid") or {}
    if grid:
        keys = list(grid)
        for combo in itertools.product(*(grid[k] if isinstance(grid[k], list) else [grid[k]] for k in keys)):
            name = ",".join(f"{k.split('.')[-1]}={_fmt(v)}" for k, v in zip(keys, combo, strict=True))
            cells.append(_cell(name, dict(zip(keys, combo, strict=True))))
    if not cells:
        raise ConfigError(f"{p}: declare at least one cell under 'cells' or 'grid'")
    names = [c.name for c in cells]
    for name in names:
        cell_folder(p.parent, name)
    if len(set(names)) != len(names):
        raise ConfigError(f"{p}: duplicate cell names {sorted({n for n in names if names.count(n) > 1})}")
    reference = str(raw.get("reference") or names[0])
    if reference not in names:
        raise ConfigError(f"{p}: reference cell {reference!r} is not among {names}")
    only = only or raw.get("only")
    if only:
        unknown = [n for n in only if n not in names]
        if unknown:
            raise ConfigError(f"{p}: no cell named {unknown}; the cells are {names}")
        if reference not in only:
            raise ConfigError(f"{p}: the cells to run must include the reference cell {reference!r}")
        cells = [c for c in cells if c.name in only]
    return AblationSpec(cells, reference, raw.get("base"), raw.get("questions"), raw.get("limit"), only=list(only or []))


@dataclass
class CellResult:
    cell: Cell
    scores: list[dict]
    summary: dict


def _paired_hm(ref: list[dict], other: list[dict], *, seed: int) -> tuple[float, float, float] | None:
    """HM's difference with a paired interval: questions resampled, HM (a harmonic mean of per-metric means) recomputed."""
    import numpy as np

    from askfirst.evaluation.mtrag_formulas import harmonic_mean
    from askfirst.evaluation.stats import paired_bootstrap_statistic

    pairs = [(o["hm_conditioned"], r["hm_conditioned"]) for r, o in zip(ref, other, strict=True)
             if r.get("hm_conditioned") and o.get("hm_conditioned")]
    if not pairs:
        return None
    return paired_bootstrap_statistic(np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]),
                                      lambda rows: harmonic_mean(list(rows.mean(axis=0))), seed=seed)


def _paired(ref: list[dict], other: list[dict], key: str) -> tuple[list[float], list[float]]:
    pairs = [(float(o[key]), float(r[key])) for r, o in zip(ref, other, strict=True) if r[key] is not None and o[key] is not None]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def run_cells(spec: AblationSpec, configs: dict, examples: list, *, run_dir: Path, program_for, lm_for, tracker, k: int,
              on_question=None, judge=None) -> list[dict]:
    """Evaluate every cell in its own folder (and nested MLflow run) and compare it with the reference cell.

    The cells take the questions in turn (question 1 in every cell, then question 2, …; with ``eval.threads`` = n,
    n questions at a time, concurrently), so an interrupted
    ablation leaves every cell answered on the same questions and a paired comparison is possible at any
    point. Answers are checkpointed per cell, so running it again over the same folder resumes.

    Args:
        configs: Each cell's resolved config, by cell name.
        program_for: ``program_for(config, cell) -> dspy.Module`` (compiled state already loaded).
        lm_for: ``lm_for(config) -> dspy.LM`` for the cell's main LM.
        on_question: ``on_question(cell_name, i, n, record)`` after each newly answered question.
        judge: ``judge(config, result) -> dict`` of extra (judged) metrics, run per cell once all are answered.

    Returns:
        The comparison rows (also written to ``comparison.json``).
    """
    import json

    import dspy

    from askfirst.run_dir import save_resolved
    from askfirst.evaluation.runner import run_eval
    from askfirst.tracking import child_run

    cell_dirs = {c.name: cell_folder(run_dir, c.name) for c in spec.cells}
    for cell in spec.cells:  # every cell's config is saved up front, so a resumed ablation rebuilds the same cells
        save_resolved(configs[cell.name], cell_dirs[cell.name])
    programs = {c.name: program_for(configs[c.name], c) for c in spec.cells}
    lms = {c.name: lm_for(configs[c.name]) for c in spec.cells}
    last: dict = {}
    step = configs[spec.reference].eval.threads  # with threads > 1, each cell takes that many questions at a time, concurrently
    for end in range(step, len(examples) + step, step):
        for cell in spec.cells:
            report = None if on_question is None else (lambda i, _, rec, name=cell.name: on_question(name, i, len(examples), rec))
            with dspy.context(lm=lms[cell.name]):
                last[cell.name] = run_eval(programs[cell.name], examples[:end], run_dir=cell_dirs[cell.name], k=k, on_question=report,
                                           retry_errors=configs[cell.name].eval.retry_errors, threads=step)
    results = []
    for cell in spec.cells:
        result = last[cell.name]
        params = {"overrides": " ".join(cell.overrides), "compiled_program": configs[cell.name].program.compiled or ""}
        with child_run(tracker, run_name=cell.name, params=params) as child, dspy.context(lm=lms[cell.name]):
            if judge is not None:
                child.log_metrics(judge(configs[cell.name], result))
            child.log_metrics({key: v for key, v in result.summary.items() if isinstance(v, int | float)})
        results.append(CellResult(cell, _with_judged(result.scores, cell_dirs[cell.name]), result.summary))
    rows = compare(results, spec.reference, keys=compared_keys(k), seed=configs[spec.reference].seed)
    write_atomic(run_dir / "comparison.json", json.dumps(rows, indent=2))
    tracker.log_artifact(run_dir / "comparison.json")
    return rows


# Per-question scores every comparison row reports (the registry's, for ablate; a key no question has is left out).
COMPARED = tuple(m.name for m in shown_in("ablate") if m.per_question and "{k}" not in m.name)
# Judged per question (``AMBIGUITY_FILE``, ``SPANS_FILE``), so compared pairwise too; their means come from ``metrics.json``.
JUDGED_PER_QUESTION = ("disambig_f1", "asks_for_info", "judge_mean", "span_em", "span_f1")
# Judged over the whole set (HM is a harmonic mean of means): its interval resamples questions and recomputes it.
JUDGED = (("mtrag", "HM"),)


def _with_judged(scores: list[dict], cell_dir: Path) -> list[dict]:
    """Each question's scores with its judged ``JUDGED_PER_QUESTION`` scores (None where it was not judged)."""
    from askfirst.datasets.jsonl import read_checkpoint
    from askfirst.evaluation.mtrag_judges import METRICS
    from askfirst.evaluation.runner import AMBIGUITY_FILE
    from askfirst.evaluation.span_scores import SPANS_FILE

    ambiguity, spans = (read_checkpoint(cell_dir / name, key="id") for name in (AMBIGUITY_FILE, SPANS_FILE))
    judged = {qid: ambiguity.get(qid, {}) | spans.get(qid, {}) for qid in ambiguity.keys() | spans.keys()}
    hm = read_checkpoint(cell_dir / "hm.jsonl", key="id")

    def conditioned(qid: str):  # the question's three conditioned MTRAG scores, for a paired HM interval
        row = hm.get(qid) or {}
        return [row["conditioned"][m] for m in METRICS] if "conditioned" in row else None

    return [{**sc, **{key: (judged.get(sc["id"]) or {}).get(key) for key in JUDGED_PER_QUESTION}, "hm_conditioned": conditioned(sc["id"])}
            for sc in scores]


def compared_keys(k: int) -> tuple[str, ...]:
    """The per-question metrics a comparison pairs, recall@k at the runs' evidence size ``k``."""
    at_k = tuple(m.key(k=k) for m in shown_in("ablate") if "{k}" in m.name)
    return (*COMPARED, *at_k, *JUDGED_PER_QUESTION)


def compare(results: list[CellResult], reference: str, *, keys: tuple[str, ...], seed: int = 0) -> list[dict]:
    """One row per cell: each metric's mean and, except for the reference, its paired difference with a 95% CI."""
    from askfirst.evaluation.stats import paired_bootstrap

    ref = next(r for r in results if r.cell.name == reference)
    rows = []
    for res in results:
        row: dict = {"cell": res.cell.name, "n": len(res.scores)}
        for key in keys:
            if all(sc.get(key) is None for sc in res.scores):
                continue
            judged = (res.summary.get("ambiguity") or {}) | (res.summary.get("span") or {})
            row[key] = res.summary[key] if key in res.summary else judged.get(key)
            if res is not ref:
                other, base = _paired(ref.scores, res.scores, key)
                row[f"{key}.diff"] = paired_bootstrap(other, base, seed=seed) if other else None
        for section, key in JUDGED:
            if (res.summary.get(section) or {}).get(key) is not None:
                row[key] = res.summary[section][key]
                if res is not ref:
                    row[f"{key}.diff"] = _paired_hm(ref.scores, res.scores, seed=seed)
        for route, sub in (res.summary.get("per_route") or {}).items():  # per expected route, unpaired
            row[f"route_accuracy.{route}"] = sub["route_accuracy"]
        if res.summary.get("stage_shares"):
            row["stages"] = res.summary["stage_shares"]
        row["seconds_per_question"] = res.summary.get("seconds_per_question")
        row["lm_calls_per_question"] = res.summary.get("lm_calls_per_question")
        row["tokens_per_question"] = (res.summary.get("tokens_in_per_question"), res.summary.get("tokens_out_per_question"))
        rows.append(row)
    return rows
