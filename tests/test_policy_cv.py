"""Cross-validation of the route policy by conversation, its fit into a compiled program, and transfer scoring."""

import json
import random
from collections import Counter

import pytest
from typer.testing import CliRunner

from askfirst.cli.app import app
from askfirst.datasets.errors import DataError
from askfirst.evaluation.policy_cv import (compare_routes, conversation_folds, cross_validate, fit_rows, fit_temperature, policy_questions,
                                          route_calibration)
from askfirst.optimizers.compile import load_compiled
from askfirst.optimizers.program_state import ProgramStateError
from askfirst.programs.askfirst.policy import POLICY_KEY, fit_policy
from tests.askfirst_harness import run


def _question(i: int) -> dict:
    """A question whose expected route two signals tell, in a conversation of three; the rules get every third wrong."""
    p, dangling = (i * 37 % 100) / 100, float(i % 5 == 0)
    expected = "clarify" if dangling else "answer" if p >= 0.5 else "idk"
    rules = expected if i % 3 else "answer"
    return {"id": f"q{i}", "conversation": f"c{i // 3}", "expected": expected, "rules": rules,
            "signals": {"p_answerable": p, "dangling": dangling}}


def _run_folder(path, n: int = 60):
    path.mkdir()
    questions = [_question(i) for i in range(n)]
    with (path / "predictions.jsonl").open("w") as f:
        for q in questions:
            f.write(json.dumps({"id": q["id"], "route": q["rules"], "extras": {"signals": q["signals"], "rules_route": q["rules"]}}) + "\n")
    with (path / "scores.jsonl").open("w") as f:
        for q in questions:
            f.write(json.dumps({"id": q["id"], "conversation": q["conversation"], "collection": f"k{int(q['conversation'][1:]) % 3}",
                                "expected_route": q["expected"], "route": q["rules"]}) + "\n")
    return path


def test_folds_never_share_a_conversation_and_cover_every_question():
    rows = [_question(i) for i in range(60)]
    folds = conversation_folds(rows, folds=5, seed=3)
    assert sorted(i for fold in folds for i in fold) == list(range(60))
    conversations = [{rows[i]["conversation"] for i in fold} for fold in folds]
    assert all(not (a & b) for j, a in enumerate(conversations) for b in conversations[j + 1:])


def test_a_handful_of_questions_of_different_routes_still_makes_folds():
    rows = [_question(i) | {"conversation": f"c{i}"} for i in (0, 1, 2)]  # three routes, one question each
    folds = conversation_folds(rows, folds=3)
    assert sorted(int(i) for fold in folds for i in fold) == [0, 1, 2]


def test_too_few_conversations_for_the_folds_is_a_clear_error():
    with pytest.raises(DataError, match="conversations cannot make"):
        conversation_folds([_question(i) for i in range(6)], folds=5)


def test_cross_validation_scores_held_out_routes_against_the_rules():
    result = cross_validate([_question(i) for i in range(60)], folds=5)
    assert result["n"] == 60 and result["conversations"] == 20
    assert result["fitted"]["route_accuracy"] > 0.9 > result["rules"]["route_accuracy"]
    low, high = result["difference"]["ci95"]
    assert low > 0 and high >= low
    assert set(result["fitted"]["per_route"]) == {"answer", "clarify", "idk"}
    assert len(result["held_out"]) == 60


def test_cross_validation_by_collection_holds_out_each_collection_once():
    rows = [_question(i) | {"collection": f"k{i // 3 % 3}"} for i in range(60)]  # a conversation's questions in one collection
    result = cross_validate(rows, by="collection")
    assert result["by"] == "collection" and result["folds"] == 3 and set(result["per_collection"]) == {"k0", "k1", "k2"}
    for name, row in result["per_collection"].items():
        held = [h for h, r in zip(result["held_out"], rows) if r["collection"] == name]
        assert row["n"] == len(held) > 0
        assert row["fitted"] == sum(h["fitted"] == h["expected"] for h in held) / len(held)
        assert row["rules"] == sum(h["rules"] == h["expected"] for h in held) / len(held)
    assert sum(row["n"] for row in result["per_collection"].values()) == 60
    assert "per_collection" not in cross_validate(rows, folds=5)


@pytest.mark.parametrize("collections, message", [(["k0"] * 59 + [""], "every question's collection"), (["k0"] * 60, "two collections")])
def test_folds_by_collection_need_every_question_in_one_of_two_or_more(collections, message):
    rows = [_question(i) | {"collection": c} for i, c in enumerate(collections)]
    with pytest.raises(DataError, match=message):
        cross_validate(rows, by="collection")
    with pytest.raises(DataError, match="folds are by one of"):
        cross_validate(rows, by="topic")


