"""Resume that never corrupts: cut last lines, failures retried, judging resumed, atomic writes, no silent --set."""

import json
import sys

import dspy
import pytest

from askfirst.datasets.jsonl import read_checkpoint
from askfirst.datasets.questions import load_questions
from askfirst.evaluation.runner import PREDICTIONS_FILE, judge_records, run_eval
from askfirst.run_dir import FILE_MODE, write_atomic
from tests.test_evaluate import ScriptedProgram, _script


@pytest.fixture
def examples():
    return load_questions("demo", limit=4)


def _valid_jsonl(path):
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


@pytest.mark.parametrize("fragment", [b'{"id": "a0', '{"id": "x", "answer": "caf\u00e9'.encode()[:-1]])  # the second cuts inside "é"
def test_a_cut_last_line_is_dropped_and_the_file_stays_valid(tmp_path, examples, fragment):
    first = ScriptedProgram(_script(examples, interrupt_on=examples[2].id))
    with pytest.raises(KeyboardInterrupt):
        run_eval(first, examples, run_dir=tmp_path)
    with (tmp_path / PREDICTIONS_FILE).open("ab") as f:
        f.write(fragment)
    second = ScriptedProgram(_script(examples))
    run_eval(second, examples, run_dir=tmp_path)
    assert second.asked == [examples[2].id, examples[3].id]
    assert [r["id"] for r in _valid_jsonl(tmp_path / PREDICTIONS_FILE)] == [e.id for e in examples]
    third = ScriptedProgram(_script(examples))
    run_eval(third, examples, run_dir=tmp_path)
    assert third.asked == []  # nothing is asked again on a later resume


def test_failed_questions_are_asked_again_on_resume_unless_kept(tmp_path, examples):
    run_eval(ScriptedProgram(_script(examples, fail_on=examples[1].id)), examples, run_dir=tmp_path)
    kept = ScriptedProgram(_script(examples))
    run_eval(kept, examples, run_dir=tmp_path, retry_errors=False)
    assert kept.asked == []
    again = ScriptedProgram(_script(examples))
    result = run_eval(again, examples, run_dir=tmp_path)
    assert again.asked == [examples[1].id] and result.records[1]["route"] == "answer"
    assert read_checkpoint(tmp_path / PREDICTIONS_FILE, key="id")[examples[1].id]["route"] == "answer"


class FlakyJudges:
    """Judges that fail on one question the first time; count their calls."""

    def __init__(self, fail_id=None):
        self.fail_id, self.calls = fail_id, []

    def __call__(self, *, turns, answer, answerability, reference, passages):
        self.calls.append(turns[-1]["content"])
        if self.fail_id and turns[-1]["content"] == self.fail_id:
            raise RuntimeError("judge LM down")
        scores = {"RL_F": 0.5, "RB_llm": 0.5, "RB_agg": 0.5}
        return dspy.Prediction(idk=0.0, clarification=None, raw=scores, conditioned=scores, conditioned_2026_01=scores, hm=0.5,
                               similarity="lexical")


def test_judging_records_a_failure_goes_on_and_resumes(tmp_path, examples):
    records = [{"id": e.id, "answer": "x", "retrieved": []} for e in examples]
    flaky = FlakyJudges(fail_id=examples[1].conversation[-1]["content"])
    summary = judge_records(examples, records, flaky, {}, run_dir=tmp_path)
    assert summary["n_judge_failed"] == 1 and len(flaky.calls) == 4 and summary["HM"] == pytest.approx(0.5)
    rows = _valid_jsonl(tmp_path / "hm.jsonl")
    assert "judge LM down" in rows[1]["error"]
    again = FlakyJudges()
    summary = judge_records(examples, records, again, {}, run_dir=tmp_path)
    assert again.calls == [examples[1].conversation[-1]["content"]] and summary["n_judge_failed"] == 0


def test_atomic_writes_leave_no_temporary_files(tmp_path):
    write_atomic(tmp_path / "metrics.json", "{}")
    write_atomic(tmp_path / "metrics.json", '{"n": 1}')
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"] and json.loads((tmp_path / "metrics.json").read_text()) == {"n": 1}
    # The mode an ordinary file gets (umask applied), not the temporary file's owner-only 0600.
    ordinary = tmp_path / "ordinary.txt"
    ordinary.write_text("x")
    assert (tmp_path / "metrics.json").stat().st_mode & 0o777 == ordinary.stat().st_mode & 0o777 == FILE_MODE


def test_eval_resume_refuses_options_it_would_ignore(tmp_path, monkeypatch, capsys):
    from askfirst.cli.app import main

    (tmp_path / "config.yaml").write_text("runs_dir: runs\n")
    monkeypatch.setattr(sys, "argv", ["askfirst", "eval", "--resume", str(tmp_path), "--set", "data.limit=3", "--limit", "2"])
    with pytest.raises(SystemExit) as exc:
        main()
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--set, --limit cannot change it" in err
