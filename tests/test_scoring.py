import dspy
import pytest

from askfirst.evaluation.scoring import aggregate, score_prediction


def _ex(label, golds=(), passages=(), options=()):
    return dspy.Example(answerability=label, gold_answers=list(golds), gold_passages=list(passages), clarification_options=list(options))


def _pred(route, answer="", docs=(), citations=(), options=()):
    return {"route": route, "answer": answer, "retrieved_docs": list(docs), "citations": list(citations), "options": list(options)}


def test_answerable_needs_route_and_gold_answer():
    ex = _ex("ANSWERABLE", ["4,200"], ["fees-tuition"])
    good = score_prediction(ex, _pred("answer", "It is EUR 4,200.", ["fees-tuition", "x"], ["fees-tuition"]), k=5)
    assert good["outcome_correct"] and good["route_correct"] and good["citation_hit"]
    assert good["recall@5"] == 1.0 and good["ndcg@5"] == 1.0
    wrong_fact = score_prediction(ex, _pred("answer", "It is EUR 5,600.", ["x"]), k=5)
    assert wrong_fact["route_correct"] and not wrong_fact["outcome_correct"] and wrong_fact["recall@5"] == 0.0
    idk = score_prediction(ex, _pred("idk", "I don't know."), k=5)
    assert not idk["route_correct"] and not idk["outcome_correct"] and idk["citation_hit"] is None


def test_clarify_and_idk_routes():
    amb = _ex("UNDERSPECIFIED", options=["lab", "registration"])
    s = score_prediction(amb, _pred("clarify", "Which fee do you mean?", options=["Lab fee", "Tuition"]), k=5)
    assert s["outcome_correct"] and s["clarification_hit"] is True
    un = _ex("UNANSWERABLE")
    assert score_prediction(un, _pred("idk", "I don't know."), k=5)["outcome_correct"]
    assert score_prediction(un, _pred("answer", "EUR 10"), k=5)["outcome_correct"] is False
    assert score_prediction(un, _pred("idk"), k=5)["recall@5"] is None


def test_aggregate_tables():
    rows = [
        score_prediction(_ex("ANSWERABLE", ["1"]), _pred("answer", "1"), k=5),
        score_prediction(_ex("ANSWERABLE", ["1"]), _pred("idk", "no"), k=5),
        score_prediction(_ex("UNANSWERABLE"), _pred("error", "(failed)"), k=5),
    ]
    summary = aggregate(rows)
    assert summary["n"] == 3 and summary["outcome_correct"] == 1 / 3 and summary["failed"] == 1 / 3
    answer = summary["per_route"]["answer"]
    assert (answer["n"], answer["route_accuracy"], answer["outcome_accuracy"]) == (2, 0.5, 0.5)
    assert answer["route_accuracy_ci95"] == pytest.approx([0.0945, 0.9055], abs=1e-4)  # Wilson, 1 of 2
    assert summary["confusion"] == {"answer": {"answer": 1, "idk": 1}, "idk": {"error": 1}}


def test_evidence_precision_recall_f1_and_stage_shares():
    import dspy

    from askfirst.evaluation.scoring import aggregate, score_prediction

    example = dspy.Example(answerability="ANSWERABLE", gold_answers=[], qrels={"a": 1, "b": 1, "z": 0})
    pred = {"route": "answer", "answer": "x", "retrieved_docs": ["a", "c", "d", "z"], "extras": {"stage": "evr"}}
    row = score_prediction(example, pred)
    assert (row["evidence_precision"], row["evidence_recall"]) == (0.25, 0.5) and abs(row["evidence_f1"] - 1 / 3) < 1e-9
    other = score_prediction(example, {"route": "idk", "answer": "", "retrieved_docs": [], "extras": {"stage": "none"}})
    assert other["evidence_f1"] == 0.0
    summary = aggregate([row, other, score_prediction(example, pred)])
    assert summary["stage_shares"] == {"evr": 2 / 3, "none": 1 / 3} and "stage" not in summary


def test_wilson_interval_stays_inside_zero_and_one():
    from askfirst.evaluation.stats import proportion_ci

    assert proportion_ci(0, 5) == pytest.approx((0.0, 0.4345), abs=1e-4)
    assert proportion_ci(5, 5) == pytest.approx((0.5655, 1.0), abs=1e-4)
    assert proportion_ci(20, 40) == pytest.approx((0.3520, 0.6480), abs=1e-4)
    with pytest.raises(ValueError):
        proportion_ci(0, 0)


def test_expected_calibration_error_by_hand():
    from askfirst.evaluation.calibration import expected_calibration_error

    # Bin [0.1, 0.2): mean P 0.125 against 1 of 2 answerable; bin [0.9, 1.0]: mean P 0.95 against 2 of 2 (1.0 is in it).
    assert expected_calibration_error([0.1, 0.15, 0.9, 1.0], [False, True, True, True]) == pytest.approx((2 * 0.375 + 2 * 0.05) / 4)
    assert expected_calibration_error([0.0, 1.0], [False, True]) == 0.0
    with pytest.raises(ValueError):
        expected_calibration_error([], [])


def test_aggregate_calibrates_p_answerable_over_assessed_questions_only():
    def scored(label, p, source="logprobs", route="answer"):
        return score_prediction(_ex(label), _pred(route) | {"extras": {"p_answerable": p, "probability_source": source}}, k=5)

    rows = [scored("ANSWERABLE", 0.9), scored("PARTIAL", 0.7), scored("UNANSWERABLE", 0.8),
            scored("UNDERSPECIFIED", 0.2, source="generated"),
            scored("UNANSWERABLE", 0.0, source=None, route="idk")]  # gated: no assessment, left out
    assert rows[-1]["p_answerable"] is None and rows[0]["p_answerable"] == 0.9
    summary = aggregate(rows)
    assert summary["answerability_n"] == 4 and summary["answerability_share"] == 0.5
    assert summary["mean_p_answerable"] == pytest.approx(0.65) and "p_answerable" not in summary
    # Answerable 0.9 and 0.7 against 0.8 and 0.2: three of the four pairs ordered right.
    assert summary["answerability_auc"] == pytest.approx(0.75)
    assert summary["answerability_brier"] == pytest.approx((0.01 + 0.09 + 0.64 + 0.04) / 4)
    assert summary["answerability_ece"] == pytest.approx((0.1 + 0.3 + 0.8 + 0.2) / 4)  # one question per bin
    one_kind = aggregate(rows[:2])
    assert one_kind["answerability_auc"] is None and one_kind["answerability_n"] == 2
    assert "answerability_n" not in aggregate([score_prediction(_ex("ANSWERABLE"), _pred("answer"), k=5)])
