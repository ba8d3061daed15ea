"""The CLI's error paths: one clear line on stderr and exit code 2, never a traceback."""

import json
import sys

import pytest

from askfirst.cli.app import main


def run_cli(monkeypatch, capsys, *args):
    monkeypatch.setattr(sys, "argv", ["askfirst", *args])
    with pytest.raises(SystemExit) as exc:
        main()
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


def test_config_prints_resolved_yaml(monkeypatch, capsys):
    code, out, _ = run_cli(monkeypatch, capsys, "config", "--set", "notes.iterations=2")
    assert code in (0, None) and "iterations: 2" in out


@pytest.mark.parametrize(("args", "message"), [
    (["config", "--set", "program.iterationz=2"], "unknown key 'program.iterationz'"),
    (["config", "--config", "/no/such.yaml"], "config file not found"),
    (["index", "--corpus", "/no/such/corpus.jsonl"], "corpus not found"),
    (["ask"], "give either a question or --conversation"),
    (["ask", ""], "the question is empty"),
    (["ask", "   "], "the question is empty"),
    (["ask", "--conversation", "/no/such.json"], "conversation file not found"),
    (["eval", "--questions", "/no/such.jsonl"], "file not found"),
    (["ablate", "/no/such/grid.yaml"], "ablation grid not found"),
    (["eval", "--program", "/no/such/program.pkl"], "only DSPy state JSON"),
    (["serve", "--set", "program.compiled=/no/such/program.json"], "compiled program not found"),
    (["eval", "--set", "program.compiled=askfirst:no-such-name"], "ships no compiled program 'no-such-name'"),
])
def test_bad_input_gives_a_clear_error(monkeypatch, capsys, tmp_path, args, message):
    code, _, err = run_cli(monkeypatch, capsys, *args, "--set", f"runs_dir={tmp_path}")
    assert code == 2
    assert message in err and "Traceback" not in err


def test_malformed_files_name_file_and_line(monkeypatch, capsys, tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"_id": "a", "text": "ok"}\n{oops\n')
    code, _, err = run_cli(monkeypatch, capsys, "index", "--corpus", str(corpus), "--set", f"runs_dir={tmp_path}")
    assert code == 2 and f"{corpus}:2: malformed JSON" in err
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "x", "turns": [{"role": "user", "content": "hi"}]}) + "\n" + json.dumps({"id": "y", "turns": []}) + "\n")
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--questions", str(questions), "--set", f"runs_dir={tmp_path}")
    assert code == 2 and f"{questions}:2:" in err
    conv = tmp_path / "conv.json"
    conv.write_text('[{"role": "user", "content": "hi"},')
    code, _, err = run_cli(monkeypatch, capsys, "ask", "--conversation", str(conv))
    assert code == 2 and "malformed JSON" in err


def test_missing_model_weights_are_explained(monkeypatch, capsys, tmp_path):
    f = tmp_path / "weights.gguf"
    f.write_bytes(b"not the pinned file")
    code, _, err = run_cli(monkeypatch, capsys, "ask", "What is the lab fee?", "--set", f"runs_dir={tmp_path}",
                           "--set", f"lm.model_path={f}", "--set", f"lm.sha256={'0' * 64}")
    assert code == 2 and "refusing to load it" in err


def test_index_command_is_incremental(monkeypatch, capsys, tmp_path):
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "a.md").write_text("# Parking\nA parking permit costs EUR 95 per semester.")
    code, out, _ = run_cli(monkeypatch, capsys, "index", "--corpus", str(corpus), "--set", f"runs_dir={tmp_path}")
    assert code in (0, None) and "1 added" in out
    code, out, _ = run_cli(monkeypatch, capsys, "index", "--corpus", str(corpus), "--set", f"runs_dir={tmp_path}")
    assert "0 added" in out and "1 unchanged" in out


def test_ablation_cells_may_not_change_the_index(monkeypatch, capsys, tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text("cells:\n  a: {}\n  b: {retriever.chunk_words: 50}\n")
    code, _, err = run_cli(monkeypatch, capsys, "ablate", str(grid), "--set", f"runs_dir={tmp_path}")
    assert code == 2 and "cell 'b' changes the data or the index" in err


def test_runs_lists_tracked_runs(monkeypatch, capsys, tmp_path):
    from askfirst.config import load_config
    from askfirst.tracking import tracked_run

    config = load_config(overrides=[f"runs_dir={tmp_path}"])
    for name, score in (("eval-a", 0.25), ("eval-b", 0.75)):
        with tracked_run(config, run_name=name, tags={"askfirst.kind": "eval"}) as tracker:
            tracker.log_metrics({"outcome_correct": score, "recall@3": 0.5})
    code, out, _ = run_cli(monkeypatch, capsys, "runs", "--set", f"runs_dir={tmp_path}", "--kind", "eval")
    assert code in (0, None) and out.index("eval-b") < out.index("eval-a") and "0.750" in out
    code, out, _ = run_cli(monkeypatch, capsys, "runs", "--set", f"runs_dir={tmp_path}", "--compare", "eval-a")
    assert "eval-a" in out and "eval-b" not in out
    code, out, _ = run_cli(monkeypatch, capsys, "runs", "--set", f"runs_dir={tmp_path}", "--kind", "compile")
    assert "no tracked runs" in out


def test_runs_plot_draws_curves_and_bars(monkeypatch, capsys, tmp_path):
    from askfirst.config import load_config
    from askfirst.tracking import tracked_run

    config = load_config(overrides=[f"runs_dir={tmp_path}"])
    with tracked_run(config, run_name="compile-a", tags={"askfirst.kind": "compile"}) as tracker:
        for step, (score, best) in enumerate(((0.4, 0.4), (0.3, 0.4), (0.6, 0.6))):
            tracker.log_metrics({"candidate_score": score, "best_score": best}, step=step)
    with tracked_run(config, run_name="eval-a", tags={"askfirst.kind": "eval"}) as tracker:
        tracker.log_metrics({"outcome_correct": 0.5, "HM": 0.3})
    png = tmp_path / "runs.png"
    code, out, _ = run_cli(monkeypatch, capsys, "runs", "--set", f"runs_dir={tmp_path}", "--plot", str(png))
    assert code in (0, None) and "plot:" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_a_reply_prints_brackets_in_answers_ids_and_warnings_as_text(capsys):
    from askfirst.cli.options import warn
    from askfirst.cli.render import print_reply

    record = {"route": "answer", "label": "ANSWERABLE", "confidence": 0.9, "answer": "It is [1] as [doc1] says; [/b] too.",
              "options": ["[red]one"], "citations": ["a02-p1"], "warnings": ["a [/warning] of its own"]}
    print_reply(record, {"a02-p1": "the [cited] passage"})
    warn("[/i] from a run folder")
    out, err = capsys.readouterr()
    for text in ("It is [1] as [doc1] says; [/b] too.", "[red]one", "[a02-p1] the [cited] passage", "a [/warning] of its own"):
        assert text in out
    assert "warning: [/i] from a run folder" in err
