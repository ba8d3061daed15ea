"""Ablation grids: parsing, paired bootstrap, and a full run of the cell loop with a scripted LM."""

import json

import dspy
import pytest

from askfirst.programs.base import Resources
from askfirst.ablation import load_spec, run_cells
from askfirst.config import ConfigError, load_config
from askfirst.datasets.questions import load_questions
from askfirst.programs.registry import build_program
from askfirst.evaluation.stats import paired_bootstrap
from askfirst.tracking import Tracker


def _write(tmp_path, text):
    f = tmp_path / "grid.yaml"
    f.write_text(text)
    return f


def test_cells_and_cartesian_grid(tmp_path):
    spec = load_spec(_write(tmp_path, """
reference: full
limit: 3
cells:
  full: {}
  compiled: {program.compiled: runs/x/program.json, notes.router: false}
  older: {program_state: runs/x/program.json}
grid:
  notes.iterations: [1, 2]
  notes.build: [true, false]
"""))
    names = [c.name for c in spec.cells]
    assert names[:3] == ["full", "compiled", "older"] and len(names) == 7 and "iterations=1,build=false" in names
    assert spec.cells[1].overrides == ["program.compiled=runs/x/program.json", "notes.router=false"]
    assert spec.cells[2].overrides == ["program.compiled=runs/x/program.json"]  # an older grid's program_state is program.compiled
    cell = next(c for c in spec.cells if c.name == "iterations=2,build=true")
    assert cell.overrides == ["notes.iterations=2", "notes.build=true"] and spec.limit == 3


