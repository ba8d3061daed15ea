"""MIPROv2's instruction candidates: the guard (on what the offline 1.5B proposed, 2026-11-27) and a file of candidates."""

import inspect

import dspy
import pytest
from dspy.propose.grounded_proposer import GroundedProposer
from dspy.utils.exceptions import ContextWindowExceededError

from askfirst.config import ConfigError, load_config
from askfirst.datasets.questions import load_questions
from askfirst.optimizers.compile import compile_program, split_by_conversation
from askfirst.optimizers.factory import build_optimizer
from askfirst.optimizers.instruction_candidates import CandidateMIPROv2, guarded, not_an_instruction, read_candidates
from askfirst.optimizers.objectives import build_objective
from tests.test_compile import SCRIPT, _program

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


def _mipro(tmp_path, schema_lm, *overrides, candidates=None):
    cfg = load_config(overrides=["compile.optimizer=miprov2", "compile.auto=null", "compile.max_demos=0", *overrides]).compile
    with dspy.context(lm=schema_lm()):  # MIPROv2's task model
        return build_optimizer(cfg, build_objective("outcome"), reflection_lm=schema_lm(), log_dir=tmp_path, candidates=candidates)


def _proposed(optimizer, program):
    """DSPy's own ``_propose_instructions`` under the override, with only the proposer's LM calls replaced."""
    return optimizer._propose_instructions(program, [dspy.Example(question="q", answer="a").with_inputs("question")], None,
                                           10, False, False, False, False, num_instruct_candidates=2)


PROPOSED = {0: ["Answer.", "Please provide the question."], 1: ["Reply.", "Reply in one sentence to the reader."]}


def test_mipro_runs_the_guard_on_its_own_candidates(monkeypatch, tmp_path, schema_lm):
    # The override replaces a private MIPROv2 method: a DSPy upgrade that renames it, changes its arguments or the
    # candidates' shape fails here.
    monkeypatch.setattr(GroundedProposer, "propose_instructions_for_program", lambda self, **kwargs: {i: list(t) for i, t in PROPOSED.items()})
    program = TwoSteps()
    first, second = program.first.signature.instructions, program.second.signature.instructions
    assert _proposed(_mipro(tmp_path, schema_lm), program) == {0: [first], 1: [second, "Reply in one sentence to the reader."]}
    assert _proposed(_mipro(tmp_path, schema_lm, "compile.instruction_guard=false"), program) == {
        0: [first, "Please provide the question."], 1: [second, "Reply in one sentence to the reader."]}
    assert "self._propose_instructions(" in inspect.getsource(dspy.MIPROv2.compile)


def test_a_file_adds_candidates_to_the_steps_it_names(monkeypatch, tmp_path, schema_lm):
    monkeypatch.setattr(GroundedProposer, "propose_instructions_for_program", lambda self, **kwargs: {i: list(t) for i, t in PROPOSED.items()})
    path = tmp_path / "candidates.yaml"
    path.write_text("second:\n  - Reply in one sentence to the reader.\n  - Reply with the answer's number only?\n")
    optimizer = _mipro(tmp_path, schema_lm, candidates=read_candidates(path, ["first", "second"]))  # as compile_program reads it
    program = TwoSteps()
    # A file's own candidates are not guarded (a researcher wrote them), and one the prompt model also proposed is kept once.
    assert _proposed(optimizer, program)[1] == [program.second.signature.instructions, "Reply in one sentence to the reader.",
                                                "Reply with the answer's number only?"]


@pytest.mark.parametrize("text, error", [
    ("thrid: [Answer.]\n", "names steps the program does not have: thrid \\(its steps: first, second\\)"),
    ("first: Answer.\n", "'first' must be a non-empty list of non-empty strings"),
    ("- Answer.\n", "must map step names to lists of instructions"),
    ("first: [Answer.\n", "is not valid YAML"),
])
def test_a_bad_file_names_itself_and_what_is_wrong(tmp_path, text, error):
    path = tmp_path / "candidates.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=error):
        read_candidates(path, ["first", "second"])


def test_a_missing_or_unreadable_file_names_itself(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        read_candidates(tmp_path / "missing.yaml", ["first"])
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match="binary.yaml cannot be read"):
        read_candidates(binary, ["first"])


def _compile_with(tmp_path, retriever, lm, schema_lm, path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    config = load_config(overrides=[f"runs_dir={tmp_path}", "compile.optimizer=miprov2", "compile.auto=null", "compile.num_trials=1",
                                     "compile.num_candidates=1", "compile.max_demos=0", "compile.objective=outcome",
                                     f"compile.instruction_candidates={path}"])
    train, val = split_by_conversation([e for e in load_questions("demo") if e.answerability == "ANSWERABLE"][:6], train_fraction=0.5)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        compile_program(_program(retriever), train, val, config=config, reflection_lm=schema_lm(), run_dir=run_dir)
    return run_dir


def test_a_bad_file_fails_before_any_lm_call(tmp_path, retriever, schema_lm):
    path = tmp_path / "candidates.json"
    path.write_text('{"thrid": ["Answer."]}')
    lm = schema_lm(SCRIPT)
    with pytest.raises(ConfigError, match="thrid"):
        _compile_with(tmp_path, retriever, lm, schema_lm, path)
    assert lm.engine.calls == 0


def test_candidates_need_miprov2(tmp_path, schema_lm):
    cfg = load_config(overrides=["compile.optimizer=gepa", "compile.instruction_candidates=x.yaml"]).compile
    with pytest.raises(ConfigError, match="needs compile.optimizer=miprov2, not gepa"):
        build_optimizer(cfg, build_objective("outcome"), reflection_lm=schema_lm(), log_dir=tmp_path)
    assert isinstance(_mipro(tmp_path, schema_lm), CandidateMIPROv2)


def test_the_run_folder_keeps_the_candidates_it_read(tmp_path, retriever, schema_lm):
    path = tmp_path / "candidates.yaml"
    path.write_text("responders.complete:\n  - Answer from the passages in one sentence, citing each one used.\n")
    run_dir = _compile_with(tmp_path, retriever, schema_lm(SCRIPT), schema_lm, path)
    assert (run_dir / "instruction_candidates.yaml").read_text() == path.read_text()


def test_a_prompt_model_too_small_for_the_proposer_context_is_a_clear_error(monkeypatch, tmp_path, schema_lm):
    def overflow(self, **kwargs):
        raise ContextWindowExceededError(model="local/qwen", message="Requested tokens (10002) exceed context window of 8192")

    monkeypatch.setattr(GroundedProposer, "propose_instructions_for_program", overflow)
    with pytest.raises(ConfigError, match=r"10002.*Leave 'program' \(the program's source\) or 'data' out of compile.proposer_context"):
        _proposed(_mipro(tmp_path, schema_lm), TwoSteps())
