"""``askfirst compile`` end to end on the demo set with a schema-following fake LM: tracked in MLflow, the
compiled program logged as an MLflow model that loads and answers, and an interrupted run resumed."""

import json
import re
import sys

import pytest

from askfirst.programs.base import Resources
from askfirst.cli.app import main
from tests.conftest import ListRetriever, SchemaFollowingEngine, configure_with

SCRIPT = {
    "queries": {"queries": ["tuition fee amount"]},
    "label": {"answering_sentences": ["Tuition is EUR 4,200."], "label": "ANSWERABLE", "confidence": 0.8},
    "cited_ids": {"answer": "It is EUR 4,200.", "cited_ids": []},
}


class InterruptingEngine(SchemaFollowingEngine):
    """Raises KeyboardInterrupt on call number ``stop_at`` (a user pressing Ctrl-C mid-compile)."""

    def __init__(self, scripted, stop_at=None):
        super().__init__(scripted)
        self.stop_at = stop_at

    def complete(self, request):
        if self.stop_at is not None and self.calls + 1 >= self.stop_at:
            raise KeyboardInterrupt
        return super().complete(request)


@pytest.fixture
def fake_lm(monkeypatch):
    """Every LM the CLI configures is one fake engine; returns that engine."""
    engine = InterruptingEngine(SCRIPT)
    configure_with(monkeypatch, engine, where="askfirst.session.configure_dspy")
    return engine


def run_cli(monkeypatch, capsys, *args):
    monkeypatch.setattr(sys, "argv", ["askfirst", *args])
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def compile_args(tmp_path, *extra):
    return ["compile", "--limit", "8", "--optimizer", "gepa", "--objective", "both", "--set", f"runs_dir={tmp_path}",
            "--set", "compile.auto=null", "--set", "compile.max_metric_calls=16", "--set", "notes.iterations=1",
            "--set", "notes.reranker=false", *extra]


def test_compile_is_tracked_and_logs_a_servable_model(monkeypatch, capsys, tmp_path, fake_lm):
    code, out, err = run_cli(monkeypatch, capsys, *compile_args(tmp_path))
    assert code == 0, err
    run_dir = next(tmp_path.glob("compile-*"))
    assert json.loads((run_dir / "program.json").read_text())  # state JSON, not pickle
    curve = json.loads((run_dir / "curve.json").read_text())
    assert curve and curve[0]["step"] == 0 and curve[-1]["best_so_far"] >= curve[0]["score"]

    import mlflow

    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'mlflow.db'}")
    run = mlflow.search_runs(experiment_names=["askfirst"], filter_string="tags.`askfirst.kind` = 'compile'", output_format="list")[0]
    assert run.data.params["compile.objective"] == "both" and run.data.metrics["lm_calls"] > 0
    assert {"tokens_in", "tokens_out"} <= set(run.data.metrics)  # what the compile spent (the scripted LM reports no tokens)
    history = mlflow.MlflowClient().get_metric_history(run.info.run_id, "candidate_score")
    assert len(history) == len(curve)
    trials = mlflow.search_runs(experiment_names=["askfirst"], output_format="list",
                                filter_string=f"tags.`mlflow.parentRunId` = '{run.info.run_id}'")
    assert sorted(t.data.metrics["score"] for t in trials) == sorted(row["score"] for row in curve)
    # Rebuilt from config + state JSON; the store is the operator's (this test's folder), never one the logged config names.
    (tmp_path / "operator.yaml").write_text(f"runs_dir: {tmp_path}\n", encoding="utf-8")
    model = mlflow.pyfunc.load_model(f"runs:/{run.info.run_id}/model", model_config={"config": str(tmp_path / "operator.yaml")})
    assert model.unwrap_python_model().session.config.runs_dir == str(tmp_path)  # the loader's config reached the model
    reply = model.predict([{"question": "What is the tuition fee?"}])[0]
    assert reply["route"] == "answer" and reply["answer"] == "It is EUR 4,200."
    with pytest.raises(ValueError, match="question is empty"):
        model.predict([{"question": " "}])


def test_eval_run_records_dspy_traces(monkeypatch, capsys, tmp_path, fake_lm):
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--limit", "2", "--set", f"runs_dir={tmp_path}", "--set", "notes.iterations=1",
                           "--set", "notes.reranker=false")
    assert code == 0, err

    import mlflow

    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'mlflow.db'}")
    run = mlflow.search_runs(experiment_names=["askfirst"], output_format="list")[0]
    traces = mlflow.search_traces(locations=[run.info.experiment_id], run_id=run.info.run_id, return_type="list", flush=True)
    assert len(traces) == 2  # one per question, each with the program's module and LM spans
    assert any("IterativeNotesRAG" in span.name for span in traces[0].data.spans)
    assert sum(span.span_type == "CHAT_MODEL" for span in traces[0].data.spans) >= 2


