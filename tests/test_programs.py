"""Every module and the router, driven by DummyLM on the JSON adapter (the path the offline LM uses)."""

import pytest

from askfirst.config import ProgramConfig
from askfirst.programs.common.conversation import ConversationError
from askfirst.programs.notes_rag.config import NotesConfig
from askfirst.programs.notes_rag.program import IterativeNotesRAG
from askfirst.programs.common.reranker import ListwiseReranker
from askfirst.programs.common.routes import IDK_MESSAGE

Q = {"queries": ["lab fee amount", "laboratory course fee"]}
NOTES = {"key_findings": ["Lab fee is EUR 85 [fees-lab]"], "missing_info": ["refund rules"], "search_suggestions": ["lab fee refund"]}
RERANK = {"ranked_ids": ["fees-registration", "invented-id", "fees-lab"]}
COMPLETE = {"answer": "The lab fee is EUR 85 per lab course.", "cited_ids": ["fees-lab", "[fees-registration]", "made-up"]}


def _label(label, confidence=0.9):
    return {"answering_sentences": ["A laboratory fee of EUR 85 is charged [fees-lab]"], "label": label, "confidence": confidence}


def _program(retriever, **switches):
    notes = {k: v for k, v in switches.items() if k in NotesConfig.model_fields}
    return IterativeNotesRAG(retriever, NotesConfig(**notes), ProgramConfig(**{k: v for k, v in switches.items() if k not in notes}), retries=1)


def _prompts(lm):
    return [entry["messages"][-1]["content"] for entry in lm.history]


def test_full_pipeline_runs_every_step_in_order(retriever, use_dummy_lm):
    lm = use_dummy_lm([Q, NOTES, Q | {"queries": ["lab fee refund rules"]}, NOTES, {"queries": ["third round query"]},
                       RERANK, _label("ANSWERABLE"), COMPLETE])
    pred = _program(retriever)(conversation="How much is the lab fee?")
    assert len(lm.history) == 8
    assert pred.route == "answer" and pred.label == "ANSWERABLE" and pred.confidence == pytest.approx(0.9)
    assert pred.answer == COMPLETE["answer"]
    assert pred.citations == ["fees-lab", "fees-registration"]  # invented ids are no citations
    assert pred.retrieved_ids[:2] == ["fees-registration", "fees-lab"]  # the re-ranker's order
    assert retriever.calls[0][0] == "How much is the lab fee?"  # the question itself anchors round one
    assert len(retriever.calls) == 3 and pred.queries[1] == ["lab fee refund rules"]
    assert "Lab fee is EUR 85 [fees-lab]" in _prompts(lm)[2]  # round two's queries see round one's notes


@pytest.mark.parametrize(("label", "route"), [("ANSWERABLE", "answer"), ("PARTIAL", "partial"), ("UNDERSPECIFIED", "clarify"), ("UNANSWERABLE", "idk")])
def test_router_maps_each_label_to_its_responder(retriever, use_dummy_lm, label, route):
    replies = {
        "answer": COMPLETE,
        "partial": {"answer": "The lab fee is EUR 85.", "missing": "whether textbooks are sold", "cited_ids": ["fees-lab"]},
        "clarify": {"options": ["lab fee", "registration fee"], "clarifying_question": "Do you mean the lab fee or the registration fee?"},
    }
    answers = [Q, _label(label)] + ([replies[route]] if route in replies else [])
    lm = use_dummy_lm(answers)
    pred = _program(retriever, iterations=1, reranker=False)(conversation="How much is the fee?")
    assert pred.route == route and len(lm.history) == len(answers)
    if route == "idk":
        assert pred.answer == IDK_MESSAGE and pred.citations == []
    if route == "partial":
        assert "whether textbooks are sold" in pred.answer and pred.citations == ["fees-lab"]
    if route == "clarify":
        assert pred.options == ["lab fee", "registration fee"] and pred.answer.endswith("?")


def test_unanswerable_can_route_to_clarification_like_the_seed_system(retriever, use_dummy_lm):
    use_dummy_lm([Q, _label("UNANSWERABLE"), {"options": ["a", "b"], "clarifying_question": "Which one?"}])
    pred = _program(retriever, iterations=1, reranker=False, unanswerable_route="clarify")(conversation="q?")
    assert pred.route == "clarify"


