"""The benchmark configs and ablation grids under bench/ load, and every grid cell resolves to a valid config.

A typo in a grid cell (``askfirst.refernt_cue``) otherwise shows only when a long ablation reaches that cell.
"""

from pathlib import Path

import pytest

from askfirst.ablation import load_spec
from askfirst.cli.options import resolve
from askfirst.config import load_config
from askfirst.programs.registry import specs

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.mark.parametrize("path", sorted(BENCH.glob("*.yaml")), ids=lambda p: p.name)
def test_bench_config_loads(path):
    assert load_config(path).program.kind


@pytest.mark.parametrize("path", sorted((BENCH / "grids").glob("*.yaml")), ids=lambda p: p.name)
def test_grid_cells_resolve(path, monkeypatch):
    monkeypatch.chdir(BENCH.parent)  # grids name their base config relative to the repository
    spec = load_spec(path)
    assert spec.reference in {cell.name for cell in spec.cells}
    kinds = {resolve(spec.base, None, cell.overrides).program.kind for cell in spec.cells}
    assert kinds <= set(specs())
