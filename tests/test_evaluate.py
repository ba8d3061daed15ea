"""The evaluation runner: incremental output, resume after interruption, per-question failures scored."""

import json

import dspy
import pytest

from askfirst.datasets.errors import DataError
from askfirst.datasets.questions import load_questions
from askfirst.evaluation.runner import PREDICTIONS_FILE, run_eval
from askfirst.retrieval.chunking import Passage


class ScriptedProgram(dspy.Module):
    """Answers each question id from a script; records which ids it was asked."""

    def __init__(self, script):
        super().__init__()
        self.script = script
        self.asked = []

    def forward(self, conversation):
        qid = next(k for k, (turn, _) in self.script.items() if turn == conversation[-1]["content"])
        self.asked.append(qid)
        action = self.script[qid][1]
        if isinstance(action, BaseException):
            raise action
        route, answer, docs = action
        evidence = [Passage(d, d, d, "text") for d in docs]
        return dspy.Prediction(route=route, answer=answer, citations=docs[:1], evidence=evidence, label=None, confidence=None)


@pytest.fixture
def examples():
    return load_questions("demo", limit=4)


def _script(examples, fail_on=None, interrupt_on=None):
    script = {}
    for e in examples:
        action = ("answer", " ".join(e.gold_answers) or "x", e.gold_passages)
        if e.id == fail_on:
            action = RuntimeError("backend exploded")
        if e.id == interrupt_on:
            action = KeyboardInterrupt()
        script[e.id] = (e.conversation[-1]["content"], action)
    return script


def test_scores_and_writes_every_question(tmp_path, examples):
    result = run_eval(ScriptedProgram(_script(examples)), examples, run_dir=tmp_path)
    lines = (tmp_path / PREDICTIONS_FILE).read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == [e.id for e in examples]
    assert result.summary["outcome_correct"] == 1.0 and result.summary["recall@5"] == 1.0
    assert json.loads((tmp_path / "metrics.json").read_text())["n"] == 4


def test_one_failure_does_not_stop_the_run(tmp_path, examples):
    result = run_eval(ScriptedProgram(_script(examples, fail_on=examples[1].id)), examples, run_dir=tmp_path)
    failed = result.records[1]
    assert failed["route"] == "error" and "backend exploded" in failed["answer"]
    assert result.summary["failed"] == 0.25 and result.summary["outcome_correct"] == 0.75


def test_interrupted_run_resumes_without_asking_again(tmp_path, examples):
    first = ScriptedProgram(_script(examples, interrupt_on=examples[2].id))
    with pytest.raises(KeyboardInterrupt):
        run_eval(first, examples, run_dir=tmp_path)
    assert len((tmp_path / PREDICTIONS_FILE).read_text().splitlines()) == 2
    with (tmp_path / PREDICTIONS_FILE).open("a") as f:
        f.write('{"id": "a0')  # a line cut short by the interruption
    second = ScriptedProgram(_script(examples))
    result = run_eval(second, examples, run_dir=tmp_path)
    assert second.asked == [examples[2].id, examples[3].id]
    assert [r["id"] for r in result.records] == [e.id for e in examples]


def test_demo_question_set_covers_every_route():
    qs = load_questions("demo")
    labels = {q.answerability for q in qs}
    assert labels == {"ANSWERABLE", "PARTIAL", "UNDERSPECIFIED", "UNANSWERABLE"}
    assert any(len(q.conversation) > 1 for q in qs) and any(q.kind == "multi-hop" for q in qs)
    assert all(q.gold_passages for q in qs if q.answerability in ("ANSWERABLE", "PARTIAL"))


def test_bad_question_lines_are_named(tmp_path):
    f = tmp_path / "q.jsonl"
    f.write_text('{"id": "a", "turns": [{"role": "user", "content": "hi"}], "answerability": "MAYBE"}\n')
    with pytest.raises(DataError, match=r"q\.jsonl:1: answerability 'MAYBE'"):
        load_questions(f)
    f.write_text('{"id": "a", "turns": [{"role": "user", "content": "hi"}]}\n{"id": "a", "turns": [{"role": "user", "content": "x"}]}\n')
    with pytest.raises(DataError, match=r"q\.jsonl:2: duplicate id"):
        load_questions(f)


