"""Compile wiring: GEPA and MIPROv2 built from config, the whole program optimised, saved as JSON, loaded back."""

import json

import dspy
import pytest

from askfirst.config import ConfigError, load_config
from askfirst.datasets.questions import load_questions
from askfirst.optimizers.compile import compile_program, load_compiled, save_compiled, split_by_conversation
from askfirst.optimizers.curves import instructions
from askfirst.optimizers.demo_selection import interleaved_by_label, labels_agree, scored_with_demos
from askfirst.optimizers.factory import build_optimizer, mipro_proposer_options
from askfirst.optimizers.objectives import MeanOfMetrics, build_objective
from askfirst.programs.notes_rag.config import NotesConfig
from askfirst.programs.notes_rag.program import IterativeNotesRAG

SCRIPT = {
    "queries": {"queries": ["tuition fee amount"]},
    "label": {"answering_sentences": ["Tuition is EUR 4,200 [fees-lab]"], "label": "ANSWERABLE", "confidence": 0.8},
    "cited_ids": {"answer": "It is EUR 4,200.", "cited_ids": ["fees-lab"]},
}


def _program(retriever):
    return IterativeNotesRAG(retriever, NotesConfig(iterations=1, reranker=False), retries=0)


def test_split_keeps_conversations_whole_and_is_stable():
    examples = [dspy.Example(id=f"q{i}", conversation_id=f"c{i // 3}") for i in range(60)]
    train, val = split_by_conversation(examples, train_fraction=0.5, seed=1)
    assert {e.conversation_id for e in train}.isdisjoint({e.conversation_id for e in val})
    assert len(train) + len(val) == 60 and train and val
    assert split_by_conversation(list(reversed(examples)), train_fraction=0.5, seed=1)[0] == list(reversed(train))
    with pytest.raises(ValueError, match="non-empty"):
        split_by_conversation(examples[:1], train_fraction=0.5)


def test_the_data_halves_do_not_move_with_the_compiles_train_fraction():
    from askfirst.datasets.splits import configured_questions

    # A compile on the training half with train_fraction 0.75 once saw 60 of 80 tasks: validation questions among them.
    halves = {f: {s: [e.id for e in configured_questions(load_config(overrides=[f"compile.train_fraction={f}"]), split=s)]
                  for s in ("train", "validation")} for f in (0.5, 0.75)}
    assert halves[0.5] == halves[0.75]
    assert halves[0.5]["train"] and not set(halves[0.5]["train"]) & set(halves[0.5]["validation"])


def test_offset_and_limit_cut_a_shuffled_set_into_chunks_that_cover_it_once():
    from askfirst.datasets.splits import configured_questions

    def ids(*overrides):
        return [e.id for e in configured_questions(load_config(overrides=["data.shuffle=true", *overrides]))]

    whole = ids()
    chunks = ids("data.limit=10") + ids("data.offset=10", "data.limit=7") + ids("data.offset=17")
    assert chunks == whole and len(set(whole)) == len(whole) > 17


def test_objective_both_is_the_mean(retriever):
    metric = build_objective("both", recall_k=5)
    assert isinstance(metric, MeanOfMetrics) and metric.name == "mean(recall@5,outcome)"


def test_the_gated_recall_objective_is_the_rewrite_demo_searchs_only():
    with pytest.raises(ConfigError, match="compile.optimizer=rewrite_demos"):
        build_objective("gated_recall")


def test_gepa_needs_exactly_one_budget(tmp_path, schema_lm):
    cfg = load_config(overrides=["compile.auto=null"]).compile
    with pytest.raises(ValueError, match="exactly one budget"):
        build_optimizer(cfg, build_objective("recall"), reflection_lm=schema_lm(), log_dir=tmp_path)
    both = load_config(overrides=["compile.auto=null", "compile.max_metric_calls=5", "compile.max_full_evals=1"]).compile
    with pytest.raises(ValueError, match="exactly one budget"):
        build_optimizer(both, build_objective("recall"), reflection_lm=schema_lm(), log_dir=tmp_path)