def test_a_crafted_collection_name_is_printed_as_text_not_markup(tmp_path):
    from askfirst.evaluation.signals_table import write_signals_table

    rows = [row | {"collection": "[/evil]" if i < 30 else "[bold]k"} for i, row in enumerate(policy_questions(_run_folder(tmp_path / "run")))]
    write_signals_table(rows, tmp_path / "t.json")
    result = CliRunner().invoke(app, ["policy", "cv", str(tmp_path / "t.json"), "--by", "collection"])
    assert result.exit_code == 0, result.output
    assert "[/evil] held out" in result.output and "[bold]k held out" in result.output


def test_route_calibration_scores_certain_right_wrong_and_mix_probabilities():
    expected = ["answer", "answer", "idk", "clarify"]
    mix = {"answer": 0.5, "idk": 0.25, "clarify": 0.25}
    right = route_calibration(expected, [{e: 1.0} for e in expected], [mix] * 4)
    assert right["brier"] == 0 and right["log_loss"] < 1e-9 and right["ece"] == 0
    wrong = route_calibration(expected, [{"partial": 1.0}] * 4, [mix] * 4)
    assert wrong["brier"] == 2 and wrong["ece"] == 1 and wrong["log_loss"] > 30
    reads_nothing = route_calibration(expected, [mix] * 4, [mix] * 4)
    assert reads_nothing["brier"] == pytest.approx(reads_nothing["mix_brier"]) == pytest.approx(0.625)
    assert reads_nothing["log_loss"] == pytest.approx(reads_nothing["mix_log_loss"])


def test_held_out_and_transfer_probabilities_beat_the_route_mix_where_the_signals_tell_the_route():
    rows = [_question(i) for i in range(60)]
    for result in (cross_validate(rows, folds=5), compare_routes(rows, fit_policy([r["signals"] for r in rows], [r["expected"] for r in rows]))):
        c = result["calibration"]
        assert c["brier"] < c["mix_brier"] and c["log_loss"] < c["mix_log_loss"]
        assert 0 <= c["ece"] <= 1 and 0 < c["mean_confidence"] <= 1


def test_the_temperature_flattens_a_policy_fitted_on_noise_and_sharpens_one_whose_signals_tell_the_route():
    rng = random.Random(0)
    noise = [{"id": f"q{i}", "conversation": f"c{i // 2}", "expected": rng.choice(["answer", "idk", "clarify"]),
              "signals": {"p_answerable": rng.random(), "dangling": float(rng.random() < 0.3), "top_cosine": rng.random()}} for i in range(90)]
    told = [_question(i) for i in range(60)]
    assert fit_temperature(noise, (1.0, "signals", "balanced")) > 1 > fit_temperature(told, (1.0, "signals", "balanced"))
    policy = fit_rows(told, settings=(1.0, "signals", "balanced"))
    assert policy.temperature == fit_temperature(told, (1.0, "signals", "balanced"))
    plain = policy.model_copy(update={"temperature": 1.0})
    for row in told:  # the temperature moves the probabilities, never the route
        assert policy.route(row["signals"])[0] == plain.route(row["signals"])[0]
    assert any(policy.probabilities(r["signals"]) != plain.probabilities(r["signals"]) for r in told)


def test_a_run_without_signals_is_refused(tmp_path):
    folder = _run_folder(tmp_path / "run")
    (folder / "predictions.jsonl").write_text(json.dumps({"id": "q0", "route": "answer", "extras": {}}) + "\n")
    with pytest.raises(DataError, match="askfirst.policy=fitted"):
        policy_questions(folder)


def test_the_cli_cross_validates_fits_a_compiled_program_and_scores_a_transfer_set(tmp_path, schema_lm):
    train, other = _run_folder(tmp_path / "train"), _run_folder(tmp_path / "other", n=30)
    runner = CliRunner()
    result = runner.invoke(app, ["policy", "cv", str(train), "--folds", "4", "--out", str(tmp_path / "cv.json")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "cv.json").read_text())
    assert report["folds"] == 4 and report["calibration"]["brier"] < report["calibration"]["mix_brier"]
    assert "Brier" in result.output
    result = runner.invoke(app, ["policy", "fit", str(train), "--out", str(tmp_path / "compiled")])
    assert result.exit_code == 0, result.output
    state = json.loads((tmp_path / "compiled" / "program.json").read_text())
    assert state[POLICY_KEY]["fitted_on"] == dict(sorted(Counter(_question(i)["expected"] for i in range(60)).items()))
    result = runner.invoke(app, ["policy", "score", str(tmp_path / "compiled"), str(other), "--plot", str(tmp_path / "score.svg")])
    assert result.exit_code == 0 and "route accuracy" in result.output
    svg = (tmp_path / "score.svg").read_text()
    assert svg.startswith("<?xml") and "route accuracy" in svg and "clarify" in svg

    _, program, _, _ = run(schema_lm, "How much is the lab fee?", "askfirst.policy=fitted")
    load_compiled(program, tmp_path / "compiled")
    assert program.route_policy is not None and program.route_policy.fitted_on == state[POLICY_KEY]["fitted_on"]


