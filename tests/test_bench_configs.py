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


def test_the_asks_for_info_labels_are_balanced_and_a_bad_line_is_named(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("asks_for_info_judge", BENCH / "asks_for_info_judge.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    labels = script.read_labels(BENCH / "asks_for_info_labels.jsonl")
    assert sum(row["asks"] for row in labels) == len(labels) - sum(row["asks"] for row in labels) == 16
    bad = tmp_path / "labels.jsonl"
    bad.write_text('{"id": "a", "asks": true, "reply": "Which?"}\n{"id": "b"}\n')
    with pytest.raises(SystemExit, match=r"labels.jsonl:2: not a labelled reply"):
        script.read_labels(bad)
    judged = [{"asks": True, "verdict": True}, {"asks": True, "verdict": None}, {"asks": False, "verdict": False}]
    assert "| 3 | 2/3 = 0.67" in script.summary(judged) and "| 1 |" in script.summary(judged)  # one unparsed verdict