@pytest.mark.parametrize("overrides", [
    ["compile.optimizer=gepa", "compile.auto=null", "compile.max_metric_calls=12", "compile.objective=both"],
    ["compile.optimizer=miprov2", "compile.auto=null", "compile.num_trials=2", "compile.num_candidates=2", "compile.objective=outcome"],
    ["compile.optimizer=miprov2", "compile.auto=null", "compile.num_trials=2", "compile.num_candidates=2", "compile.objective=outcome",
     "compile.max_demos=0", "compile.proposer_context=[tips]"],
    ["compile.optimizer=bootstrap", "compile.max_demos=1", "compile.objective=outcome"],
    ["compile.optimizer=bootstrap", "compile.max_demos=2", "compile.objective=outcome", "compile.demos_by_label=true"],
])
def test_compile_save_and_reload_gives_the_same_outputs(tmp_path, retriever, schema_lm, overrides):
    config = load_config(overrides=[f"runs_dir={tmp_path}", *overrides])
    examples = [e for e in load_questions("demo") if e.answerability == "ANSWERABLE"][:8]
    train, val = split_by_conversation(examples, train_fraction=0.5)
    lm = schema_lm(SCRIPT)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        compiled = compile_program(_program(retriever), train, val, config=config, reflection_lm=schema_lm(), run_dir=tmp_path)
        path = save_compiled(compiled, tmp_path)
        fresh = load_compiled(_program(retriever), tmp_path)
        question = val[0].conversation
        assert fresh(conversation=question).answer == compiled(conversation=question).answer == "It is EUR 4,200."
    assert path.suffix == ".json" and path.read_text().lstrip().startswith("{")
    assert {name for name, _ in fresh.named_predictors()} == {name for name, _ in compiled.named_predictors()}
    assert lm.engine.calls > len(train)  # the optimiser really ran the program


def test_only_json_state_is_loaded(tmp_path, retriever):
    with pytest.raises(ValueError, match="only DSPy state JSON"):
        load_compiled(_program(retriever), tmp_path / "program.pkl")
    with pytest.raises(ValueError, match="not found"):
        load_compiled(_program(retriever), tmp_path / "missing.json")


def test_saved_program_holds_no_lm_and_reloaded_steps_keep_their_configured_lm(tmp_path, retriever, schema_lm):
    program = _program(retriever)
    small = schema_lm()
    program.retrieval.set_lm(small)  # as build_program does with retrieval_lm
    program.responders.complete.signature = program.responders.complete.signature.with_instructions("Answer tersely.")
    path = save_compiled(program, tmp_path)
    assert all(part.get("lm") is None for part in json.loads(path.read_text()).values() if isinstance(part, dict) and "lm" in part)

    fresh = _program(retriever)
    other = schema_lm()
    fresh.retrieval.set_lm(other)
    load_compiled(fresh, path)
    assert fresh.responders.complete.signature.instructions == "Answer tersely."
    assert all(p.lm is other for _, p in fresh.retrieval.named_predictors())
    assert fresh.responders.complete.lm is None  # steps without their own LM use the configured default


def test_a_gepa_budget_too_small_to_propose_anything_is_warned_about():
    from askfirst.config import CompileConfig
    from askfirst.optimizers.factory import budget_warning

    small = CompileConfig(auto=None, max_metric_calls=10)
    assert "at least 18" in budget_warning(small, n_train=12, n_val=12)
    assert budget_warning(CompileConfig(auto=None, max_metric_calls=18), n_train=12, n_val=12) is None
    assert budget_warning(CompileConfig(auto=None, max_full_evals=1), n_train=12, n_val=12) is None
    assert budget_warning(CompileConfig(), n_train=12, n_val=12) is None  # a preset sizes itself


def test_bootstrap_adds_demonstrations_of_right_runs_and_keeps_each_steps_lm(tmp_path, retriever, schema_lm):
    config = load_config(overrides=[f"runs_dir={tmp_path}", "compile.optimizer=bootstrap", "compile.max_demos=1", "compile.objective=outcome"])
    train = [e for e in load_questions("demo") if e.answerability == "ANSWERABLE"][:3]
    program, step_lm = _program(retriever), schema_lm(SCRIPT)
    program.responders.complete.lm = step_lm
    with dspy.context(lm=schema_lm(SCRIPT), adapter=dspy.JSONAdapter()):
        compiled = compile_program(program, train, train, config=config, reflection_lm=schema_lm(), run_dir=tmp_path)
    demos = compiled.responders.complete.demos
    assert len(demos) == 1 and demos[0]["answer"] == "It is EUR 4,200." and demos[0]["cited_ids"] == ["fees-lab"]
    assert compiled.responders.complete.lm is step_lm
    compiled.responders.complete.demos[0]["logprobs"] = {"ANSWERABLE": -0.1}  # a step's extra, not a field
    load_compiled(_program(retriever), save_compiled(compiled, tmp_path))  # saved as load_compiled accepts it
    assert instructions(compiled) == instructions(_program(retriever))  # demonstrations only


