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


def test_paired_evals_pairs_two_runs_by_question_and_refuses_different_questions(tmp_path, capsys):
    from askfirst.config import save_resolved

    def run(name: str, routes: dict[str, bool]) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        save_resolved(load_config(), folder)
        rows = [{"id": qid, "route_correct": ok, "outcome_correct": ok} for qid, ok in routes.items()]
        (folder / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in reversed(rows)))  # order differs: paired by id
        mean = sum(routes.values()) / len(routes)
        (folder / "metrics.json").write_text(json.dumps({"route_correct": mean, "outcome_correct": mean, "n": len(routes)}))
        return folder

    script = _bench_script("paired_evals")
    before, after = run("before", {"q1": False, "q2": True, "q3": False}), run("after", {"q3": True, "q2": True, "q1": True})
    assert script.main([f"uncompiled={before}", f"compiled={after}"]) == 0
    compiled = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| compiled"))
    assert "1.000 (+0.667 [" in compiled
    assert script.main([f"a={before}", f"b={run('other', {'q1': True, 'q2': True, 'q4': True})}"]) == 2
    assert "2 question(s) in one only" in capsys.readouterr().err


def test_paired_evals_pools_chunk_runs_and_takes_their_means_from_the_pooled_scores(tmp_path, capsys):
    from askfirst.config import save_resolved

    def chunk(name: str, routes: dict[str, bool], *, evidence_k: int = 5) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        save_resolved(resolve(None, [f"data.ids={json.dumps(list(routes))}", f"program.evidence_k={evidence_k}"]), folder)
        rows = [{"id": qid, "route": "answer" if ok else "idk", "expected_route": "answer", "route_correct": ok, "outcome_correct": ok,
                 "stage": "simple", "p_answerable": None} for qid, ok in routes.items()]
        (folder / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        records = [{"id": qid, "route": "answer", "seconds": 2.0, "lm_calls": 3} for qid in routes]
        (folder / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        (folder / "metrics.json").write_text(json.dumps({"route_correct": 0.0, "outcome_correct": 0.0, "n": len(routes)}))  # not read
        return folder

    script = _bench_script("paired_evals")
    before = f"{chunk('b1', {'q1': False, 'q2': True})},{chunk('b2', {'q3': False, 'q4': False})}"
    after = f"{chunk('a1', {'q1': True, 'q2': True})},{chunk('a2', {'q3': True, 'q4': False})}"
    assert script.main([f"uncompiled={before}", f"compiled={after}"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert next(line for line in lines if line.startswith("| uncompiled")).split(" | ")[2:4] == ["0.250", "0.250"]
    assert "| compiled | 4 | 0.750 (+0.500 [" in next(line for line in lines if line.startswith("| compiled"))
    assert script.main([f"uncompiled={before}", f"compiled={after},{chunk('a3', {'q5': True}, evidence_k=3)}"]) == 2
    err = capsys.readouterr().err
    assert "a3 differ from" in err and "b1" not in err  # evidence_k differs, not only data.ids
    assert script.main([f"uncompiled={before}", f"compiled={after},{chunk('a4', {'q4': True})}"]) == 2
    assert "compiled: question q4 is in more than one of the runs" in capsys.readouterr().err


def test_a_stopped_run_pools_with_the_questions_it_finished(tmp_path):
    from askfirst.config import save_resolved
    from askfirst.evaluation.pooled_runs import pooled_run

    save_resolved(load_config(), tmp_path)  # the demo's 26 questions; two finished, no scores.jsonl or metrics.json
    lines = [{"id": "u01", "route": "idk", "answer": "I don't know.", "seconds": 2.0, "lm_calls": 1},
             {"id": "a01", "route": "idk", "answer": "I don't know.", "seconds": 4.0, "lm_calls": 3}]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    run = pooled_run([tmp_path])
    assert [(sc["id"], sc["expected_route"], sc["route_correct"]) for sc in run.scores] == [("a01", "answer", False), ("u01", "idk", True)]
    assert run.summary["route_correct"] == 0.5 and run.summary["lm_calls_per_question"] == 2.0


def test_eval_report_scores_a_stopped_run_and_calibrates_its_p_answerable(tmp_path, capsys):
    from askfirst.config import save_resolved

    save_resolved(load_config(), tmp_path)  # the demo's 26 questions; three finished

    def record(qid, route, p):
        return {"id": qid, "route": route, "answer": "I don't know." if route == "idk" else "x", "seconds": 2.0, "lm_calls": 3,
                "extras": {"p_answerable": p, "probability_source": "logprobs"}}

    gated = record("u02", "idk", 0.0) | {"extras": {"gated": True}}
    overruled = record("a02", "idk", 0.0) | {"extras": {"key_terms": {"overruled": "ANSWERABLE"}}}
    answered = record("u03", "answer", None) | {"extras": {"unanswerable_overruled": 0.61, "top_cosine": 0.61}}
    lines = [record("a01", "answer", 0.9), record("u01", "idk", 0.3), record("c01", "answer", 0.6), gated, overruled, answered]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    script = _bench_script("eval_report")
    assert script.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "6 of 26 questions finished" in out and "| clarify | 1 | 0.000" in out
    assert "per expected route: answer: key-term check 1; idk: label 1, retrieval gate 1" in out
    # a01 (answerable, 0.9) above u01 (0.3) and c01 (0.6): AUC 1; Brier (0.01 + 0.09 + 0.36) / 3.
    assert "P(answerable) on the 3 assessed questions (0.333 answerable, mean P 0.600): AUC 1.000, Brier 0.153" in out
    assert "mean P by expected route: answer 0.900, clarify 0.600, idk 0.300" in out
    assert script.main([str(tmp_path), "--misroutes"]) == 0
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| a0") or line.startswith("| u0")]
    assert table == ["| a02 | answer | idk | key-term check | - | 0.000 | - |",  # u01, u02 right, a01 answered; no cosine, no P
                     "| u03 | idk | answer | label overruled | 0.610 | - | - |"]


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