def test_zero_passages_short_circuit_to_idk_without_classifier_call(empty_retriever, use_dummy_lm):
    lm = use_dummy_lm([Q])
    pred = _program(empty_retriever, iterations=1)(conversation="What is the parking fee?")
    assert pred.route == "idk" and pred.label == "UNANSWERABLE" and pred.answer == IDK_MESSAGE
    assert len(lm.history) == 1  # only the query generator ran


def test_everything_switched_off_is_plain_rag(retriever, use_dummy_lm):
    lm = use_dummy_lm([Q, COMPLETE])
    pred = _program(retriever, iterations=1, build=False, reranker=False, router=False)(conversation="Lab fee?")
    assert pred.route == "answer" and pred.label is None and len(lm.history) == 2


def test_notes_off_means_no_notes_builder_and_empty_notes(retriever, use_dummy_lm):
    lm = use_dummy_lm([Q, {"queries": ["another query"]}, COMPLETE])
    _program(retriever, iterations=2, build=False, reranker=False, router=False)(conversation="Lab fee?")
    prompts = _prompts(lm)
    assert len(prompts) == 3 and "key_findings" not in "".join(prompts)
    assert "[[ ## notes ## ]]\n\n\n" in prompts[1]  # round two's generator got empty notes


def test_repeated_queries_are_not_searched_again(retriever, use_dummy_lm):
    use_dummy_lm([Q, NOTES, Q, COMPLETE])  # round two repeats round one's queries exactly
    pred = _program(retriever, iterations=2, reranker=False, router=False)(conversation="Lab fee?")
    assert len(retriever.calls) == 1 and len(pred.queries) == 1


def test_unparseable_reply_is_retried_then_a_scored_failure(retriever, use_dummy_lm):
    lm = use_dummy_lm([{"wrong_field": "x"}, {"wrong_field": "y"}])
    pred = _program(retriever, iterations=1)(conversation="Lab fee?")
    assert pred.route == "error" and "query_generator" in pred.answer and len(lm.history) == 2


def test_unparseable_reply_recovers_on_retry(retriever, use_dummy_lm):
    use_dummy_lm([{"wrong_field": "x"}, Q, COMPLETE])
    pred = _program(retriever, iterations=1, reranker=False, router=False)(conversation="Lab fee?")
    assert pred.route == "answer"


def test_multi_turn_history_reaches_the_steps(retriever, use_dummy_lm):
    lm = use_dummy_lm([Q, _label("ANSWERABLE"), COMPLETE])
    turns = [{"role": "user", "content": "What does tuition cost?"}, {"role": "assistant", "content": "EUR 4,200 per semester."},
             {"role": "user", "content": "And for part-time students?"}]
    _program(retriever, iterations=1, reranker=False)(conversation=turns)
    for prompt in _prompts(lm):
        assert "assistant: EUR 4,200 per semester." in prompt


def test_huge_question_is_cut_and_reported(retriever, use_dummy_lm):
    use_dummy_lm([Q, _label("ANSWERABLE"), COMPLETE])
    pred = _program(retriever, iterations=1, reranker=False)(conversation="fee " * 25_000)
    assert pred.route == "answer" and "cut from 100000 to 4000" in pred.warnings[0]
    assert all(len(q) <= 4000 for q in pred.queries[0])


@pytest.mark.parametrize("conversation", ["", "   ", [], [{"role": "assistant", "content": "hi"}]])
def test_empty_or_userless_conversation_is_refused(retriever, conversation):
    with pytest.raises(ConversationError):
        _program(retriever)(conversation=conversation)


def test_reranker_only_reorders(use_dummy_lm, retriever):
    use_dummy_lm([{"ranked_ids": ["course-cs201", "nope", "course-cs201"]}])
    out = ListwiseReranker()(question="prereq?", passages=retriever.passages)
    assert [p.passage_id for p in out.passages] == ["course-cs201", "fees-lab", "fees-registration"]


def test_numeric_looking_answers_stay_text(retriever, use_dummy_lm):
    """Regression: a non-``str`` text annotation made DSPy literal-eval "4,200" into the tuple (4, 200)."""
    use_dummy_lm([Q, {"answer": "4,200", "cited_ids": ["fees-lab"]}])
    pred = _program(retriever, iterations=1, reranker=False, router=False)(conversation="Tuition?")
    assert pred.route == "answer" and pred.answer == "4,200"