def test_demos_by_label_takes_the_trainset_in_turn_by_gold_label():
    labels = ["ANSWERABLE", "ANSWERABLE", "ANSWERABLE", "UNDERSPECIFIED", "UNANSWERABLE", "UNDERSPECIFIED", None]
    examples = [dspy.Example(id=f"q{i}", answerability=label) for i, label in enumerate(labels)]
    assert [e.id for e in interleaved_by_label(examples)] == ["q0", "q3", "q4", "q6", "q1", "q5", "q2"]
    assert interleaved_by_label([]) == []


def test_scored_with_demos_scores_each_draw_with_its_demos_and_restores_the_steps_own():
    step = dspy.Predict("question -> answer")
    own = [dspy.Example(question="compiled?", answer="yes")]
    step.demos = list(own)
    seen = scored_with_demos(step, {"none": [], "two": ["d1", "d2"]}, lambda name: [name, list(step.demos)])
    assert seen == {"none": ["none", []], "two": ["two", ["d1", "d2"]]} and step.demos == own

    def fails(name):
        raise RuntimeError(name)

    with pytest.raises(RuntimeError, match="two"):
        scored_with_demos(step, {"none": [], "two": ["d1"]}, lambda name: fails(name) if name == "two" else [])
    assert step.demos == own  # restored after an error too


def test_a_run_whose_step_wrote_a_wrong_answerability_label_gives_no_demonstration():
    def outcome(gold, pred, trace=None):
        return 1.0

    checked = labels_agree(outcome)
    assess, referent = dspy.Predict("question -> label"), dspy.Predict("question -> label")
    # scored right by its route, but the assessment said PARTIAL (the one-part check answered it)
    partial = [(referent, {}, dspy.Prediction(label="SPECIFIC")), (assess, {}, dspy.Prediction(label="PARTIAL"))]
    answerable = dspy.Example(answerability="ANSWERABLE")
    assert checked(answerable, None, partial) == 0.0
    assert checked(dspy.Example(answerability="PARTIAL"), None, partial) == 1.0  # the referent's label is another vocabulary
    assert checked(answerable, None) == 1.0  # evaluation (no trace) scores the outcome alone
    assert checked(dspy.Example(id="demo-1"), None, partial) == 1.0  # no gold label to compare with
    assert checked.__name__ == "outcome+labels"


def test_demos_by_label_needs_the_bootstrap_optimizer(tmp_path, schema_lm):
    cfg = load_config(overrides=["compile.demos_by_label=true"]).compile
    with pytest.raises(ValueError, match="needs compile.optimizer=bootstrap, not gepa"):
        build_optimizer(cfg, build_objective("outcome"), reflection_lm=schema_lm(), log_dir=tmp_path)


def test_mipro_sees_only_the_proposer_context_it_is_given(tmp_path, schema_lm):
    cfg = load_config(overrides=["compile.optimizer=miprov2", "compile.max_demos=0", "compile.proposer_context=[tips]"]).compile
    assert mipro_proposer_options(cfg) == {"program_aware_proposer": False, "data_aware_proposer": False,
                                           "tip_aware_proposer": True, "fewshot_aware_proposer": False}
    with dspy.context(lm=schema_lm()):  # MIPROv2's task model
        optimizer = build_optimizer(cfg, build_objective("outcome"), reflection_lm=schema_lm(), log_dir=tmp_path)
    assert (optimizer.max_bootstrapped_demos, optimizer.max_labeled_demos) == (0, 0)
    assert all(mipro_proposer_options(load_config().compile).values())  # by default it sees all four, as MIPROv2 does


def test_bootstrap_needs_at_least_one_demo(tmp_path, schema_lm):
    cfg = load_config(overrides=["compile.optimizer=bootstrap", "compile.max_demos=0"]).compile
    with pytest.raises(ValueError, match="max_demos must be at least 1"):
        build_optimizer(cfg, build_objective("outcome"), reflection_lm=schema_lm(), log_dir=tmp_path)