def test_a_crafted_policy_in_a_compiled_program_is_refused(tmp_path, schema_lm):
    policy = fit_policy([_question(i)["signals"] for i in range(30)], [_question(i)["expected"] for i in range(30)]).to_json()
    (tmp_path / "program.json").write_text(json.dumps({POLICY_KEY: policy | {"api_base": "http://evil.example"}}))
    _, program, _, _ = run(schema_lm, "How much is the lab fee?", "askfirst.policy=fitted")
    with pytest.raises(ProgramStateError, match="not a route policy"):
        load_compiled(program, tmp_path)


def test_a_signals_table_reads_back_as_the_runs_it_was_exported_from(tmp_path):
    whole, first, second = _run_folder(tmp_path / "all"), tmp_path / "a", tmp_path / "b"
    for folder, part in ((first, slice(0, 31)), (second, slice(31, None))):  # two chunks of one set; c10 is in both
        folder.mkdir()
        for name in ("predictions.jsonl", "scores.jsonl"):
            (folder / name).write_text("".join(line + "\n" for line in (whole / name).read_text().splitlines()[part]))
    runner = CliRunner()
    result = runner.invoke(app, ["policy", "export", str(first), str(second), "--out", str(tmp_path / "t.json"), "--source", "a test"])
    assert result.exit_code == 0, result.output
    table = tmp_path / "t.json"
    assert policy_questions(table) == policy_questions(first) + policy_questions(second)
    for args in ([str(first), str(second)], [str(table)]):
        result = runner.invoke(app, ["policy", "cv", *args, "--folds", "4", "--out", str(tmp_path / "cv.json"),
                                     "--plot", str(tmp_path / f"cv{len(args)}.svg")])
        assert result.exit_code == 0, result.output
        report = json.loads((tmp_path / "cv.json").read_text())
        assert report["conversations"] == 20  # conversation c10 has questions in both chunks: one conversation, one fold
    assert (tmp_path / "cv1.svg").read_text() == (tmp_path / "cv2.svg").read_text()  # the same result draws the same file
    result = runner.invoke(app, ["policy", "cv", str(table), "--by", "collection", "--out", str(tmp_path / "cv.json")])
    assert result.exit_code == 0, result.output
    assert {"k0", "k1", "k2"} == set(json.loads((tmp_path / "cv.json").read_text())["per_collection"])  # the table kept each collection
    assert all(f"{name} held out" in result.output for name in ("k0", "k1", "k2"))
    result = runner.invoke(app, ["policy", "cv", str(first), str(table)])
    assert result.exit_code != 0 and "is in both" in str(result.exception)


@pytest.mark.parametrize("change, message", [
    (lambda t: t | {"api_base": "http://evil.example"}, "api_base"),
    (lambda t: t | {"rows": [t["rows"][0] | {"signals": {"not_a_signal": 1.0}}]}, "unknown signal"),
    (lambda t: t | {"rows": [t["rows"][0] | {"expected": "delete"}]}, "expected"),
    (lambda t: t | {"format": "pickle"}, "format"),
    (lambda t: t | {"rows": []}, "rows"),
])
def test_a_crafted_signals_table_is_refused_naming_the_problem(tmp_path, change, message):
    from askfirst.evaluation.signals_table import write_signals_table

    table = tmp_path / "t.json"
    write_signals_table(policy_questions(_run_folder(tmp_path / "run", n=6)), table)
    table.write_text(json.dumps(change(json.loads(table.read_text()))))
    with pytest.raises(DataError, match=message):
        policy_questions(table)
    (tmp_path / "nan.json").write_text(table.read_text().replace("0.", "NaN, \"x\": 0.", 1))
    with pytest.raises(DataError, match="not a signals table"):
        policy_questions(tmp_path / "nan.json")


def test_selection_by_route_accuracy_or_macro_accuracy_is_recorded_per_fold():
    rows = [_question(i) for i in range(60)]
    for select_by in ("route", "macro"):
        result = cross_validate(rows, folds=3, select_by=select_by)
        assert result["select_by"] == select_by
        assert all(s["class_weight"] in ("balanced", "natural") and s["C"] > 0 for s in result["settings_per_fold"])
    with pytest.raises(DataError, match="select_by"):
        cross_validate(rows, folds=3, select_by="accuracy_on_the_test_fold")
