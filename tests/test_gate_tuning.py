"""Tuning the askfirst program's gates: each question's signal from the program's own stages (the top cosine of its
query; P(UNDERSPECIFIED) from the referent check), resumable, and the threshold that flags the most questions while
flagging few enough of those that should be answered."""

import json
import sys

import dspy
import pytest

from askfirst.cli.app import main
from askfirst.config import load_config
from askfirst.optimizers.gate_tuning import REFERENT, choose_threshold, collect_signals
from askfirst.programs.base import Resources, probe
from askfirst.programs.registry import Registry
from tests.conftest import ListRetriever, SchemaFollowingEngine, configure_with
from tests.askfirst_harness import QueryCosines


def example(qid, label, *turns):
    conversation = [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(turns)]
    return dspy.Example(id=qid, conversation=conversation, answerability=label).with_inputs("conversation")


def test_signals_come_from_the_programs_own_query_and_resume(tmp_path):
    config = load_config(overrides=["program.kind=askfirst"])
    dense = QueryCosines({"Lab fee?": 0.7, "How much is the laboratory fee?": 0.6, "Parking permit?": 0.2})
    program = Registry(Resources(retriever=ListRetriever(), store=dense, embedder=dense)).build("askfirst", config)
    engine = SchemaFollowingEngine({"standalone_question": {"standalone_question": "How much is the laboratory fee?"}})
    questions = [example("a", "ANSWERABLE", "Lab fee?"), example("u", "UNANSWERABLE", "Parking permit?"),
                 example("f", "ANSWERABLE", "Tell me about labs.", "They carry an L.", "And its fee?")]
    checkpoint = tmp_path / "gate_rows.jsonl"
    with dspy.context(lm=dspy.LM("test/schema-following", engine=engine, cache=False), adapter=dspy.JSONAdapter()):
        rows = collect_signals(program, questions, checkpoint=checkpoint)
        assert [(r["id"], r["query"], r["top_cosine"]) for r in rows] == [
            ("a", "Lab fee?", 0.7), ("u", "Parking permit?", 0.2), ("f", "How much is the laboratory fee?", 0.6)]
        assert engine.calls == 1  # only the follow-up is rewritten
        again = collect_signals(program, questions, checkpoint=checkpoint)
    assert again == rows and engine.calls == 1 and len(checkpoint.read_text().splitlines()) == 3


def test_the_highest_threshold_within_the_refusal_budget_is_chosen():
    rows = [{"answerability": "ANSWERABLE", "top_cosine": c} for c in (0.30, 0.50, 0.60, 0.70, 0.80)]
    rows += [{"answerability": "UNANSWERABLE", "top_cosine": c} for c in (0.25, 0.35, 0.55)]
    result = choose_threshold(rows, max_answerable_rate=0.2, candidates=(0.3, 0.31, 0.5, 0.51))
    by_t = {r["threshold"]: r for r in result["table"]}
    assert by_t[0.31]["should_answer"] == pytest.approx(0.2) and by_t[0.31]["UNANSWERABLE"] == pytest.approx(1 / 3)
    assert by_t[0.51]["should_answer"] == pytest.approx(0.4) and by_t[0.51]["UNANSWERABLE"] == pytest.approx(2 / 3)
    assert result["threshold"] == 0.5 and result["n"] == 8  # 0.5 still lets the 0.50 through: 1 of 5 refused
    assert result["auc"] == pytest.approx(12 / 15)  # of the 15 (answerable, unanswerable) pairs, 12 are ordered right
    assert choose_threshold(rows, max_answerable_rate=0.0, candidates=(0.31, 0.5))["threshold"] is None


def test_the_referent_signal_is_the_checks_probability_on_the_users_own_words(tmp_path):
    config = load_config(overrides=["program.kind=askfirst", "askfirst.referent_check=true"])
    dense = QueryCosines({})
    program = Registry(Resources(retriever=ListRetriever(), store=dense, embedder=dense)).build("askfirst", config)
    seen = []

    def check(text):
        seen.append(text)
        return {"unnamed": "fee", "label": "UNDERSPECIFIED"} if "the fee" in text else {"unnamed": "none", "label": "SPECIFIC"}

    engine = SchemaFollowingEngine({"unnamed": check})
    questions = [example("c", "UNDERSPECIFIED", "How much is the fee?"), example("a", "ANSWERABLE", "How much is the lab fee?")]
    with dspy.context(lm=dspy.LM("test/schema-following", engine=engine, cache=False), adapter=dspy.JSONAdapter()):
        rows = collect_signals(program, questions, signal=REFERENT, checkpoint=tmp_path / "rows.jsonl")
    assert [(r["id"], r["query"], r["p_underspecified"], r["unnamed"]) for r in rows] == [
        ("c", "How much is the fee?", 1.0, "fee"), ("a", "How much is the lab fee?", 0.0, "none")]
    assert engine.calls == 2 and "How much is the fee?" in seen[0]  # no rewrite: the check reads the question as asked


