"""SQuAD's EM/F1 on the extracted short answer span (``eval.short_span``)."""

import json
from types import SimpleNamespace

import dspy

from askfirst.evaluation.span_scores import SPANS_FILE, span_scores


def _q(qid, answerability, golds):
    return dspy.Example(id=qid, conversation=[{"role": "user", "content": f"question {qid}?"}], answerability=answerability,
                        gold_answers=golds)


EXAMPLES = [_q("hit", "ANSWERABLE", ["John Smith"]), _q("half", "ANSWERABLE", ["Ann Lee"]),
            _q("refused", "ANSWERABLE", ["Bob Ray"]), _q("idk", "UNANSWERABLE", []), _q("guess", "UNANSWERABLE", []),
            _q("mtrag-clarify", "UNDERSPECIFIED", [])]
RECORDS = [{"route": "answer", "answer": "It was directed by John Smith in 1998."},
           {"route": "partial", "answer": "Perhaps Ann Marie Lee directed it."},
           {"route": "idk", "answer": "I don't know."}, {"route": "idk", "answer": "I don't know."},
           {"route": "answer", "answer": "Paris."}, {"route": "clarify", "answer": "Which film?"}]
SPANS = {"question hit?": "John Smith", "question half?": "Ann Marie Lee", "question guess?": "Paris"}


def test_spans_score_as_squad_v2_and_only_answering_replies_are_extracted(tmp_path):
    asked = []

    def extract(question, answer):
        asked.append(question)
        return SPANS[question]

    out = span_scores(EXAMPLES, RECORDS, extract=extract, run_dir=tmp_path)
    assert sorted(asked) == ["question guess?", "question half?", "question hit?"]  # no LM call for a reply that does not answer
    # hit: 1/1; half: EM 0, F1 2*(2/3*1)/(5/3) = 0.8; refused: 0/0; idk with no gold: 1/1 (SQuAD v2); guess: 0/0.
    assert out["n_span"] == 5 and out["span_em"] == 2 / 5
    assert abs(out["span_f1"] - (1 + 0.8 + 0 + 1 + 0) / 5) < 1e-9
    rows = [json.loads(line) for line in (tmp_path / SPANS_FILE).read_text().splitlines()]
    assert [r["id"] for r in rows] == [e.id for e in EXAMPLES] and rows[-1] == {"id": "mtrag-clarify"}


def test_span_scoring_resumes_and_retries_a_failed_extraction(tmp_path):
    calls = []

    def flaky(question, answer):
        calls.append(question)
        if question == "question half?" and calls.count(question) == 1:
            raise RuntimeError("server hiccup")
        return SPANS[question]

    first = span_scores(EXAMPLES, RECORDS, extract=flaky, run_dir=tmp_path)
    assert first["n_span_failed"] == 1 and first["n_span"] == 4
    again = span_scores(EXAMPLES, RECORDS, extract=flaky, run_dir=tmp_path)
    assert calls.count("question half?") == 2 and calls.count("question hit?") == 1  # only the failure is asked again
    assert "n_span_failed" not in again and again["n_span"] == 5 and again["span_em"] == 2 / 5


def test_short_span_switch_runs_the_extractor_on_the_lm_and_records_its_figures(tmp_path, schema_lm):
    from askfirst.config import load_config
    from askfirst.evaluation.judge_run import judge_result

    cfg = load_config(overrides=["eval.short_span=true", "lm.parse_retries=0"])
    result = SimpleNamespace(records=RECORDS[:1], summary={}, run_dir=tmp_path)
    with dspy.context(lm=schema_lm({"short_answer": {"short_answer": "John Smith"}}), adapter=dspy.JSONAdapter()):
        flat = judge_result(cfg, EXAMPLES[:1], result, embedder=None, passage_text={})
    assert flat == {"span.n_span": 1, "span.span_em": 1.0, "span.span_f1": 1.0}
    assert json.loads((tmp_path / "metrics.json").read_text())["span"]["span_em"] == 1.0
