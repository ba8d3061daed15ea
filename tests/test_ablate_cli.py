"""``askfirst ablate`` end to end with a fake LM: cells take the questions in turn, and an interrupted
ablation resumes (and extends) from its folder without asking an answered question again."""

import json
import re

from askfirst.config import load_config

from tests.test_compile_cli import fake_lm, run_cli  # noqa: F401 - fixture

GRID = "reference: full\nlimit: 3\ncells:\n  full: {}\n  no_router: {notes.router: false}\n"


def _answered(run_dir, cell):
    return [json.loads(line)["id"] for line in (run_dir / cell / "predictions.jsonl").read_text().splitlines()]


def test_interrupted_ablation_resumes_and_extends(monkeypatch, capsys, tmp_path, fake_lm):  # noqa: F811
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID)
    common = ["--set", f"runs_dir={tmp_path}", "--set", "notes.iterations=1", "--set", "notes.reranker=false",
              "--set", "tracking.enabled=false"]
    fake_lm.stop_at = 8  # Ctrl-C part-way through the second question
    code, _, err = run_cli(monkeypatch, capsys, "ablate", str(grid), *common)
    assert code == 130 and "--resume RUN_FOLDER" in err
    (run_dir,) = tmp_path.glob("ablate-*")
    full, no_router = _answered(run_dir, "full"), _answered(run_dir, "no_router")
    assert len(full) == 1 and full == no_router  # in turn: both cells answered question 1 before either saw question 2

    fake_lm.stop_at, calls_before = None, fake_lm.calls
    code, out, err = run_cli(monkeypatch, capsys, "ablate", "--resume", str(run_dir), "--upto", "2")  # a report on part of it
    assert code == 0, err
    assert [r["n"] for r in json.loads((run_dir / "comparison.json").read_text())] == [2, 2] and len(_answered(run_dir, "full")) == 2
    code, out, err = run_cli(monkeypatch, capsys, "ablate", "--resume", str(run_dir), "--set", "data.limit=4")
    assert code == 0, err
    assert _answered(run_dir, "full") == _answered(run_dir, "no_router") and len(_answered(run_dir, "full")) == 4
    assert out.count("[2/4]") == 0 and out.count("[4/4]") == 2  # questions 1-2 were not asked again, in either cell
    rows = json.loads((run_dir / "comparison.json").read_text())
    assert [r["n"] for r in rows] == [4, 4] and "route_correct.diff" in rows[1]
    assert fake_lm.calls > calls_before


def test_set_overrides_the_grid_limit(monkeypatch, capsys, tmp_path, fake_lm):  # noqa: F811
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID)
    code, out, err = run_cli(monkeypatch, capsys, "ablate", str(grid), "--set", "data.limit=1", "--set", f"runs_dir={tmp_path}",
                             "--set", "notes.iterations=1", "--set", "notes.reranker=false", "--set", "tracking.enabled=false")
    assert code == 0, err
    assert "2 cells x 1 questions" in out


def test_resume_needs_an_ablation_folder(monkeypatch, capsys, tmp_path):
    code, _, err = run_cli(monkeypatch, capsys, "ablate", "--resume", str(tmp_path))
    assert code == 2 and "not an ablation run folder" in err


def _three_cell_grid(tmp_path):
    """GRID with a third cell, and the options that keep a fake-LM ablation small and untracked."""
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID.replace("cells:\n", "cells:\n  no_notes: {notes.build: false}\n"))
    return grid, ["--set", f"runs_dir={tmp_path}", "--set", "notes.iterations=1", "--set", "notes.reranker=false",
                  "--set", "tracking.enabled=false"]


def test_cells_runs_part_of_a_grid_and_a_resume_keeps_to_it(monkeypatch, capsys, tmp_path, fake_lm):  # noqa: F811
    grid, common = _three_cell_grid(tmp_path)
    code, out, err = run_cli(monkeypatch, capsys, "ablate", str(grid), "--cells", "full,no_router", "--set", "data.limit=1", *common)
    assert code == 0, err
    (run_dir,) = tmp_path.glob("ablate-*")
    assert "2 cells x 1 questions" in out and sorted(p.name for p in run_dir.iterdir() if p.is_dir()) == ["full", "no_router"]
    code, out, err = run_cli(monkeypatch, capsys, "ablate", "--resume", str(run_dir), "--set", "data.limit=2")
    assert code == 0, err
    assert [r["cell"] for r in json.loads((run_dir / "comparison.json").read_text())] == ["full", "no_router"]
    assert len(_answered(run_dir, "no_router")) == 2 and not (run_dir / "no_notes").exists()
    code, _, err = run_cli(monkeypatch, capsys, "ablate", str(grid), "--cells", "no_router", *common)
    assert code == 2 and "must include the reference cell 'full'" in err


def test_resume_with_cells_adds_a_cell_on_the_same_questions(monkeypatch, capsys, tmp_path, fake_lm):  # noqa: F811
    grid, common = _three_cell_grid(tmp_path)
    code, out, err = run_cli(monkeypatch, capsys, "ablate", str(grid), "--cells", "full,no_router", "--set", "data.limit=2", *common)
    assert code == 0, err
    (run_dir,) = tmp_path.glob("ablate-*")
    code, out, err = run_cli(monkeypatch, capsys, "ablate", "--resume", str(run_dir), "--cells", "full,no_notes")
    assert code == 0, err
    assert "adding cells no_notes" in err
    assert "no_notes" in out and not re.search(r"\] +full ", out)  # the new cell answered; full asked nothing again
    assert _answered(run_dir, "no_notes") == _answered(run_dir, "full")
    assert load_config(run_dir / "no_notes" / "config.yaml").notes.build is False
    assert [r["cell"] for r in json.loads((run_dir / "comparison.json").read_text())] == ["no_notes", "full"]
    calls = fake_lm.calls
    code, out, err = run_cli(monkeypatch, capsys, "ablate", "--resume", str(run_dir))  # grid.yaml now records all three
    assert code == 0, err
    assert [r["cell"] for r in json.loads((run_dir / "comparison.json").read_text())] == ["no_notes", "full", "no_router"]
    assert fake_lm.calls == calls


def test_extending_a_question_scoped_ablation_warns_that_the_corpus_changes():
    from askfirst.cli.ablate_command import rescoped_warning

    scoped = load_config(overrides=["data.corpus_scope=questions", "data.limit=10"])
    assert "re-scoped" in rescoped_warning(scoped, load_config(overrides=["data.corpus_scope=questions", "data.limit=20"]))
    assert rescoped_warning(scoped, load_config(overrides=["data.corpus_scope=questions", "data.limit=10", "seed=1"])) is None
    assert rescoped_warning(load_config(overrides=["data.limit=10"]), load_config(overrides=["data.limit=20"])) is None
    shuffled = [f"data.{o}" for o in ("corpus_scope=questions", "limit=10", "shuffle=true")]
    assert rescoped_warning(load_config(overrides=shuffled), load_config(overrides=[*shuffled, "seed=1"])) is not None
    assert rescoped_warning(scoped, load_config(overrides=["data.corpus_scope=questions", "data.limit=10", "data.split=train"]))
