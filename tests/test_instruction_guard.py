"""The instruction guard: candidates the offline 1.5B proposed (MIPROv2, 2026-11-27) that are no instruction."""

import inspect

import dspy
import pytest
from dspy.propose.grounded_proposer import GroundedProposer

from askfirst.config import load_config
from askfirst.optimizers.factory import build_optimizer
from askfirst.optimizers.instruction_guard import GuardedMIPROv2, guarded, not_an_instruction
from askfirst.optimizers.objectives import build_objective

CLARIFY = ("The user's question is ambiguous: it could refer to several different things in the passages. Ask one short "
           "clarifying question that lists the concrete options the passages reveal, so the user can pick one (for example: "
           "\"Do you mean the single fare, the day pass or the monthly pass?\").")


@pytest.mark.parametrize("text, reason", [
    ("Please provide the latest question for me to answer using ONLY the provided passages and the conversation.", "written to the user"),
    ("I'm sorry, but I cannot generate a new instruction without additional information. Can you please provide me with more "
     "context or the latest question you are trying to answer?", "written to the user"),
    ("What is the name of the pass that you are purchasing? (single fare, day pass, monthly pass)", "a question to the user"),
    ("Could you please clarify what specific fare options are available in this passage?", "written to the user"),
    ("none", "under 5 words"),
])
def test_replies_to_the_user_are_no_instruction(text, reason):
    assert not_an_instruction(text) == reason


@pytest.mark.parametrize("text", [
    CLARIFY,  # its example question is quoted
    "Rewrite the user's latest question so that it can be understood without the conversation, resolving pronouns and "
    "references such as 'it', 'that route', 'the second one'.",
    "You are a language model that can generate answers based on passages provided.",
])
def test_instructions_pass(text):
    assert not_an_instruction(text) is None


def test_guarded_keeps_the_original_and_the_instructions():
    candidates = {0: ["Answer from the passages.", "Please provide the question.", "Answer only from the passages, citing each."],
                  1: [CLARIFY, "What is the name of the pass you want?"]}
    assert guarded(candidates, ["complete", "clarify"]) == {0: ["Answer from the passages.", "Answer only from the passages, citing each."],
                                                           1: [CLARIFY]}
    assert guarded({0: ["none"]}, ["step"]) == {0: ["none"]}  # the original stays, whatever it is


class TwoSteps(dspy.Module):
    def __init__(self):
        super().__init__()
        self.first = dspy.Predict("question -> answer")
        self.second = dspy.Predict("answer -> reply")


def test_mipro_calls_the_guard_with_candidates_by_predictor(monkeypatch, tmp_path, schema_lm):
    # The guard overrides a private MIPROv2 method: this runs DSPy's own one under it (only the proposer's LM calls are
    # replaced), so a DSPy upgrade that renames it, changes its arguments or the candidates' shape fails here.
    proposed = {0: ["Answer.", "Please provide the question."], 1: ["Reply.", "Reply in one sentence to the reader."]}
    monkeypatch.setattr(GroundedProposer, "propose_instructions_for_program", lambda self, **kwargs: proposed)
    cfg = load_config(overrides=["compile.optimizer=miprov2", "compile.auto=null", "compile.max_demos=0"]).compile
    with dspy.context(lm=schema_lm()):
        optimizer = build_optimizer(cfg, build_objective("outcome"), reflection_lm=schema_lm(), log_dir=tmp_path)
    assert isinstance(optimizer, GuardedMIPROv2)
    program = TwoSteps()
    kept = optimizer._propose_instructions(program, [dspy.Example(question="q", answer="a").with_inputs("question")], None,
                                           10, False, False, False, False, num_instruct_candidates=2)
    assert kept == {0: [program.first.signature.instructions], 1: [program.second.signature.instructions, "Reply in one sentence to the reader."]}
    assert "self._propose_instructions(" in inspect.getsource(dspy.MIPROv2.compile)
    unguarded = load_config(overrides=["compile.optimizer=miprov2", "compile.instruction_guard=false"]).compile
    with dspy.context(lm=schema_lm()):
        assert type(build_optimizer(unguarded, build_objective("outcome"), reflection_lm=schema_lm(), log_dir=tmp_path)) is dspy.MIPROv2
