"""Probabilistic abstention: routing by P(answerable) and tuning the threshold against HM."""

import dspy
import numpy as np
import pytest

from askfirst.config import ProgramConfig
from askfirst.optimizers.threshold import tune_threshold
from askfirst.programs.common.answerability import p_answerable, route_for
from askfirst.evaluation.mtrag_judges import MTRAGJudges
from askfirst.programs.notes_rag.config import NotesConfig
from askfirst.programs.notes_rag.program import IterativeNotesRAG


@pytest.mark.parametrize(("label", "conf", "threshold", "route"), [
    ("ANSWERABLE", 0.9, None, "answer"), ("UNANSWERABLE", 0.9, None, "idk"),
    ("ANSWERABLE", 0.3, 0.5, "idk"), ("PARTIAL", 0.7, 0.5, "partial"),
    ("UNANSWERABLE", 0.2, 0.5, "answer"),  # P(answerable) = 0.8: a confident "no" it is not
    ("UNANSWERABLE", 0.8, 0.5, "idk"), ("UNDERSPECIFIED", 0.1, 0.9, "clarify"),
])
def test_route_for(label, conf, threshold, route):
    assert route_for(label, conf, threshold=threshold) == route


def test_threshold_reaches_the_program(retriever, use_dummy_lm):
    use_dummy_lm([{"queries": ["q"]}, {"answering_sentences": [], "label": "UNANSWERABLE", "confidence": 0.3},
                  {"answer": "EUR 85", "cited_ids": ["fees-lab"]}])
    pred = IterativeNotesRAG(retriever, NotesConfig(iterations=1, reranker=False), ProgramConfig(answer_threshold=0.5), retries=0)(conversation="Lab fee?")
    assert pred.route == "answer" and pred.answer == "EUR 85"
    assert p_answerable("UNANSWERABLE", 0.3) == pytest.approx(0.7)


class OneDimEmbedder:
    def embed(self, texts):
        return np.array([[1.0, 0.0] for _ in texts])


def test_tuning_picks_the_threshold_with_the_best_hm(retriever, schema_lm):
    def example(qid, label, golds):
        return dspy.Example(id=qid, conversation=[{"role": "user", "content": f"question {qid}?"}], answerability=label,
                            gold_answers=golds, gold_passages=[], reference="").with_inputs("conversation")

    valset = [example("a", "ANSWERABLE", ["4,200"]), example("b", "ANSWERABLE", ["4,200"]), example("u", "UNANSWERABLE", [])]
    scripted = {
        "queries": {"queries": ["q"]},
        "label": {"answering_sentences": [], "label": "UNANSWERABLE", "confidence": 0.6},  # p_answerable 0.4: it abstains
        "cited_ids": {"answer": "4,200", "cited_ids": ["fees-lab"]},
        "verdict": lambda text: {"verdict": "yes" if "I don't know" in text else "no"},
        "claims": {"claims": ["c"], "verdicts": ["supported"]},
        "rating": {"rating": 10},
    }
    program = IterativeNotesRAG(retriever, NotesConfig(iterations=1, reranker=False), retries=0)
    with dspy.context(lm=schema_lm(scripted), adapter=dspy.JSONAdapter()):
        result = tune_threshold(program, valset, MTRAGJudges(OneDimEmbedder(), similarity="minilm"), candidates=(0.2, 0.4, 0.6, 0.8))
    by_t = {row["threshold"]: row for row in result["table"]}
    # <= 0.4: everything answered -> the two answerable score, the unanswerable does not; above: the reverse.
    assert by_t[0.2]["idk_rate"] == 0.0 and by_t[0.6]["idk_rate"] == 1.0
    assert by_t[0.4]["RL_F_cond"] == pytest.approx(2 / 3) and by_t[0.8]["RL_F_cond"] == pytest.approx(1 / 3)
    assert by_t[0.4]["HM"] == pytest.approx(2 / 3) and by_t[0.8]["HM"] == pytest.approx(1 / 3)
    assert result["threshold"] == 0.4 and result["HM"] == by_t[0.4]["HM"]  # 0.2 ties; the one nearer 0.5 wins


def test_tuning_records_a_failed_question_and_resumes(tmp_path):
    from askfirst.programs.base import Reply
    from tests.test_resume import FlakyJudges

    class Confident(dspy.Module):
        def forward(self, conversation):
            return Reply(route="answer", answer="EUR 85.", label="ANSWERABLE", confidence=0.9)

    valset = [dspy.Example(id=q, conversation=[{"role": "user", "content": f"question {q}?"}], answerability="ANSWERABLE",
                           gold_answers=[], reference="") for q in ("a", "b", "c")]
    checkpoint = tmp_path / "threshold_rows.jsonl"
    flaky = FlakyJudges(fail_id="question b?")
    first = tune_threshold(Confident(), valset, flaky, candidates=(0.5,), checkpoint=checkpoint)
    assert first["n_failed"] == 1 and "judge LM down" in checkpoint.read_text()
    again = FlakyJudges()
    second = tune_threshold(Confident(), valset, again, candidates=(0.5,), checkpoint=checkpoint)
    assert set(again.calls) == {"question b?"} and second["n_failed"] == 0 and second["table"][0]["HM"] == pytest.approx(0.5)