def test_interrupted_compile_resumes_from_its_checkpoint(monkeypatch, capsys, tmp_path, fake_lm):
    args = compile_args(tmp_path, "--set", "tracking.enabled=false")
    code, _, _ = run_cli(monkeypatch, capsys, *args)
    assert code == 0
    full_run = fake_lm.calls

    resumed_root = tmp_path / "second"
    fake_lm.calls, fake_lm.stop_at = 0, full_run * 2 // 3
    code, _, err = run_cli(monkeypatch, capsys, *compile_args(resumed_root, "--set", "tracking.enabled=false"))
    assert code == 130, err
    assert "interrupted" in err, err[-500:]
    run_dir = next(resumed_root.glob("compile-*"))
    assert (run_dir / "gepa").is_dir() and not (run_dir / "program.json").exists()
    assert (run_dir / "gepa" / "manifest.hmac.json").is_file()  # signed on the way out

    state = run_dir / "gepa" / "gepa_state.bin"
    good = state.read_bytes()
    state.write_bytes(good + b".")  # a checkpoint this installation did not write
    code, _, err = run_cli(monkeypatch, capsys, "compile", "--resume", str(run_dir))
    assert code == 2 and "refusing to unpickle it" in err and "gepa_state.bin" in err
    state.write_bytes(good)

    fake_lm.calls, fake_lm.stop_at = 0, None
    code, out, err = run_cli(monkeypatch, capsys, "compile", "--resume", str(run_dir))
    assert code == 0, err
    assert "resuming" in out and (run_dir / "program.json").is_file()
    assert fake_lm.calls < full_run  # only what the interrupted run had not finished

    fake_lm.calls = 0  # a finished run continues with a larger budget given on the resume
    code, _, err = run_cli(monkeypatch, capsys, "compile", "--resume", str(run_dir), "--set", "compile.max_metric_calls=28")
    assert code == 0, err
    assert "max_metric_calls: 28" in (run_dir / "config.yaml").read_text() and fake_lm.calls > 0


def test_an_eval_of_a_compiled_program_records_it_and_its_lm_calls_use_it(monkeypatch, capsys, tmp_path, retriever):
    from askfirst.config import load_config
    from askfirst.optimizers.compile import save_compiled
    from askfirst.programs.registry import build_program

    switches = ["--set", "program.kind=notes_rag", "--set", "notes.iterations=1", "--set", "notes.reranker=false"]
    program = build_program(load_config(overrides=[s for s in switches if s != "--set"]), Resources(retriever=retriever))
    program.router.classify.signature = program.router.classify.signature.with_instructions("Compiled: label it carefully.")
    (tmp_path / "compile-x").mkdir()
    state = save_compiled(program, tmp_path / "compile-x")

    class Recording(InterruptingEngine):
        def complete(self, request):
            self.systems = [*getattr(self, "systems", []), request.system if isinstance(request.system, str) else
                            "".join(p.text for p in request.system or [])]
            return super().complete(request)

    engine = Recording(SCRIPT)
    configure_with(monkeypatch, engine, where="askfirst.session.configure_dspy")
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--limit", "1", "--program", str(state.parent), "--set", f"runs_dir={tmp_path}",
                           "--set", "tracking.enabled=false", *switches)
    assert code == 0, err
    run_dir = next(tmp_path.glob("eval-*"))
    assert load_config(run_dir / "config.yaml").program.compiled == str(state.parent)  # the run folder says which program ran
    assert any("Compiled: label it carefully." in system for system in engine.systems)
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--resume", str(run_dir), "--program", str(tmp_path / "other.json"))
    assert code == 2 and "started with" in err


def test_the_askfirst_program_compiles_on_the_training_half_alone(monkeypatch, capsys, tmp_path, fake_lm):
    from askfirst.config import load_config
    from askfirst.datasets.splits import configured_questions

    stages = ["--set", "program.kind=askfirst", "--set", "askfirst.complexity_router=simple", "--set", "compile.split=train"]
    code, out, err = run_cli(monkeypatch, capsys, *compile_args(tmp_path, "--set", "tracking.enabled=false", *stages))
    assert code == 0, err
    run_dir = next(tmp_path.glob("compile-*"))
    config = load_config(run_dir / "config.yaml")
    seen = configured_questions(config, split="train")  # the 8 questions' training half, split again by the compile
    n_train, n_val = (int(n) for n in re.search(r"\(train (\d+), validation (\d+)\)", out).groups())
    assert n_train and n_val and n_train + n_val == len(seen) < 8
    assert not {e.id for e in seen} & {e.id for e in configured_questions(config, split="validation")}
    shown = json.loads((run_dir / "trainset.json").read_text())  # shipped beside the program: what it was shown
    assert shown["compile_split"] == "train" and (shown["trainset"]["n"], shown["valset"]["n"]) == (n_train, n_val)
    assert set(shown["trainset"]["ids"]) | set(shown["valset"]["ids"]) == {e.id for e in seen}
    from askfirst.optimizers.curves import instructions
    from askfirst.programs.registry import build_program

    # The optimiser is offered every enabled stage's predictors; the file names those it changed.
    offered = instructions(build_program(config, Resources(retriever=ListRetriever())))
    assert {"rewrite", "assess", "passage_answers", "expand", "responders"} <= {name.split(".")[0] for name in offered}
    state = json.loads((run_dir / "program.json").read_text())
    assert set(state) - {"metadata"} <= set(offered)
    assert f"({len(state) - 1} step(s) changed" in out  # the command names what the file holds


