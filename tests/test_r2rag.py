"""R2RAG on a DummyLM: the router both ways, vanilla RAG's budget, the agent's three stops and its refusal of a used query."""

import pytest

from askfirst.config import load_config
from askfirst.programs.r2rag.program import R2RAGProgram
from askfirst.programs.r2rag.steps import fill_budget
from tests.conftest import PASSAGES, ListRetriever

ANSWER = {"enough_information": True, "answer": "The lab fee is EUR 85 [fees-lab].", "cited_ids": ["fees-lab", "made-up"]}


def program(*overrides, retriever=None):
    config = load_config(overrides=list(overrides))
    return R2RAGProgram(retriever or ListRetriever(), config.r2rag, config.program, retries=0)


def judged(*relevant):
    """Pointwise judgements for the three conftest passages, in retrieval order."""
    return [{"relevant": r, "confidence": 0.9} for r in relevant]


def test_simple_route_answers_from_reranked_budgeted_evidence(use_dummy_lm):
    retriever = ListRetriever()
    use_dummy_lm([{"complexity": "simple", "reason": "one fact"}, {"variants": ["laboratory fee", "lab course cost"]},
                  *judged(False, True, False), ANSWER])
    reply = program(retriever=retriever)(conversation="How much is the lab fee?")
    assert reply.route == "answer" and reply.stage == "simple" and reply.router_reason == "one fact"
    assert retriever.calls == [["How much is the lab fee?", "laboratory fee", "lab course cost"]]
    assert [p.passage_id for p in reply.evidence][0] == "fees-registration"  # the one judged relevant goes first
    assert reply.citations == ["fees-lab"]  # an id it was not shown is dropped
    assert reply.relevance["fees-registration"] == pytest.approx(0.9) and reply.relevance["fees-lab"] == pytest.approx(0.1)
    assert reply.to_record()["extras"]["stage"] == "simple"


def test_not_enough_information_is_the_idk_route(use_dummy_lm):
    use_dummy_lm([{"variants": []}, *judged(True, True, True), {"enough_information": False, "answer": "", "cited_ids": []}])
    reply = program("r2rag.router=simple")(conversation="Who founded the university?")
    assert reply.route == "idk" and reply.stage == "simple" and "forced" in reply.router_reason


def test_the_evidence_budget_keeps_passages_in_rank_order():
    assert fill_budget(PASSAGES, 30, passage_chars=400) == PASSAGES[:1]  # the first always goes in
    assert fill_budget(PASSAGES, 10_000, passage_chars=400) == PASSAGES


def test_complex_route_stops_when_the_reviewer_says_sufficient(use_dummy_lm):
    use_dummy_lm([{"complexity": "complex", "reason": "two parts"}, {"variants": []}, *judged(True, True, False),
                  {"useful_ids": ["fees-lab", "fees-registration"], "summary": "fees", "is_sufficient": True, "new_query": []}, ANSWER])
    reply = program()(conversation="What are the lab and registration fees?")
    assert reply.stage == "complex" and reply.iterations == 1 and reply.stop == "sufficient"
    assert {p.passage_id for p in reply.evidence} == {"fees-lab", "fees-registration"} and reply.route == "answer"


def test_not_sufficient_without_a_new_query_counts_as_sufficient(use_dummy_lm):
    use_dummy_lm([{"variants": []}, *judged(True, False, False),
                  {"useful_ids": ["fees-lab"], "summary": "lab fee", "is_sufficient": False, "new_query": [" "]}, ANSWER])
    reply = program("r2rag.router=complex")(conversation="What are the fees?")
    assert reply.iterations == 1 and reply.stop == "not sufficient, but no new query"


def test_the_agent_stops_at_the_iteration_cap(use_dummy_lm):
    passages = [PASSAGES[0].__class__(f"p{i}", f"p{i}", f"T{i}", f"text {i}") for i in range(6)]
    rounds = []
    for i in range(2):
        rounds += [{"variants": []}, {"relevant": True, "confidence": 0.8}, {"relevant": True, "confidence": 0.8},
                   {"useful_ids": [f"p{2 * i}"], "summary": f"s{i}", "is_sufficient": False, "new_query": [f"query {i}"]}]
    use_dummy_lm([*rounds, ANSWER])
    reply = program("r2rag.router=complex", "r2rag.max_iterations=2", "r2rag.rerank_candidates=2", "r2rag.review_passages=2",
                    retriever=ListRetriever(passages))(conversation="A long multi-step question?")
    assert reply.iterations == 2 and reply.stop == "iteration cap"
    assert [p.passage_id for p in reply.evidence] == ["p0", "p2"]  # the second round saw only passages it had not seen
    assert reply.queries == ["A long multi-step question?", "query 0"]


def test_the_agent_stops_on_the_evidence_budget(use_dummy_lm):
    use_dummy_lm([{"variants": []}, *judged(True, True, True),
                  {"useful_ids": ["fees-lab", "fees-registration", "course-cs201"], "summary": "all", "is_sufficient": False,
                   "new_query": ["more"]}, ANSWER])
    reply = program("r2rag.router=complex", "r2rag.agent_evidence_tokens=50")(conversation="Everything about fees?")
    assert reply.stop == "evidence budget reached" and reply.iterations == 1


def test_the_agent_refuses_a_query_it_already_used(use_dummy_lm):
    use_dummy_lm([{"variants": ["lab fee"]}, *judged(True, False, False),
                  {"useful_ids": ["fees-lab"], "summary": "lab", "is_sufficient": False, "new_query": ["LAB FEE"]}, ANSWER])
    reply = program("r2rag.router=complex")(conversation="Fees for the lab?")
    assert reply.stop.startswith("repeated query refused") and reply.iterations == 1 and reply.queries == ["Fees for the lab?", "lab fee"]


def test_a_question_with_nothing_retrieved_is_idk_without_an_answer_call(use_dummy_lm):
    lm = use_dummy_lm([{"variants": []}])
    reply = program("r2rag.router=simple", retriever=ListRetriever([]))(conversation="Anything?")
    assert reply.route == "idk" and len(lm.history) == 1