@pytest.mark.parametrize(("text", "message"), [
    ("cells: {}\n", "at least one cell"),
    ("cells: {a: {}}\nreference: b\n", "reference cell 'b'"),
    ("cells: {a: {}}\ncellz: {}\n", "unknown key"),
    ("- a\n", "must hold a mapping"),
    ("cells: {a: {}, b: {}}\nonly: [a, c]\n", r"no cell named \['c'\]"),
    ("cells: {a: {}, b: {}}\nonly: [b]\n", "must include the reference cell 'a'"),
])
def test_bad_grids(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_spec(_write(tmp_path, text))


def test_only_runs_the_named_cells_and_the_caller_overrides_the_file(tmp_path):
    grid = _write(tmp_path, "reference: b\ncells: {a: {}, b: {}, c: {}}\nonly: [b, c]\n")
    assert [c.name for c in load_spec(grid).cells] == ["b", "c"]
    spec = load_spec(grid, only=["a", "b"])
    assert [c.name for c in spec.cells] == ["a", "b"] and spec.only == ["a", "b"] and spec.reference == "b"


def test_paired_bootstrap():
    assert paired_bootstrap([1, 0, 1], [1, 0, 1]) == (0.0, 0.0, 0.0)
    assert paired_bootstrap([2, 3, 4], [1, 2, 3]) == (1.0, 1.0, 1.0)
    diff, low, high = paired_bootstrap([1, 1, 1, 1, 0, 0, 0, 0], [0] * 8, seed=3)
    assert diff == 0.5 and 0.0 <= low < 0.5 < high <= 1.0
    with pytest.raises(ValueError):
        paired_bootstrap([1], [1, 2])


def test_run_cells_compares_each_cell_with_the_reference(tmp_path, retriever, schema_lm):
    spec = load_spec(_write(tmp_path, "cells:\n  full: {}\n  no_router: {notes.router: false}\n"))
    configs = {c.name: load_config(overrides=[f"runs_dir={tmp_path}", "notes.iterations=1", "notes.reranker=false", *c.overrides])
               for c in spec.cells}
    examples = load_questions("demo", limit=3)
    lm = schema_lm({"queries": {"queries": ["q"]}, "label": {"answering_sentences": [], "label": "UNANSWERABLE", "confidence": 0.9},
                    "cited_ids": {"answer": "EUR 4,200", "cited_ids": ["fees-lab"]}})
    with dspy.context(adapter=dspy.JSONAdapter()):
        rows = run_cells(spec, configs, examples, run_dir=tmp_path, program_for=lambda cfg, cell: build_program(cfg, Resources(retriever=retriever)),
                         lm_for=lambda cfg: lm, tracker=Tracker(), k=3)
    full, no_router = rows
    assert full["route_correct"] == 0.0  # every answerable question said "I don't know"
    assert no_router["route_correct"] == 1.0 and no_router["route_correct.diff"][0] == 1.0
    assert "route_correct.diff" not in full
    assert (tmp_path / "no_router" / "predictions.jsonl").is_file() and (tmp_path / "full" / "config.yaml").is_file()
    assert json.loads((tmp_path / "comparison.json").read_text())[1]["cell"] == "no_router"


def test_run_cells_judges_each_cell_and_reports_judged_means(tmp_path, retriever, schema_lm):
    spec = load_spec(_write(tmp_path, "cells:\n  a: {}\n  b: {notes.build: false}\n"))
    configs = {c.name: load_config(overrides=[f"runs_dir={tmp_path}", "notes.iterations=1", "notes.reranker=false", *c.overrides])
               for c in spec.cells}
    examples = load_questions("demo", limit=2)
    lm = schema_lm({"queries": {"queries": ["q"]}, "label": {"answering_sentences": [], "label": "UNANSWERABLE", "confidence": 0.9}})
    judged = []

    def judge(cfg, result):  # as ambiguity_scores does: per-question rows in ambiguity.jsonl, their means in the summary
        judged.append((cfg.notes.build, len(result.records)))
        per_question = [0.0, 0.5] if cfg.notes.build else [0.5, 0.5]
        rows = [{"id": rec["id"], "disambig_f1": f} for rec, f in zip(result.records, per_question, strict=True)]
        (result.run_dir / "ambiguity.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        result.summary["ambiguity"] = {"disambig_f1": sum(per_question) / 2}
        return {"ambiguity.disambig_f1": result.summary["ambiguity"]["disambig_f1"]}

    with dspy.context(adapter=dspy.JSONAdapter()):
        rows = run_cells(spec, configs, examples, run_dir=tmp_path, program_for=lambda cfg, cell: build_program(cfg, Resources(retriever=retriever)),
                         lm_for=lambda cfg: lm, tracker=Tracker(), k=3, judge=judge)
    assert judged == [(True, 2), (False, 2)]
    assert [r["disambig_f1"] for r in rows] == [0.25, 0.5]
    assert rows[1]["disambig_f1.diff"][0] == 0.25  # paired per question, like the unjudged scores
    assert "asks_for_info" not in rows[0]  # judged for no question, so left out
    assert "str_em" not in rows[0]  # no demo question has qa_pairs, so STR-EM is left out of the table


def test_paired_bootstrap_is_scipys_bca_and_hm_gets_a_paired_interval():
    import numpy as np
    from scipy import stats

    from askfirst.evaluation.mtrag_formulas import harmonic_mean
    from askfirst.evaluation.stats import paired_bootstrap_statistic

    rng = np.random.default_rng(1)
    a, b = rng.random(40), rng.random(40) * 0.8
    diff, low, high = paired_bootstrap(a, b, seed=5)
    ref = stats.bootstrap((a, b), lambda x, y: np.mean(x - y), paired=True, vectorized=False, method="BCa", n_resamples=2000,
                          random_state=np.random.default_rng(5)).confidence_interval
    assert (low, high) == pytest.approx((ref.low, ref.high)) and low < diff < high

    def hm_of_means(rows):
        return harmonic_mean(list(rows.mean(axis=0)))

    x, y = rng.random((30, 3)) * 0.5 + 0.4, rng.random((30, 3)) * 0.5 + 0.2
    value, low, high = paired_bootstrap_statistic(x, y, hm_of_means, seed=2)
    assert value == pytest.approx(hm_of_means(x) - hm_of_means(y)) and low < value < high and low > 0
    assert paired_bootstrap_statistic(x, x, hm_of_means) == (0.0, 0.0, 0.0)
