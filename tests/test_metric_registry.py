"""The metric registry is the one list of metric names: every view reads it, and the scorer produces its keys."""

import dspy
import pytest

from askfirst.evaluation.metrics import BY_NAME, METRICS, VIEWS, shown_in
from askfirst.evaluation.scoring import aggregate, per_collection, score_prediction


def test_every_per_question_metric_is_a_key_the_scorer_produces():
    example = dspy.Example(answerability="ANSWERABLE", gold_answers=["85"], qrels={"fees-lab": 1}, qa_pairs=[("q", ["85"])],
                           clarification_options=[])
    row = score_prediction(example, {"route": "answer", "answer": "EUR 85", "retrieved_docs": ["fees-lab"], "citations": ["fees-lab"],
                                     "extras": {"p_answerable": 0.9, "probability_source": "logprobs"}}, k=5)
    per_question = [m.key(k=5) for m in METRICS if m.per_question]
    assert set(per_question) <= set(row), set(per_question) - set(row)
    run_level = {m.name for m in METRICS if not m.per_question and m.section is None}
    summary = aggregate([row]) | per_collection([row | {"collection": "fiqa"}])
    produced = set(summary) | {"seconds_per_question", "lm_calls_per_question", "tokens_in_per_question", "tokens_out_per_question", "cost_usd"}
    assert run_level <= produced, run_level - produced  # the timing and token figures come from the runner


def test_every_view_reads_the_registry():
    from askfirst.ablation import COMPARED
    from askfirst.run_list import COLUMNS
    from askfirst.run_plot import BAR_METRICS

    assert set(COMPARED) <= set(BY_NAME) and all(BY_NAME[name].per_question for name in COMPARED)
    assert {m.mlflow_key() for m in shown_in("plot")} == set(BAR_METRICS)
    assert {m.mlflow_key(k=5) for m in shown_in("runs")} <= set(COLUMNS)
    assert all(m.views <= set(VIEWS) and m.views for m in METRICS)
    with pytest.raises(ValueError, match="unknown view"):
        shown_in("nowhere")
