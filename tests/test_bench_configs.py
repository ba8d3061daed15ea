"""The benchmark configs and ablation grids under bench/ load, and every grid cell resolves to a valid config.

A typo in a grid cell (``askfirst.refernt_cue``) otherwise shows only when a long ablation reaches that cell.
"""

import json
from pathlib import Path

import pytest

from askfirst.ablation import load_spec
from askfirst.cli.options import resolve
from askfirst.config import load_config, config_path
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
    script = _bench_script("asks_for_info_judge")
    labels = script.read_labels(BENCH / "asks_for_info_labels.jsonl")
    assert sum(row["asks"] for row in labels) == len(labels) - sum(row["asks"] for row in labels) == 16
    bad = tmp_path / "labels.jsonl"
    bad.write_text('{"id": "a", "asks": true, "reply": "Which?"}\n{"id": "b"}\n')
    with pytest.raises(SystemExit, match=r"labels.jsonl:2: not a labelled reply"):
        script.read_labels(bad)
    judged = [{"asks": True, "verdict": True}, {"asks": True, "verdict": None}, {"asks": False, "verdict": False}]
    assert "| 3 | 2/3 = 0.67" in script.summary(judged) and "| 1 |" in script.summary(judged)  # one unparsed verdict


def test_the_hand_read_program_replies_are_a_labelled_set_of_each_clarifying_program():
    from askfirst.datasets.jsonl import read_jsonl

    rows = _bench_script("asks_for_info_judge").read_labels(BENCH / "asks_for_info_hand_squad2.jsonl")
    raw = [record for _, record in read_jsonl(BENCH / "asks_for_info_hand_squad2.jsonl")]  # read_labels keeps no cell
    asking = {cell: sum(r["asks"] for r in raw if r["cell"] == cell) for cell in {r["cell"] for r in raw}}
    assert asking == {"askfirst": 11, "clarion": 5, "urasys_documents": 5, "askfirst_5dbb11d": 12}  # as the results log (bench/RESULTS.md in git history) reports
    assert all(row["id"].startswith("squad2_ambiguous-") and row["why"] for row in rows)


def _bench_script(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


@pytest.mark.parametrize("path", sorted(BENCH.glob("*.py")), ids=lambda p: p.name)
def test_every_bench_script_says_what_it_does_with_help(path, monkeypatch, capsys):
    import runpy

    monkeypatch.setattr("sys.argv", [str(path), "--help"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(path), run_name="__main__")
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage:") and len(out.splitlines()) > 3  # argparse's usage, the purpose and the arguments


def test_a_stopped_run_pools_with_the_questions_it_finished(tmp_path):
    from askfirst.run_dir import save_resolved
    from askfirst.evaluation.pooled_runs import pooled_run

    save_resolved(load_config(), tmp_path)  # the demo's 26 questions; two finished, no scores.jsonl or metrics.json
    lines = [{"id": "u01", "route": "idk", "answer": "I don't know.", "seconds": 2.0, "lm_calls": 1},
             {"id": "a01", "route": "idk", "answer": "I don't know.", "seconds": 4.0, "lm_calls": 3}]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    run = pooled_run([tmp_path])
    assert [(sc["id"], sc["expected_route"], sc["route_correct"]) for sc in run.scores] == [("a01", "answer", False), ("u01", "idk", True)]
    assert run.summary["route_correct"] == 0.5 and run.summary["lm_calls_per_question"] == 2.0


@pytest.mark.parametrize("path", sorted((BENCH / "candidates").glob("*.yaml")), ids=lambda p: p.name)
def test_instruction_candidates_name_steps_of_the_askfirst_program(path):
    from askfirst.optimizers.instruction_candidates import read_candidates
    from askfirst.programs.base import Resources
    from askfirst.programs.registry import Registry
    from tests.conftest import ListRetriever
    from tests.askfirst_harness import QueryCosines

    dense = QueryCosines({})
    program = Registry(Resources(retriever=ListRetriever(), store=dense, embedder=dense)).build("askfirst", load_config(config_path("mtrag")))
    assert read_candidates(path, [name for name, _ in program.named_predictors()])  # raises on a step the program lacks