def test_serve_rebuilds_each_compiled_run_from_its_own_config(monkeypatch, capsys, tmp_path, fake_lm, retriever):
    import uvicorn

    from askfirst.config import load_config
    from askfirst.run_dir import save_resolved
    from askfirst.optimizers.compile import save_compiled
    from askfirst.programs.registry import build_program

    run_config = load_config(overrides=[f"runs_dir={tmp_path}", "notes.iterations=1", "notes.reranker=false", "tracking.enabled=false"])
    program = build_program(run_config, Resources(retriever=retriever))
    program.router.classify.signature = program.router.classify.signature.with_instructions("Compiled: label it carefully.")
    save_resolved(run_config, tmp_path / "compile-x")
    save_compiled(program, tmp_path / "compile-x")
    served = {}
    monkeypatch.setattr("askfirst.serve.app.create_app", lambda variants, **_: served.update(variants) or object())
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: None)
    code, _, err = run_cli(monkeypatch, capsys, "serve", str(tmp_path / "compile-x"), "--set", f"runs_dir={tmp_path}",
                           "--set", "tracking.enabled=false")
    assert code == 0, err
    assert set(served) == {"askfirst", "compile-x"}
    assert served["compile-x"].program.router.classify.signature.instructions == "Compiled: label it carefully."
    assert served["askfirst"].program.router.classify.signature.instructions != "Compiled: label it carefully."


def test_compile_fits_the_route_policy_on_recorded_signals_and_eval_uses_it(monkeypatch, capsys, tmp_path):
    configure_with(monkeypatch, SchemaFollowingEngine(SCRIPT | {"passage_answers": {"passage_answers": []}}),
                   where="askfirst.session.configure_dspy")
    base = ["--set", f"runs_dir={tmp_path}", "--set", "program.kind=askfirst", "--set", "askfirst.policy=fitted",
            "--set", "askfirst.complexity_router=simple", "--set", "notes.reranker=false", "--set", "tracking.enabled=false"]
    code, out, err = run_cli(monkeypatch, capsys, "compile", "--optimizer", "policy", *base)
    assert code == 0, err
    run_dir = next(tmp_path.glob("compile-*"))
    state = json.loads((run_dir / "program.json").read_text())
    assert set(state) - {"metadata"} == {"route_policy"}  # no prompt changed, only the policy
    report = json.loads((run_dir / "policy_cv.json").read_text())
    assert report["n"] == 26 and set(report["fitted"]["per_route"]) == {"answer", "partial", "clarify", "idk"}
    assert sum(state["route_policy"]["fitted_on"].values()) == 26
    said = " ".join(out.split())  # the console wraps long lines
    assert "route policy fitted on 26 questions" in said and f"{report['fitted']['route_accuracy']:.3f} vs the rules'" in said
    assert f"Brier score {report['calibration']['brier']:.3f} vs {report['calibration']['mix_brier']:.3f}" in said
    assert 0 < state["route_policy"]["temperature"] <= 100 and report["policy"]["temperature"] == state["route_policy"]["temperature"]
    code, out, err = run_cli(monkeypatch, capsys, "eval", "--limit", "3", "--program", str(run_dir), *base)
    assert code == 0, err
    eval_dir = next(tmp_path.glob("eval-*"))
    records = [json.loads(line) for line in (eval_dir / "predictions.jsonl").read_text().splitlines()]
    assert all(set(r["extras"]["route_probabilities"]) == set(state["route_policy"]["routes"]) for r in records)


def test_the_policy_summary_says_when_the_policy_could_not_be_cross_validated(tmp_path):
    from askfirst.cli.compile_command import policy_summary

    report = {"n": 1, "cross_validation": "not possible: one conversation", "policy": {"fitted_on": {"answer": 1}}}
    said = policy_summary(report, tmp_path / "policy_cv.json")
    assert "fitted on 1 questions (1 answer)" in said and "not possible: one conversation" in said