def test_demo_gold_passages_exist_in_the_demo_corpus():
    from askfirst.datasets.corpus import load_corpus

    ids = {d.doc_id for d in load_corpus("demo")}
    for q in load_questions("demo"):
        assert set(q.gold_passages) <= ids, q.id


def test_lm_calls_are_counted_per_question(tmp_path, use_dummy_lm, retriever):
    """Every LM call of every step is counted, whichever LM a predictor uses."""
    from askfirst.programs.notes_rag.config import NotesConfig
    from askfirst.programs.notes_rag.program import IterativeNotesRAG

    qs = load_questions("demo", limit=1)
    use_dummy_lm([{"queries": ["q"]}, {"answer": "EUR 4,200", "cited_ids": ["fees-lab"]}])
    program = IterativeNotesRAG(retriever, NotesConfig(iterations=1, reranker=False, router=False), retries=0)
    result = run_eval(program, qs, run_dir=tmp_path)
    assert result.records[0]["lm_calls"] == 2 and result.summary["lm_calls_per_question"] == 2


def test_ambiguity_scores_cover_only_ambiguous_questions(tmp_path, schema_lm):
    import dspy

    from askfirst.evaluation.runner import ambiguity_scores
    from askfirst.evaluation.ambiguity_judges import AmbiguityJudges

    asqa = dspy.Example(id="amb", conversation=[{"role": "user", "content": "Who directed it?"}],
                        qa_pairs=[("Who directed the 1998 film?", ["John Smith"]), ("Who directed the remake?", ["Ann Lee"])])
    urasys_asked = dspy.Example(id="u1", conversation=[{"role": "user", "content": "What campaign?"}], kind="squad2_ambiguous",
                                clarification_options=["Which artist is meant"])
    urasys_answered = urasys_asked.copy(id="u2")
    plain = dspy.Example(id="plain", conversation=[{"role": "user", "content": "x"}])
    records = [{"answer": "The 1998 film was directed by John Smith; the remake by Bob Ray.", "route": "answer", "retrieved": []},
               {"answer": "Which artist do you mean?", "route": "clarify"}, {"answer": "Ban Bossy.", "route": "answer"},
               {"answer": "x", "route": "answer"}]
    extracted = {"Who directed the 1998 film?": "John Smith", "Who directed the remake?": "Bob Ray"}
    lm = schema_lm({"correctness": {"relevance": 5, "faithfulness": 4, "informativeness": 3, "correctness": 2},
                    "asks_for_missing_information": {"asks_for_missing_information": True}})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = ambiguity_scores([asqa, urasys_asked, urasys_answered, plain], records, extract=lambda q, _: extracted[q],
                               judges=AmbiguityJudges(retries=0), run_dir=tmp_path)
    assert out["str_em"] == 0.5 and out["disambig_f1"] == 0.5 and out["judge_mean"] == 3.5 and out["n_str_em"] == 1
    assert out["asks_for_info"] == 0.5 and out["n_asks_for_info"] == 2  # a direct answer to an ambiguous question scores 0
    assert lm.engine.calls == 2  # one rating, one asks-for-info check (the direct answer needs no judge)
    lines = (tmp_path / "ambiguity.jsonl").read_text().splitlines()
    assert len(lines) == 4 and lines[-1] == '{"id": "plain"}'  # nothing applies to it: recorded bare, not scored again
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        again = ambiguity_scores([asqa, urasys_asked, urasys_answered, plain], records, extract=None, judges=None, run_dir=tmp_path)
    assert again == out and lm.engine.calls == 2  # resumed: every row read back, no judge called


def test_extractor_runs_on_the_lm_and_survives_an_unparseable_reply(schema_lm):
    import dspy

    from askfirst.config import load_config
    from askfirst.programs.factory import build_extractor

    extract = build_extractor(load_config(overrides=["lm.parse_retries=0"]))
    with dspy.context(lm=schema_lm({"short_answer": {"short_answer": "John Smith"}}), adapter=dspy.JSONAdapter()):
        assert extract("Who directed it?", "John Smith directed it.") == "John Smith"
    broken = dspy.utils.DummyLM([{"wrong_field": "x"}] * 3)
    with dspy.context(lm=broken, adapter=dspy.JSONAdapter()):
        assert extract("Who directed it?", "John Smith directed it.") == ""
