"""MTRAGEval's generation scores: formulas on hand-computed cases, judges driven by a scripted LM."""

import dspy
import numpy as np
import pytest

from askfirst.evaluation.mtrag_formulas import condition, harmonic_mean, rb_agg, rouge_l_f
from askfirst.evaluation.mtrag_judges import MTRAGJudges, aggregate_hm


def test_rouge_l_hand_computed():
    # rouge_score keeps articles (the SQuAD normalisation would drop them): LCS([the cat sat on mat], [cat on the mat]) = 3
    assert rouge_l_f("the cat sat on mat", "cat on the mat") == pytest.approx(2 * (3 / 5) * (3 / 4) / (3 / 5 + 3 / 4))
    assert rouge_l_f("It is EUR 4,200.", "it is eur 4 200") == pytest.approx(1.0)  # lower-cased, punctuation to spaces
    assert rouge_l_f("", "x") == 0.0 and rouge_l_f("a b", "c d") == 0.0


def test_rb_agg_is_the_three_way_harmonic_mean():
    R, L, E = (0.6 + 1) / 2, 0.5, (0.2 + 1) / 2
    assert rb_agg(recall_sim=0.6, rouge_l=0.5, passage_sims=[0.1, 0.2]) == pytest.approx(3 * R * L * E / (R * L + R * E + L * E))
    assert rb_agg(recall_sim=0.6, rouge_l=0.5, passage_sims=[]) == 0.0  # no passages -> 0
    assert rb_agg(recall_sim=0.6, rouge_l=0.0, passage_sims=[0.3]) == 0.0


@pytest.mark.parametrize(("label", "idk", "clar", "expected"), [
    ("UNDERSPECIFIED", 0.0, 1.0, 1.0), ("UNDERSPECIFIED", 0.0, 0.5, 0.0),
    ("UNANSWERABLE", 1.0, None, 1.0), ("UNANSWERABLE", 0.5, None, 0.0), ("CONVERSATIONAL", 1.0, None, 1.0),
    ("ANSWERABLE", 1.0, None, 0.0), ("ANSWERABLE", 0.5, None, 0.7), ("PARTIAL", 0.0, None, 0.7),
])
def test_conditioning(label, idk, clar, expected):
    assert condition(0.7, answerability=label, idk=idk, clarification=clar) == expected


def test_harmonic_mean():
    assert harmonic_mean([0.5, 0.25, 1.0]) == pytest.approx(3 / (2 + 4 + 1))
    assert harmonic_mean([0.5, 0.0]) == 0.0


class FixedEmbedder:
    def embed(self, texts):
        vecs = np.array([[1.0, 0.0] if "85" in t else [0.0, 1.0] for t in texts])
        return vecs


def test_judges_score_an_answerable_reply(schema_lm):
    lm = schema_lm({"verdict": {"verdict": "no"}, "claims": {"claims": ["fee is 85", "charged per course"], "verdicts": ["supported", "unsupported"]},
                    "rating": {"rating": 8}})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = MTRAGJudges(FixedEmbedder(), similarity="minilm")(turns=[{"role": "user", "content": "lab fee?"}], answer="The lab fee is EUR 85.",
                                           answerability="ANSWERABLE", reference="It is EUR 85 per lab course.", passages=["Lab fee: EUR 85."])
    assert out.idk == 0.0 and out.clarification is None
    assert out.raw["RL_F"] == 0.5 and out.raw["RB_llm"] == 0.8
    expected_agg = rb_agg(recall_sim=1.0, rouge_l=rouge_l_f("The lab fee is EUR 85.", "It is EUR 85 per lab course."), passage_sims=[1.0])
    assert out.raw["RB_agg"] == pytest.approx(expected_agg)
    assert out.conditioned == out.raw and out.hm == pytest.approx(harmonic_mean([0.5, 0.8, expected_agg]))
    assert lm.engine.calls == 3  # IDK, faithfulness, rating: no clarification judge for an answerable task


def test_idk_on_unanswerable_scores_one_without_quality_judges(schema_lm):
    lm = schema_lm({"verdict": {"verdict": "yes"}})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = MTRAGJudges(FixedEmbedder())(turns=[{"role": "user", "content": "parking?"}], answer="I don't know.",
                                           answerability="UNANSWERABLE", reference="", passages=[])
    assert out.conditioned == {"RL_F": 1.0, "RB_llm": 1.0, "RB_agg": 1.0} and lm.engine.calls == 1
    rows = [out, dspy.Prediction(idk=0.0, conditioned={"RL_F": 0.5, "RB_llm": 0.5, "RB_agg": 0.25})]
    agg = aggregate_hm(rows)
    assert agg["RL_F_cond"] == 0.75 and agg["RB_agg_cond"] == 0.625 and agg["idk_rate"] == 0.5
    assert agg["HM"] == pytest.approx(harmonic_mean([0.75, 0.75, 0.625]))
    partial = dspy.Prediction(idk=0.5, conditioned={"RL_F": 0.5, "RB_llm": 0.5, "RB_agg": 0.25})  # keeps its scores, as in MTRAG
    agg = aggregate_hm([*rows, partial])
    assert agg["idk_rate"] == pytest.approx(1 / 3) and agg["idk_partial_rate"] == pytest.approx(1 / 3)


