"""The composed askfirst program on a scripted LM: every stage and switch."""

import dspy
import pytest

from askfirst.config import load_config
from askfirst.programs.askfirst.program import divergent_options
from askfirst.programs.base import Resources
from askfirst.programs.registry import Registry
from tests.conftest import PASSAGES, ListRetriever

ANSWERABLE = {"answering_sentences": ["A laboratory fee of EUR 85 [fees-lab]"], "label": "ANSWERABLE", "confidence": 0.9}
UNANSWERABLE = {"answering_sentences": [], "label": "UNANSWERABLE", "confidence": 0.9}


def by_passage(text: str) -> dict:
    """Each fee passage answers 'the fee' with its own amount; the course passage does not answer."""
    if "laboratory" in text.lower():
        return {"answer": "EUR 85"}
    if "registration" in text.lower():
        return {"answer": "EUR 60"}
    return {"answer": "none"}


def scripted(**overrides):
    base = {
        "standalone_question": {"standalone_question": "How much is the laboratory fee?"},
        "complexity": {"complexity": "simple", "reason": "one fact"},
        "queries": {"queries": ["lab fee"]},
        "is_ambiguous": {"is_ambiguous": False, "ambiguity_type": "none", "ambiguous_aspects": [], "clarification_needed": ""},
        "cited_ids": {"answer": "The lab fee is EUR 85.", "cited_ids": ["fees-lab"]},
        "answer": by_passage,
        "label": ANSWERABLE,
        "expansions": {"expansions": ["laboratory charge"]},
        "clarifying_question": {"clarifying_question": "Which fee do you mean?", "options": ["lab", "registration"]},
    }
    return base | overrides


def run(schema_lm, question, *overrides, script=None, retriever=None):
    retriever = retriever or ListRetriever()
    config = load_config(overrides=["program.kind=askfirst", "program.reranker=false", "program.iterations=1", *overrides])
    program = Registry(Resources(retriever=retriever)).build("askfirst", config)
    lm = schema_lm(script or scripted())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        return program(conversation=question), program, retriever, lm


def test_diverging_evidence_asks_first_naming_the_documents(schema_lm):
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.ambiguity=either")
    assert reply.route == "clarify" and reply.options == ["Laboratory fee", "Registration fee"]
    assert "Laboratory fee" in reply.answer and reply.ambiguity["divergence"]["diverges"] and not reply.ambiguity["detector"]["ambiguous"]


def test_both_signals_needed_when_configured_so(schema_lm):
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.ambiguity=both")
    assert reply.route == "answer" and reply.citations == ["fees-lab"] and reply.ambiguity["ambiguous"] is False


def test_the_detector_alone_asks_with_its_aspects(schema_lm):
    detector = {"is_ambiguous": True, "ambiguity_type": "semantic", "ambiguous_aspects": ["lab fee", "registration fee"],
                "clarification_needed": "which fee"}
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.ambiguity=detector", script=scripted(is_ambiguous=detector))
    assert reply.route == "clarify" and reply.options == ["lab fee", "registration fee"] and "divergence" not in reply.ambiguity


@pytest.mark.parametrize("setting", ["askfirst.ambiguity=off", "askfirst.mode=answer_all"])
def test_no_asking_when_switched_off_or_answering_all(schema_lm, setting):
    reply, program, _, _ = run(schema_lm, "How much is the fee?", setting)
    assert reply.route == "answer"
    names = {n.split(".")[0] for n, _ in program.named_predictors()}
    assert ("candidate" in names) == (setting != "askfirst.ambiguity=off") and "detect" not in names  # the default: divergence alone


def test_a_follow_up_is_made_standalone_before_retrieval(schema_lm):
    turns = [{"role": "user", "content": "Tell me about lab courses."}, {"role": "assistant", "content": "They carry an L suffix."},
             {"role": "user", "content": "How much is its fee?"}]
    reply, _, retriever, _ = run(schema_lm, turns, "askfirst.ambiguity=off")
    assert reply.standalone_query == "How much is the laboratory fee?" and retriever.calls[0] == ["How much is the laboratory fee?"]
    reply, _, retriever, _ = run(schema_lm, turns, "askfirst.ambiguity=off", "askfirst.standalone=false")
    assert retriever.calls[0] == ["How much is its fee?"]


def test_the_router_sends_complex_questions_through_the_notes_loop(schema_lm):
    reply, _, retriever, _ = run(schema_lm, "Compare the lab and registration fees.", "askfirst.ambiguity=off",
                                 script=scripted(complexity={"complexity": "complex", "reason": "two parts"}))
    assert reply.stage == "complex" and "lab fee" in retriever.calls[0]  # the query generator's query was searched
    reply, program, retriever, _ = run(schema_lm, "Lab fee?", "askfirst.ambiguity=off", "askfirst.complexity_router=simple")
    assert reply.stage == "simple" and retriever.calls == [["Lab fee?"]] and program.router is None


def test_an_unsure_idk_escalates_with_an_expanded_query(schema_lm):
    labels = iter([UNANSWERABLE, ANSWERABLE])
    reply, _, retriever, _ = run(schema_lm, "Lab fee?", "askfirst.ambiguity=off", script=scripted(label=lambda _: next(labels)))
    assert reply.escalated and reply.route == "answer" and retriever.calls[-1] == ["Lab fee?", "Lab fee? laboratory charge"]
    reply, *_ = run(schema_lm, "Lab fee?", "askfirst.ambiguity=off", "askfirst.escalation=false", script=scripted(label=UNANSWERABLE))
    assert reply.route == "idk" and not reply.escalated


def test_the_stages_are_the_notes_programs_modules_composed_through_the_registry(schema_lm):
    _, program, _, _ = run(schema_lm, "Lab fee?", "askfirst.ambiguity=off")
    names = {n for n, _ in program.named_predictors()}
    assert {"rewrite", "router", "retrieval.query_generator", "classifier.classify", "responders.complete", "expand"} <= names


def test_divergence_needs_two_documents_and_two_answers():
    a, b, c = PASSAGES
    assert divergent_options([(a, "EUR 85"), (b, "EUR 60"), (c, "none")]) == ["Laboratory fee", "Registration fee"]
    assert divergent_options([(a, "EUR 85"), (b, "eur 85."), (c, "none")]) == []  # the same answer, normalised
    chunk = a.__class__("fees-lab#1", "fees-lab", "Laboratory fee", "more")
    assert divergent_options([(a, "EUR 85"), (chunk, "EUR 80")]) == []  # two chunks of one document never diverge
    cs201, cs310 = (a.__class__(f"course-cs{n}", f"course-cs{n}", f"CS {n} {name}", "") for n, name in ((201, "Data Structures"), (310, "Machine Learning")))
    assert divergent_options([(cs201, "CS 101"), (cs310, "CS 201")], "What is the prerequisite for CS 201?") == []  # it names one
    assert divergent_options([(cs201, "CS 101"), (cs310, "CS 201")], "What are the prerequisites for the course?") == [cs201.title, cs310.title]
    assert divergent_options([(a, "EUR 85"), (b, "EUR 60")], "How much is the fee?") == ["Laboratory fee", "Registration fee"]
