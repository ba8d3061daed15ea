"""Each signal's one-vs-rest AUC per route, and the `askfirst policy separation` command that prints it."""

import json

from sklearn.metrics import roc_auc_score
from typer.testing import CliRunner

from askfirst.cli.app import app
from askfirst.evaluation.signal_separation import separation
from askfirst.evaluation.signals_table import write_signals_table


def _rows(n: int = 40) -> list[dict]:
    """idk questions have a low ``top_cosine``; ``dangling`` is recorded by half the clarify questions only."""
    rows = []
    for i in range(n):
        expected = ("idk", "answer", "clarify", "answer")[i % 4]
        signals = {"top_cosine": (0.2 if expected == "idk" else 0.6) + (i % 7) / 100, "turn_index": float(i * 13 % 5)}
        if i % 8 == 2:
            signals["dangling"] = 1.0
        rows.append({"id": f"q{i}", "conversation": f"c{i}", "expected": expected, "rules": "answer", "route": "answer", "signals": signals})
    return rows


def test_the_auc_is_scikit_learns_for_every_signal_and_route():
    rows = _rows()
    result = separation(rows, resamples=50)
    assert result["n"] == 40 and result["expected"] == {"answer": 20, "clarify": 10, "idk": 10}
    for entry in result["signals"]:
        for route, value in entry["auc"].items():
            y = [row["expected"] == route for row in rows]
            x = [row["signals"].get(entry["signal"], 0.0) for row in rows]  # an unrecorded signal reads as 0, as the policy reads it
            assert abs(value["auc"] - roc_auc_score(y, x)) < 1e-12
            low, high = value["ci95"]
            assert 0.0 <= low <= high <= 1.0


def test_signals_come_strongest_first_and_a_route_no_question_expects_is_left_out():
    result = separation(_rows(), resamples=50)
    strength = [entry["strongest"] for entry in result["signals"]]
    assert result["signals"][0]["signal"] == "top_cosine" and strength == sorted(strength, reverse=True)
    top = result["signals"][0]["auc"]
    assert top["idk"]["auc"] == 0.0 and top["idk"]["ci95"] == [0.0, 0.0]  # every idk question's cosine is lower
    assert "partial" not in top


def test_a_route_too_rare_for_every_resample_gets_no_interval():
    rows = _rows()
    rows[0]["expected"] = "partial"  # one question of 40: most resamples hold none
    top = separation(rows, resamples=50)["signals"][0]["auc"]
    assert top["partial"]["ci95"] is None and 0.0 <= top["partial"]["auc"] <= 1.0
    assert top["idk"]["ci95"] is not None


def test_the_command_prints_and_writes_the_table(tmp_path):
    table = tmp_path / "signals.json"
    write_signals_table(_rows(), table, source="a test")
    result = CliRunner().invoke(app, ["policy", "separation", str(table), "--top", "1", "--out", str(tmp_path / "sep.json")])
    assert result.exit_code == 0, result.output
    assert "top_cosine" in result.output and "rules_answer" not in result.output  # the rules' constant route: no separation, last
    written = json.loads((tmp_path / "sep.json").read_text())
    assert written["signals"][0]["signal"] == "top_cosine" and len(written["signals"]) > 2


def test_the_command_measures_one_collection_and_names_the_collections_when_it_has_none(tmp_path):
    table = tmp_path / "signals.json"
    write_signals_table([row | {"collection": "a" if i < 24 else "b"} for i, row in enumerate(_rows())], table)
    result = CliRunner().invoke(app, ["policy", "separation", str(table), "--collection", "b", "--out", str(tmp_path / "sep.json")])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "sep.json").read_text())["n"] == 16
    result = CliRunner().invoke(app, ["policy", "separation", str(table), "--collection", "c"])
    assert result.exit_code != 0 and "'a', 'b'" in str(result.exception)