def test_a_gate_that_flags_high_values_takes_the_lowest_threshold_within_the_budget():
    rows = [{"answerability": "ANSWERABLE", "p_underspecified": p} for p in (0.05, 0.10, 0.20, 0.30, 0.60)]
    rows += [{"answerability": "UNDERSPECIFIED", "p_underspecified": p} for p in (0.15, 0.50, 0.70)]
    result = choose_threshold(rows, max_answerable_rate=0.2, signal=REFERENT, candidates=(0.2, 0.3, 0.31, 0.6))
    by_t = {r["threshold"]: r for r in result["table"]}
    assert by_t[0.3]["should_answer"] == pytest.approx(0.4) and by_t[0.31]["should_answer"] == pytest.approx(0.2)
    assert by_t[0.31]["UNDERSPECIFIED"] == pytest.approx(2 / 3) and result["threshold"] == 0.31 and result["signal"] == "p_underspecified"
    assert result["auc"] == pytest.approx(11 / 15)  # of the 15 (underspecified, answerable) pairs, 11 put the underspecified one higher


@pytest.mark.parametrize(("signal", "setting"), [("top-cosine", "min_top_cosine"), ("referent", "referent_threshold")])
def test_the_cli_tunes_a_gate_on_the_demo_index_and_saves_a_config_with_it(monkeypatch, capsys, tmp_path, signal, setting):
    """Real embedder and Qdrant over the demo corpus; the LM (the standalone rewrite, or the referent check) is a fake."""
    configure_with(monkeypatch, SchemaFollowingEngine(), where="askfirst.session.configure_dspy")
    monkeypatch.setattr(sys, "argv", ["askfirst", "tune-threshold", "--config", "demo", "--signal", signal, "--split", "all",
                                      "--max-answerable-rate", "0.2", "--set", f"runs_dir={tmp_path}"])
    try:
        main()
    except SystemExit as exc:
        assert not exc.code, capsys.readouterr().err
    out = capsys.readouterr().out
    run_dir = next(tmp_path.glob("threshold-*"))
    result = json.loads((run_dir / "gate.json").read_text())
    assert result["n"] == 26 and f"askfirst.{setting} flags" in out
    chosen = next(r for r in result["table"] if r["threshold"] == result["threshold"])
    within = [r["threshold"] for r in result["table"] if r["should_answer"] <= 0.2]
    assert chosen["should_answer"] <= 0.2 and result["threshold"] == (max(within) if signal == "top-cosine" else min(within))
    tuned = load_config(run_dir / "config.yaml").askfirst
    assert getattr(tuned, setting) == result["threshold"] and tuned.referent_check is (signal == "referent")


def test_the_gate_is_tuned_only_for_the_askfirst_program(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(sys, "argv", ["askfirst", "tune-threshold", "--signal", "top-cosine", "--set", "program.kind=notes_rag",
                                      "--set", f"runs_dir={tmp_path}"])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2 and "tunes a gate of the askfirst program" in capsys.readouterr().err


def test_a_program_is_read_through_the_probes_it_offers():
    config = load_config(overrides=["program.kind=askfirst", "askfirst.min_top_cosine=0.5"])
    dense = QueryCosines({"Parking permit?": 0.2})
    resources = Resources(retriever=ListRetriever(), store=dense, embedder=dense)
    program = Registry(resources).build("askfirst", config)
    assert probe(program, "retrieval", "Parking permit?", "") == {"query": "Parking permit?", "top_cosine": 0.2, "gated": True}
    notes = Registry(resources).build("notes_rag", config)
    with pytest.raises(ValueError, match="offers no probe 'retrieval'"):
        probe(notes, "retrieval", "Parking permit?", "")
    with pytest.raises(ValueError, match="it offers: retrieval, referent"):
        probe(program, "nothing", "Parking permit?", "")
