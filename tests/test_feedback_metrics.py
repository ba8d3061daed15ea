import dspy
import pytest

from askfirst.optimizers.feedback_metrics import OutcomeMetric, RecallMetric
from askfirst.retrieval.chunking import Passage


def _gold(label="ANSWERABLE", answers=("85",), passages=("fees-lab",), options=()):
    return dspy.Example(id="q", conversation=[{"role": "user", "content": "q?"}], answerability=label, gold_answers=list(answers),
                        gold_passages=list(passages), clarification_options=list(options))


def _pred(route, answer, ids=(), citations=()):
    return dspy.Prediction(route=route, answer=answer, citations=list(citations), evidence=[Passage(i, i.split("#")[0], "", "") for i in ids],
                           queries=[["lab fee"]])


def test_recall_metric_reports_missed_passages():
    gold = _gold(passages=("fees-lab", "course-chem101"))
    chunks = _pred("answer", "EUR 85", ["fees-lab#0", "fees-lab#1", "course-chem101"])
    out = RecallMetric(k=1)(gold, chunks)
    assert out.score == 0.5 and "Missed gold passages: course-chem101" in out.feedback
    assert RecallMetric(k=2)(gold, chunks).score == 1.0  # two chunks of one document take one rank, not two
    assert RecallMetric(k=2).as_float()(gold, _pred("answer", "x", ["course-chem101", "fees-lab"])) == 1.0
    assert not RecallMetric().applies(_gold("UNANSWERABLE", (), ())) and RecallMetric().applies(gold)


def test_a_question_without_gold_passages_adds_nothing_to_the_recall_objective(caplog):
    from askfirst.datasets.errors import DataError
    from askfirst.optimizers.compile import scored_by
    from askfirst.optimizers.objectives import build_objective

    no_gold, with_gold = _gold("UNANSWERABLE", (), ()), _gold()
    both = build_objective("both", recall_k=5)
    out = both(no_gold, _pred("idk", "I don't know."))
    assert out.score == 1.0 and out.objective_scores == {"outcome": 1.0}  # outcome only; recall does not apply
    assert set(both(with_gold, _pred("answer", "EUR 85", ["x"])).objective_scores) == {"recall@5", "outcome"}
    recall = build_objective("recall", recall_k=5)
    assert scored_by(recall, [no_gold, with_gold, no_gold], "trainset") == [with_gold]
    assert "2 of 3 questions cannot be scored" in caplog.text
    with pytest.raises(DataError, match="none of the 1 valset"):
        scored_by(recall, [no_gold], "valset")


@pytest.mark.parametrize(("gold", "pred", "score", "phrase"), [
    (_gold(), _pred("answer", "The fee is EUR 85."), 1.0, "Correct"),
    (_gold(), _pred("idk", "I don't know."), 0.0, "although the passages answer"),
    (_gold(), _pred("answer", "The fee is EUR 60."), 0.0, "none of the gold answers"),
    (_gold("UNDERSPECIFIED", (), (), ("lab", "tuition")), _pred("answer", "EUR 85"), 0.0, "e.g. lab, tuition"),
    (_gold("UNANSWERABLE", (), ()), _pred("answer", "EUR 95"), 0.0, "should have said it does not know"),
    (_gold("PARTIAL"), _pred("answer", "EUR 85"), 0.0, "said what is missing"),
    (_gold(), _pred("error", "(failed: notes_builder)"), 0.0, "parseable"),
])
def test_outcome_metric_scores_and_explains(gold, pred, score, phrase):
    out = OutcomeMetric()(gold, pred, trace=None, pred_name=None, pred_trace=None)
    assert out.score == score and phrase in out.feedback
    as_float = OutcomeMetric().as_float()(gold, pred)
    assert isinstance(as_float, float) and as_float == score


def test_str_em_objective_names_the_missing_readings():
    import dspy

    from askfirst.optimizers.objectives import build_objective

    metric = build_objective("str_em")
    gold = dspy.Example(qa_pairs=[("Who directed the 1998 film?", ["John Smith"]), ("Who directed the remake?", ["Ann Lee"])])
    out = metric(gold, dspy.Prediction(route="answer", answer="John Smith directed the 1998 film."))
    assert out.score == 0.5 and "Who directed the remake? (e.g. Ann Lee)" in out.feedback
    assert metric.as_float()(gold, dspy.Prediction(route="answer", answer="John Smith and Ann Lee.")) == 1.0