def test_clarification_judge_and_unparseable_fallback(schema_lm):
    lm = schema_lm({"verdict": {"verdict": "no"}, "decision": {"decision": "yes"}})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = MTRAGJudges(FixedEmbedder())(turns=[{"role": "user", "content": "the fee?"}], answer="Which fee do you mean?",
                                           answerability="UNDERSPECIFIED", reference="", passages=[])
    assert out.clarification == 1.0 and out.conditioned["RB_llm"] == 1.0
    with dspy.context(lm=schema_lm({"verdict": {"verdict": "maybe?"}}), adapter=dspy.JSONAdapter()):
        out = MTRAGJudges(FixedEmbedder(), retries=0)(turns=[{"role": "user", "content": "x"}], answer="y",
                                                      answerability="UNANSWERABLE", reference="", passages=[])
    assert out.idk == 0.5 and out.conditioned["RL_F"] == 0.0  # an unparseable IDK verdict counts 0.5, as MTRAGEval does


def test_hm_metric_feedback_and_eval_judging(schema_lm, tmp_path):
    import json

    from askfirst.evaluation.runner import judge_records
    from askfirst.optimizers.feedback_metrics import HMMetric
    from askfirst.retrieval.chunking import Passage

    judges = MTRAGJudges(FixedEmbedder())
    gold = dspy.Example(id="q", conversation=[{"role": "user", "content": "lab fee?"}], answerability="ANSWERABLE",
                        gold_answers=["85"], reference="EUR 85")
    with dspy.context(lm=schema_lm({"verdict": {"verdict": "yes"}}), adapter=dspy.JSONAdapter()):
        out = HMMetric(judges)(gold, dspy.Prediction(route="idk", answer="I don't know.", evidence=[]))
    assert out.score == 0.0 and "answerable question" in out.feedback
    pred = dspy.Prediction(route="answer", answer="EUR 85", evidence=[Passage("fees-lab", "fees-lab", "", "Lab fee: EUR 85.")])
    lm = schema_lm({"verdict": {"verdict": "no"}, "claims": {"claims": ["c"], "verdicts": ["supported"]}, "rating": {"rating": 10}})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = HMMetric(judges)(gold, pred)
        summary = judge_records([gold], [{"answer": "EUR 85", "retrieved": ["fees-lab"]}], judges, {"fees-lab": "Lab fee: EUR 85."}, run_dir=tmp_path)
    assert out.score == pytest.approx(1.0) and "RL_F=1.00" in out.feedback
    assert summary["HM"] == pytest.approx(1.0) and summary["idk_rate"] == 0.0
    assert json.loads((tmp_path / "hm.jsonl").read_text())["conditioned"]["RB_llm"] == 1.0


def test_the_lexical_fallback_and_both_conditionings(schema_lm):
    from askfirst.evaluation.mtrag_formulas import rb_agg_lexical, token_precision, token_recall

    assert token_recall("The fee is EUR 85.", "EUR 85 per course") == pytest.approx(2 / 4)
    assert token_precision("The fee is EUR 85.", "Lab fee: EUR 85.") == pytest.approx(3 / 4)  # 'the' is dropped by SQuAD normalisation
    lm = schema_lm({"verdict": {"verdict": "no"}, "decision": {"decision": "no"},
                    "claims": {"claims": ["fee is 85"], "verdicts": ["supported"]}, "rating": {"rating": 6}})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = MTRAGJudges(None)(turns=[{"role": "user", "content": "fee?"}], answer="The fee is EUR 85.", answerability="UNDERSPECIFIED",
                                reference="EUR 85 per course", passages=["Lab fee: EUR 85."])
    assert out.similarity == "lexical" and out.raw["RB_agg"] == pytest.approx(rb_agg_lexical("The fee is EUR 85.", "EUR 85 per course", ["Lab fee: EUR 85."]))
    assert out.conditioned == {"RL_F": 0.0, "RB_llm": 0.0, "RB_agg": 0.0}  # current: no clarification -> 0
    assert out.conditioned_2026_01["RL_F"] == 1.0 and out.conditioned_2026_01["RB_llm"] == 0.6  # January 2026: scored as answerable
    summary = aggregate_hm([out])
    assert summary["HM"] == 0.0 and summary["HM_2026_01"] > 0 and summary["rb_agg_similarity"] == "lexical"


def test_the_idk_judge_reads_the_whole_conversation_with_mtrageval_examples(schema_lm):
    seen = []
    lm = schema_lm({"verdict": lambda text: seen.append(text) or {"verdict": "yes"}})
    turns = [{"role": "user", "content": "Which parking permits are there?"}, {"role": "assistant", "content": "Day and semester permits."},
             {"role": "user", "content": "How much is the second one?"}]
    judges = MTRAGJudges(FixedEmbedder())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = judges(turns=turns, answer="I don't know.", answerability="UNANSWERABLE", reference="", passages=[])
    assert out.idk == 1.0 and len(seen) == 1
    assert "Which parking permits are there?" in seen[0] and "How much is the second one?" in seen[0]  # MTRAGEval's inquiry
    assert len(judges.idk.demos) == 15 and {d.verdict for d in judges.idk.demos} == {"yes", "no", "partial"}


def test_the_clarification_judge_reads_the_reply_alone_as_mtrageval(schema_lm):
    seen = []
    lm = schema_lm({"verdict": {"verdict": "no"}, "decision": lambda text: seen.append(text) or {"decision": "yes"},
                    "claims": {"claims": ["c"], "verdicts": ["supported"]}, "rating": {"rating": 5}})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = MTRAGJudges(FixedEmbedder())(turns=[{"role": "user", "content": "What is the fee for the permit?"}],
                                           answer="Which permit do you mean, the day or the semester one?",
                                           answerability="UNDERSPECIFIED", reference="", passages=[])
    assert out.clarification == 1.0 and len(seen) == 1
    assert "Which permit do you mean" in seen[0] and "What is the fee for the permit?" not in seen[0]
