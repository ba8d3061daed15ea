"""CLARION's planning and acting paths driven by DummyLM, and the ambiguity metrics on hand-made cases."""

import pytest

from askfirst.programs.base import Resources
from askfirst.config import ProgramConfig
from askfirst.programs.clarion.config import ClarionConfig
from askfirst.evaluation.ambiguity_metrics import disambig_f1, str_em
from askfirst.programs.clarion.program import UNRESOLVED, ClarionProgram

AMBIGUOUS = {"is_ambiguous": True, "ambiguity_type": "semantic", "ambiguous_aspects": ["which fee"], "clarification_needed": "the fee type"}
CLEAR = {"is_ambiguous": False, "ambiguity_type": "none", "ambiguous_aspects": [], "clarification_needed": ""}
CLARIFIED = {"clarified_queries": ["How much is the lab fee?", "How much is the registration fee?"]}


def act(action, number=1, argument=""):
    return {"action": action, "interpretation_number": number, "argument": argument}


def _program(retriever, **cfg):
    return ClarionProgram(retriever, ClarionConfig(**cfg), ProgramConfig(), retries=0)


def test_plan_search_plan_answer(retriever, use_dummy_lm):
    lm = use_dummy_lm([AMBIGUOUS, CLARIFIED, act("SEARCH", 1, "laboratory fee amount"), act("PLAN", argument="How much is the late fee?"),
                       act("ANSWER"), {"short_answers": ["EUR 85", "EUR 60", "EUR 40"], "long_answer": "Lab EUR 85; registration EUR 60."}])
    pred = _program(retriever)(conversation="How much is the fee?")
    assert pred.route == "answer" and pred.ambiguity_type == "semantic"
    assert pred.interpretations == ["How much is the lab fee?", "How much is the registration fee?", "How much is the late fee?"]
    # Only interpretation 1 got evidence: the others are unresolved whatever the writer claimed.
    assert pred.short_answers == ["EUR 85", UNRESOLVED, UNRESOLVED]
    # The planner first looked at what the collection holds on the question itself (grounded planning).
    assert retriever.calls == [["How much is the fee?"], ["laboratory fee amount"]] and len(lm.history) == 6
    assert "fees-lab" in lm.history[0]["messages"][-1]["content"]
    assert pred.trace[0].startswith("SEARCH[laboratory fee amount] for 1") and pred.trace[1].startswith("PLAN[")


def test_budget_exhaustion_forces_the_answer(retriever, use_dummy_lm):
    searches = [act("SEARCH", 1, f"query {i}") for i in range(2)]
    lm = use_dummy_lm([CLEAR, *searches, {"short_answers": ["EUR 85"], "long_answer": "EUR 85."}])
    pred = _program(retriever, max_iterations=3)(conversation="Lab fee?")
    assert pred.route == "answer" and len(retriever.calls) == 3 and len(lm.history) == 4  # planning view, 2 acting steps, then ANSWER


def test_duplicate_search_is_suppressed(retriever, use_dummy_lm):
    use_dummy_lm([CLEAR, act("SEARCH", 1, "lab fee"), act("SEARCH", 1, "Lab Fee"), act("ANSWER"), {"short_answers": ["EUR 85"], "long_answer": "EUR 85."}])
    pred = _program(retriever)(conversation="Lab fee?")
    assert len(retriever.calls) == 2 and "suppressed" in pred.trace[1]  # the planning view and one search


def test_unambiguous_question_goes_straight_to_acting(retriever, use_dummy_lm):
    lm = use_dummy_lm([CLEAR, act("ANSWER")])
    pred = _program(retriever)(conversation="What is the lab fee?")
    assert pred.interpretations == ["What is the lab fee?"] and pred.route == "idk"  # answered with no evidence: not guessed
    assert len(lm.history) == 2  # no clarification call, no writer call


def test_ask_first_returns_the_readings(retriever, use_dummy_lm):
    use_dummy_lm([AMBIGUOUS, CLARIFIED])
    pred = _program(retriever, mode="ask_first")(conversation="How much is the fee?")
    assert pred.route == "clarify" and pred.options == CLARIFIED["clarified_queries"]
    assert pred.answer.endswith("How much is the lab fee; or How much is the registration fee?")
    assert retriever.calls == [["How much is the fee?"]]  # only the planner's look at the collection, no acting


@pytest.mark.parametrize(("switches", "calls_before_acting"), [({"detection": False}, 0), ({"clarification": False}, 1)])
def test_ablations(retriever, use_dummy_lm, switches, calls_before_acting):
    lm = use_dummy_lm(([AMBIGUOUS] if calls_before_acting else []) + [act("ANSWER")])
    pred = _program(retriever, **switches)(conversation="How much is the fee?")
    assert pred.interpretations == ["How much is the fee?"] and len(lm.history) == calls_before_acting + 1


def test_ambiguity_metrics():
    long_answer = "The 1998 film was directed by John Smith, while the 2005 remake was directed by Ann Lee."
    assert str_em(long_answer, [["John Smith"], ["Ann Lee", "Annie Lee"], ["Bob Ray"]]) == pytest.approx(2 / 3)
    assert str_em("x", []) == 0.0
    answers = {"Who directed the 1998 film?": "John Smith", "Who directed the 2005 remake?": "Lee"}
    f1 = disambig_f1(long_answer, [(q, [a]) for q, a in [("Who directed the 1998 film?", "John Smith"), ("Who directed the 2005 remake?", "Ann Lee")]],
                     extract=lambda q, _: answers[q])
    assert f1 == pytest.approx((1.0 + 2 * 1 * 0.5 / 1.5) / 2)


def test_plugs_into_the_same_factory_and_eval_records(retriever, use_dummy_lm):
    import dspy

    from askfirst.config import load_config
    from askfirst.evaluation.runner import prediction_record
    from askfirst.programs.registry import build_program

    program = build_program(load_config(overrides=["program.kind=clarion", "clarion.mode=ask_first"]), Resources(retriever=retriever))
    assert isinstance(program, ClarionProgram) and program.config.mode == "ask_first"
    use_dummy_lm([CLEAR, act("SEARCH", 1, "lab fee"), act("ANSWER"), {"short_answers": ["EUR 85"], "long_answer": "The lab fee is EUR 85."}])
    pred = program(conversation="Lab fee?")
    rec = prediction_record(dspy.Example(id="x", conversation=[{"role": "user", "content": "Lab fee?"}]), pred, seconds=0, lm_calls=4)
    assert rec["route"] == "answer" and rec["retrieved_docs"][0] == "fees-lab" and rec["citations"]


def test_ungrounded_planning_reads_only_the_query(retriever, use_dummy_lm):
    lm = use_dummy_lm([CLEAR, act("ANSWER")])
    _program(retriever, grounded_planning=False)(conversation="What is the lab fee?")
    assert retriever.calls == [] and "fees-lab" not in lm.history[0]["messages"][-1]["content"]


def test_decomposition_orders_the_hops_of_each_reading(retriever, use_dummy_lm):
    hops = {"sub_queries": ["Who directed Inception?", "Where was that director born?"]}
    lm = use_dummy_lm([CLEAR, hops, act("SEARCH", 1, "Inception director"), act("ANSWER"),
                       {"short_answers": ["London"], "long_answer": "Christopher Nolan was born in London."}])
    pred = _program(retriever, decomposition=True)(conversation="Where was the director of Inception born?")
    assert pred.route == "answer" and len(lm.history) == 5  # detect, decompose once (then reused), act, act, write
    assert "Who directed Inception? -> Where was that director born?" in lm.history[2]["messages"][-1]["content"]
