"""``askfirst report``: one eval run's finished questions (a stopped run too), and two runs of the same questions paired."""

import json
from pathlib import Path

from typer.testing import CliRunner

from askfirst.cli.app import app
from askfirst.cli.options import resolve
from askfirst.config import load_config


def _report(*args: str):
    return CliRunner().invoke(app, ["report", *map(str, args)])


def test_two_runs_are_paired_by_question_and_different_questions_refused(tmp_path):
    from askfirst.run_dir import save_resolved

    def run(name: str, routes: dict[str, bool]) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        save_resolved(load_config(), folder)
        rows = [{"id": qid, "route_correct": ok, "outcome_correct": ok} for qid, ok in routes.items()]
        (folder / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in reversed(rows)))  # order differs: paired by id
        mean = sum(routes.values()) / len(routes)
        (folder / "metrics.json").write_text(json.dumps({"route_correct": mean, "outcome_correct": mean, "n": len(routes)}))
        return folder

    before, after = run("before", {"q1": False, "q2": True, "q3": False}), run("after", {"q3": True, "q2": True, "q1": True})
    assert (result := _report(f"uncompiled={before}", f"compiled={after}")).exit_code == 0, result.output
    compiled = next(line for line in result.stdout.splitlines() if line.startswith("| compiled"))
    assert "1.000 (+0.667 [" in compiled
    assert (result := _report(before, after)).exit_code == 0  # unlabelled: each side is named by its folder
    assert "1.000 (+0.667 [" in next(line for line in result.stdout.splitlines() if line.startswith("| after"))
    assert (result := _report(f"a={before}", f"b={run('other', {'q1': True, 'q2': True, 'q4': True})}")).exit_code == 2, result.output
    assert "2 question(s) in one only" in result.stderr


def test_chunk_runs_are_pooled_and_their_means_taken_from_the_pooled_scores(tmp_path):
    from askfirst.run_dir import save_resolved

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

    before = f"{chunk('b1', {'q1': False, 'q2': True})},{chunk('b2', {'q3': False, 'q4': False})}"
    after = f"{chunk('a1', {'q1': True, 'q2': True})},{chunk('a2', {'q3': True, 'q4': False})}"
    assert (result := _report(f"uncompiled={before}", f"compiled={after}")).exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert next(line for line in lines if line.startswith("| uncompiled")).split(" | ")[2:4] == ["0.250", "0.250"]
    assert "| compiled | 4 | 0.750 (+0.500 [" in next(line for line in lines if line.startswith("| compiled"))
    assert (result := _report(f"uncompiled={before}", f"compiled={after},{chunk('a3', {'q5': True}, evidence_k=3)}")).exit_code == 2, result.output
    err = result.stderr
    assert "a3 differ from" in err and "b1" not in err  # evidence_k differs, not only data.ids
    assert (result := _report(f"uncompiled={before}", f"compiled={after},{chunk('a4', {'q4': True})}")).exit_code == 2, result.output
    assert "compiled: question q4 is in more than one of the runs" in result.stderr


def test_a_stopped_run_is_scored_and_its_p_answerable_calibrated(tmp_path):
    from askfirst.run_dir import save_resolved

    save_resolved(load_config(), tmp_path)  # the demo's 26 questions; three finished

    def record(qid, route, p):
        return {"id": qid, "route": route, "answer": "I don't know." if route == "idk" else "x", "seconds": 2.0, "lm_calls": 3,
                "extras": {"p_answerable": p, "probability_source": "logprobs"}}

    gated = record("u02", "idk", 0.0) | {"extras": {"gated": True}}
    overruled = record("a02", "idk", 0.0) | {"extras": {"key_terms": {"overruled": "ANSWERABLE"}}}
    answered = record("u03", "answer", None) | {"extras": {"unanswerable_overruled": 0.61, "top_cosine": 0.61}}
    lines = [record("a01", "answer", 0.9), record("u01", "idk", 0.3), record("c01", "answer", 0.6), gated, overruled, answered]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert (result := _report(str(tmp_path))).exit_code == 0, result.output
    out = result.stdout
    assert "6 of 26 questions finished" in out and "| clarify | 1 | 0.000" in out
    assert "per expected route: answer: key-term check 1; idk: label 1, retrieval gate 1" in out
    # a01 (answerable, 0.9) above u01 (0.3) and c01 (0.6): AUC 1; Brier (0.01 + 0.09 + 0.36) / 3.
    assert "P(answerable) on the 3 assessed questions (0.333 answerable, mean P 0.600): AUC 1.000, Brier 0.153" in out
    assert "mean P by expected route: answer 0.900, clarify 0.600, idk 0.300" in out
    assert (result := _report(str(tmp_path), "--misroutes")).exit_code == 0, result.output
    table = [line for line in result.stdout.splitlines() if line.startswith("| a0") or line.startswith("| u0")]
    assert table == ["| a02 | answer | idk | key-term check | - | 0.000 | - |",  # u01, u02 right, a01 answered; no cosine, no P
                     "| u03 | idk | answer | label overruled | 0.610 | - | - |"]
