"""Concurrent evaluation: the same records and scores as one thread, per-question LM counts, DSPy settings in threads."""

import json

import dspy

from askfirst.datasets.questions import load_questions
from askfirst.evaluation.runner import PREDICTIONS_FILE, run_eval
from askfirst.programs.notes_rag.config import NotesConfig
from askfirst.programs.notes_rag.program import IterativeNotesRAG

SCRIPT = {
    "queries": {"queries": ["lab fee"]},
    "label": {"answering_sentences": ["A laboratory fee of EUR 85"], "label": "ANSWERABLE", "confidence": 0.9},
    "cited_ids": {"answer": "The lab fee is EUR 85.", "cited_ids": ["fees-lab"]},
}


def _run(tmp_path, retriever, schema_lm, threads):
    examples = load_questions("demo", limit=12)
    tmp_path.mkdir(parents=True, exist_ok=True)
    program = IterativeNotesRAG(retriever, NotesConfig(iterations=1, reranker=False), retries=0)
    with dspy.context(lm=schema_lm(SCRIPT), adapter=dspy.JSONAdapter()):  # worker threads must see these settings
        return examples, run_eval(program, examples, run_dir=tmp_path, threads=threads)


def test_threads_give_the_same_records_and_scores_as_one_thread(tmp_path, retriever, schema_lm):
    examples, one = _run(tmp_path / "one", retriever, schema_lm, threads=1)
    _, many = _run(tmp_path / "many", retriever, schema_lm, threads=4)

    def strip(records):
        return [{k: v for k, v in r.items() if k != "seconds"} for r in records]

    assert strip(many.records) == strip(one.records) and many.scores == one.scores
    assert {k: v for k, v in many.summary.items() if k != "seconds_per_question"} == {
        k: v for k, v in one.summary.items() if k != "seconds_per_question"}
    assert all(r["route"] == "answer" and r["lm_calls"] == 3 for r in many.records)  # queries, label, answer: counted apart
    lines = [json.loads(line) for line in (tmp_path / "many" / PREDICTIONS_FILE).read_text().splitlines()]
    assert sorted(r["id"] for r in lines) == sorted(e.id for e in examples)  # one line per finished question
    _, again = _run(tmp_path / "many", retriever, schema_lm, threads=4)
    assert len((tmp_path / "many" / PREDICTIONS_FILE).read_text().splitlines()) == 12  # a resume asks nothing again


def test_records_carry_tokens_and_the_server_reports_real_usage(tmp_path, retriever, schema_lm):
    import dataclasses

    from dspy.lm15 import Usage

    engine = schema_lm(SCRIPT).engine

    class Counting(type(engine)):
        def complete(self, request):
            return dataclasses.replace(super().complete(request), usage=Usage(input_tokens=100, output_tokens=7, total_tokens=107))

    lm = dspy.LM("test/tokens", engine=Counting(SCRIPT), cache=False)
    examples = load_questions("demo", limit=2)
    program = IterativeNotesRAG(retriever, NotesConfig(iterations=1, reranker=False), retries=0)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = run_eval(program, examples, run_dir=tmp_path)
    assert [(r["tokens_in"], r["tokens_out"]) for r in result.records] == [(300, 21), (300, 21)]  # three calls each
    steps = {"retrieval.query_generator", "router.classify", "responders.complete"}  # one call each, by step
    assert all(r["tokens_by_step"] == dict.fromkeys(steps, {"in": 100, "out": 7}) for r in result.records), result.records[0]["tokens_by_step"]
    assert result.summary["tokens_in_per_question"] == 300 and result.summary["cost_usd"] is None  # no price for this model

    from askfirst.serve.app import Variant, _usage

    reply = Variant(program, lm, dspy.JSONAdapter()).answer([{"role": "user", "content": "Lab fee?"}])
    assert _usage(reply) == {"prompt_tokens": 300, "completion_tokens": 21, "total_tokens": 321}
