"""Our metrics against the reference implementations, on inputs where a wrong definition would show."""

import json
import random

import pytest

from askfirst.evaluation.ambiguity_metrics import str_em
from askfirst.evaluation.answer_metrics import exact_match, token_f1
from askfirst.evaluation.mtrag_formulas import rouge_l_f
from askfirst.evaluation.retrieval_metrics import ndcg_at_k, recall_at_k

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier comes with the dev extra")


def test_recall_and_ndcg_equal_pytrec_eval_on_random_rankings():
    rng = random.Random(7)
    docs = [f"d{i}" for i in range(30)]
    qrels, run, ours = {}, {}, {}
    for q in range(300):
        judged = rng.sample(docs, rng.randint(1, 8))
        qrels[f"q{q}"] = {d: rng.choice([0, 1, 1, 2, 3]) for d in judged}  # graded, with judged-irrelevant documents
        if not any(qrels[f"q{q}"].values()):
            qrels[f"q{q}"][judged[0]] = 1
        ranking = rng.sample(docs, rng.randint(0, 15))
        run[f"q{q}"] = {d: float(len(ranking) - i) for i, d in enumerate(ranking)}  # distinct scores: no tie-breaking
        ours[f"q{q}"] = ranking
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"recall.5,10", "ndcg_cut.1,3,5,10"})
    reference = evaluator.evaluate({q: r if r else {"none": 0.0} for q, r in run.items()})
    for q, ranking in ours.items():
        for k in (5, 10):
            assert recall_at_k(ranking, qrels[q], k) == pytest.approx(reference[q][f"recall_{k}"], abs=1e-9), (q, k)
        for k in (1, 3, 5, 10):
            assert ndcg_at_k(ranking, qrels[q], k) == pytest.approx(reference[q][f"ndcg_cut_{k}"], abs=1e-9), (q, k)


def test_rouge_l_is_rouge_score_s():
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    # The three pairs on which the old hand-rolled LCS on SQuAD-normalised tokens gave 0.375 / 0.105 / 0.0.
    pairs = [("The fee is charged per course.", "A fee is charged for each course."),
             ("Students pay the registration fee of EUR 60 at the start of every semester in the autumn.", "The fee: EUR 60."),
             ("a the an", "the a an")]
    for prediction, reference in pairs:
        assert rouge_l_f(prediction, reference) == pytest.approx(scorer.score(reference, prediction)["rougeL"].fmeasure)
    assert rouge_l_f(*pairs[2]) > 0  # articles count, as in MTRAG's scorer


@pytest.mark.parametrize(("prediction", "gold", "em", "f1"), [
    ("The Denver Broncos", "Denver Broncos", True, 1.0),  # articles and case ignored (SQuAD's evaluate-v2.0)
    ("Denver Broncos!", "denver broncos", True, 1.0),
    ("Broncos", "Denver Broncos", False, 2 * 1.0 * 0.5 / 1.5),
    ("the the the", "Denver", False, 0.0),
])
def test_squad_exact_match_and_f1(prediction, gold, em, f1):
    assert exact_match(prediction, [gold]) is em and token_f1(prediction, gold) == pytest.approx(f1)


def test_str_em_is_asqa_substring_presence():
    assert str_em("The fee rose to EUR 850 in 2020.", [["85"], ["2020"]]) == 1.0  # substring, as ASQA's exact_presence
    assert str_em("Ron and Fred Weasley.", [["Ron"], ["George"]]) == 0.5


def test_the_exported_run_file_scores_the_same_in_pytrec_eval(tmp_path):
    import dspy

    from askfirst.evaluation.exports import MTRAG_PREDICTIONS_FILE, TREC_QRELS_FILE, TREC_RUN_FILE, write_exports
    from askfirst.evaluation.scoring import score_prediction

    rng = random.Random(3)
    docs = [f"doc-{i}" for i in range(25)]
    examples, records, qrels = [], [], {}
    for q in range(40):
        qid = f"conv{q}<::>{q % 5}"  # MTRAG task ids hold '<::>'
        qrels[qid] = {d: 1 for d in rng.sample(docs, rng.randint(1, 4))}
        examples.append(dspy.Example(id=qid, conversation=[{"role": "user", "content": "q"}], answerability="ANSWERABLE", qrels=qrels[qid],
                                     gold_answers=[], kind="mtrag", reference="ref", collection="fiqa"))
        ranked = rng.sample(docs, 12)
        records.append({"id": qid, "route": "answer", "answer": "a", "retrieved_docs": ranked[:3], "ranked_docs": ranked})
    write_exports(examples, records, run_dir=tmp_path, passage_text={d: f"text of {d}" for d in docs})
    with (tmp_path / TREC_RUN_FILE).open() as handle:
        run = pytrec_eval.parse_run(handle)
    with (tmp_path / TREC_QRELS_FILE).open() as handle:  # the exported judgements are the ones scored against
        assert pytrec_eval.parse_qrel(handle) == qrels
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"recall.10", "ndcg_cut.5"}).evaluate(run)
    for example, rec in zip(examples, records, strict=True):
        ours = score_prediction(example, rec)
        assert round(ours["ranking_recall@10"], 4) == round(reference[example.id]["recall_10"], 4)
        assert round(ours["ranking_ndcg@5"], 4) == round(reference[example.id]["ndcg_cut_5"], 4)
    first = json.loads((tmp_path / MTRAG_PREDICTIONS_FILE).read_text().splitlines()[0])
    assert first["predictions"] == [{"text": "a"}] and first["contexts"][0]["document_id"] == records[0]["ranked_docs"][0]
    assert first["input"] == [{"speaker": "user", "text": "q"}] and first["targets"][0]["text"] == "ref"


def test_squad_em_and_f1_follow_squad_v2_on_empty_answers_and_golds():
    from askfirst.evaluation.answer_metrics import best_token_f1, exact_match

    assert exact_match("", ["", "  "]) and best_token_f1("", ["a", "."]) == 1.0  # gold that normalises to nothing is [""]
    assert not exact_match("Paris", ["the", "!"]) and best_token_f1("Paris", ["the"]) == 0.0
    assert not exact_match("", ["Paris"]) and best_token_f1("", ["Paris"]) == 0.0
    assert exact_match("The Paris.", ["paris"]) and best_token_f1("in Paris", ["Paris"]) == pytest.approx(2 / 3)


def test_str_em_reads_the_answer_as_alce_does():
    from askfirst.evaluation.ambiguity_metrics import str_em

    answer = "The 2003 film [1] is by Smith [doc-7].\nThe 1998 one is by Jones."
    assert str_em(answer, [["Smith"], ["Jones"]]) == 0.5  # cut at the first newline
    assert str_em("It was 1 [2] 3.", [["1 3"]]) == 1.0  # citation markers removed before matching
    assert str_em("anything", [["the"]]) == 1.0  # an alias that normalises to nothing is present
