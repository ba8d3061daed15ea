"""The benchmark configs and ablation grids under bench/ load, and every grid cell resolves to a valid config.

A typo in a grid cell (``askfirst.refernt_cue``) otherwise shows only when a long ablation reaches that cell.
"""

import json
from pathlib import Path

import pytest

from askfirst.ablation import load_spec
from askfirst.cli.options import resolve
from askfirst.config import load_config
from askfirst.programs.registry import specs

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.mark.parametrize("path", sorted(BENCH.glob("*.yaml")), ids=lambda p: p.name)
def test_bench_config_loads(path):
    assert load_config(path).program.kind


@pytest.mark.parametrize("path", sorted((BENCH / "grids").glob("*.yaml")), ids=lambda p: p.name)
def test_grid_cells_resolve(path, monkeypatch):
    monkeypatch.chdir(BENCH.parent)  # grids name their base config relative to the repository
    spec = load_spec(path)
    assert spec.reference in {cell.name for cell in spec.cells}
    kinds = {resolve(spec.base, None, cell.overrides).program.kind for cell in spec.cells}
    assert kinds <= set(specs())


def test_the_asks_for_info_labels_are_balanced_and_a_bad_line_is_named(tmp_path):
    script = _bench_script("asks_for_info_judge")
    labels = script.read_labels(BENCH / "asks_for_info_labels.jsonl")
    assert sum(row["asks"] for row in labels) == len(labels) - sum(row["asks"] for row in labels) == 16
    bad = tmp_path / "labels.jsonl"
    bad.write_text('{"id": "a", "asks": true, "reply": "Which?"}\n{"id": "b"}\n')
    with pytest.raises(SystemExit, match=r"labels.jsonl:2: not a labelled reply"):
        script.read_labels(bad)
    judged = [{"asks": True, "verdict": True}, {"asks": True, "verdict": None}, {"asks": False, "verdict": False}]
    assert "| 3 | 2/3 = 0.67" in script.summary(judged) and "| 1 |" in script.summary(judged)  # one unparsed verdict


def test_the_hand_read_program_replies_are_a_labelled_set_of_each_clarifying_program():
    from askfirst.datasets.jsonl import read_jsonl

    rows = _bench_script("asks_for_info_judge").read_labels(BENCH / "asks_for_info_hand_squad2.jsonl")
    raw = [record for _, record in read_jsonl(BENCH / "asks_for_info_hand_squad2.jsonl")]  # read_labels keeps no cell
    asking = {cell: sum(r["asks"] for r in raw if r["cell"] == cell) for cell in {r["cell"] for r in raw}}
    assert asking == {"askfirst": 11, "clarion": 5, "urasys_documents": 5, "askfirst_5dbb11d": 12}  # as bench/RESULTS.md reports
    assert all(row["id"].startswith("squad2_ambiguous-") and row["why"] for row in rows)


def _bench_script(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_paired_evals_pairs_two_runs_by_question_and_refuses_different_questions(tmp_path, capsys):
    from askfirst.config import save_resolved

    def run(name: str, routes: dict[str, bool]) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        save_resolved(load_config(), folder)
        rows = [{"id": qid, "route_correct": ok, "outcome_correct": ok} for qid, ok in routes.items()]
        (folder / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in reversed(rows)))  # order differs: paired by id
        mean = sum(routes.values()) / len(routes)
        (folder / "metrics.json").write_text(json.dumps({"route_correct": mean, "outcome_correct": mean, "n": len(routes)}))
        return folder

    script = _bench_script("paired_evals")
    before, after = run("before", {"q1": False, "q2": True, "q3": False}), run("after", {"q3": True, "q2": True, "q1": True})
    assert script.main([f"uncompiled={before}", f"compiled={after}"]) == 0
    compiled = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| compiled"))
    assert "1.000 (+0.667 [" in compiled
    assert script.main([f"a={before}", f"b={run('other', {'q1': True, 'q2': True, 'q4': True})}"]) == 2
    assert "2 question(s) in one only" in capsys.readouterr().err


def test_paired_evals_pools_chunk_runs_and_takes_their_means_from_the_pooled_scores(tmp_path, capsys):
    from askfirst.config import save_resolved

    def chunk(name: str, routes: dict[str, bool], *, evidence_k: int = 5) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        save_resolved(resolve(None, [f"data.ids={json.dumps(list(routes))}", f"program.evidence_k={evidence_k}"]), folder)
        rows = [{"id": qid, "route": "answer" if ok else "idk", "expected_route": "answer", "route_correct": ok, "outcome_correct": ok,
                 "stage": "simple", "p_answerable": None} for qid, ok in routes.items()]
        (folder / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        records = [{"id": qid, "route": "answer", "seconds": 2.0, "lm_calls": 3} for qid in routes]
        (folder / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        (folder / "metrics.json").write_text(json.dumps({"route_correct": 0.0, "outcome_correct": 0.0, "n": len(routes)}))  # not read
        return folder

    script = _bench_script("paired_evals")
    before = f"{chunk('b1', {'q1': False, 'q2': True})},{chunk('b2', {'q3': False, 'q4': False})}"
    after = f"{chunk('a1', {'q1': True, 'q2': True})},{chunk('a2', {'q3': True, 'q4': False})}"
    assert script.main([f"uncompiled={before}", f"compiled={after}"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert next(line for line in lines if line.startswith("| uncompiled")).split(" | ")[2:4] == ["0.250", "0.250"]
    assert "| compiled | 4 | 0.750 (+0.500 [" in next(line for line in lines if line.startswith("| compiled"))
    assert script.main([f"uncompiled={before}", f"compiled={after},{chunk('a3', {'q5': True}, evidence_k=3)}"]) == 2
    err = capsys.readouterr().err
    assert "a3 differ from" in err and "b1" not in err  # evidence_k differs, not only data.ids
    assert script.main([f"uncompiled={before}", f"compiled={after},{chunk('a4', {'q4': True})}"]) == 2
    assert "compiled: question q4 is in more than one of the runs" in capsys.readouterr().err


def test_gate_swap_takes_the_gate_runs_route_where_its_gate_stopped_and_lists_what_only_the_other_gate_stopped(tmp_path, capsys):
    from askfirst.config import save_resolved

    def run(name: str, rows: dict[str, tuple[str, bool, bool]]) -> Path:  # id: (expected route, right, gated)
        folder = tmp_path / name
        folder.mkdir()
        save_resolved(load_config(), folder)
        (folder / "scores.jsonl").write_text("".join(json.dumps({"id": qid, "expected_route": exp, "route_correct": ok}) + "\n"
                                                     for qid, (exp, ok, _) in rows.items()))
        (folder / "predictions.jsonl").write_text("".join(json.dumps({"id": qid, "route": "idk", "extras": {"gated": gated}}) + "\n"
                                                          for qid, (_, _, gated) in rows.items()))
        (folder / "metrics.json").write_text("{}")
        return folder

    gate = run("gate", {"q1": ("idk", True, True), "q2": ("answer", False, False), "q3": ("answer", True, False)})
    rest = run("rest", {"q1": ("idk", False, False), "q2": ("answer", True, False), "q3": ("answer", False, True)})
    assert _bench_script("gate_swap").main([f"plain={gate}", f"compiled={rest}"]) == 0
    out = capsys.readouterr().out
    assert "| answer | 1 | 0 | 1 | 1 |" in out and "| idk | 1 | 1 | 0 | 1 |" in out and "| all | 2 | 1 | 1 | 2 |" in out
    assert "1 question(s) only compiled's gate turned away, not counted (they need a run): q3" in out
    fewer = run("fewer", {"q1": ("idk", True, True), "q2": ("answer", False, False)})
    assert _bench_script("gate_swap").main([f"plain={gate}", f"fewer={fewer}"]) == 2
    assert "plain and fewer differ in their questions: 1 question(s) in one only" in capsys.readouterr().err
    assert _bench_script("gate_swap").main([str(gate), str(rest)]) == 2
    assert "Usage: python bench/gate_swap.py" in capsys.readouterr().err


def test_partial_rerun_puts_the_rerun_questions_in_place_and_reports_targets_and_changes(tmp_path, capsys):
    from askfirst.config import save_resolved

    def run(name: str, rows: dict[str, tuple[str, str]], *overrides: str) -> Path:  # id: (expected route, route taken)
        folder = tmp_path / name
        folder.mkdir()
        save_resolved(load_config(overrides=list(overrides)), folder)
        (folder / "scores.jsonl").write_text("".join(json.dumps({"id": qid, "expected_route": exp, "route": taken,
                                                                 "route_correct": exp == taken}) + "\n" for qid, (exp, taken) in rows.items()))
        (folder / "predictions.jsonl").write_text("".join(json.dumps({"id": qid, "route": taken}) + "\n" for qid, (_, taken) in rows.items()))
        (folder / "metrics.json").write_text("{}")
        return folder

    base = run("base", {"a1": ("answer", "idk"), "a2": ("answer", "answer"), "u1": ("idk", "idk"), "u2": ("idk", "idk")})
    rerun = run("rerun", {"a1": ("answer", "answer"), "u2": ("idk", "answer")}, "askfirst.label_unanswerable_below=0.55",
                "data.ids=[a1,u2]")
    script = _bench_script("partial_rerun")
    assert script.main([f"base={base}", f"switch={rerun}"]) == 0
    out = capsys.readouterr().out
    assert "switch: 2 of base's 4 questions run again with askfirst.label_unanswerable_below: None -> 0.55\n" in out
    assert "| answer | 2 | 1 | 2 |" in out and "| idk | 2 | 2 | 1 |" in out and "| all | 4 | 3 | 3 |" in out
    assert '"I don\'t know" on ANSWERABLE (target < 15%): 1 of 2 (0.500, missed) -> 0 (0.000, met)' in out
    assert '"I don\'t know" on UNANSWERABLE (target >= 50%): 2 of 2 (1.000, met) -> 1 (0.500, met)' in out
    assert "2 route(s) changed:\n- a1 (answer): idk -> answer\n- u2 (idk): idk -> answer" in out
    assert "route accuracy, patched minus base: +0.000" in out
    stray = run("stray", {"x9": ("answer", "answer")})
    assert script.main([f"base={base}", f"stray={stray}"]) == 2
    assert "1 rerun question(s) not in the base run: x9" in capsys.readouterr().err
    assert script.main([str(base)]) == 2 and "Usage: python bench/partial_rerun.py" in capsys.readouterr().err
    assert script.main([f"base={base}", str(rerun)]) == 2 and "Usage: python bench/partial_rerun.py" in capsys.readouterr().err


def test_a_stopped_run_pools_with_the_questions_it_finished(tmp_path):
    from askfirst.config import save_resolved
    from askfirst.evaluation.pooled_runs import pooled_run

    save_resolved(load_config(), tmp_path)  # the demo's 26 questions; two finished, no scores.jsonl or metrics.json
    lines = [{"id": "u01", "route": "idk", "answer": "I don't know.", "seconds": 2.0, "lm_calls": 1},
             {"id": "a01", "route": "idk", "answer": "I don't know.", "seconds": 4.0, "lm_calls": 3}]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    run = pooled_run([tmp_path])
    assert [(sc["id"], sc["expected_route"], sc["route_correct"]) for sc in run.scores] == [("a01", "answer", False), ("u01", "idk", True)]
    assert run.summary["route_correct"] == 0.5 and run.summary["lm_calls_per_question"] == 2.0


def test_partial_rerun_lists_the_questions_an_unanswerable_overrule_could_route_otherwise(tmp_path, capsys):
    def record(qid, label, cosine, **extras):
        return {"id": qid, "label": label, "extras": {"probability_source": "logprobs", "top_cosine": cosine} | extras}

    records = [record("kept", "UNANSWERABLE", 0.60), record("low", "UNANSWERABLE", 0.50),
               record("answered", "ANSWERABLE", 0.70), record("escalated", "ANSWERABLE", 0.70, escalated=True),
               record("cued", "UNDERSPECIFIED", 0.70, referent_cue=["animal"]),
               record("gated", "UNANSWERABLE", 0.70, probability_source=None, gated=True)]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert _bench_script("partial_rerun").main(["--overrulable", "0.55", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out) == ["kept", "escalated", "cued"]


def test_eval_report_scores_a_stopped_run_and_calibrates_its_p_answerable(tmp_path, capsys):
    from askfirst.config import save_resolved

    save_resolved(load_config(), tmp_path)  # the demo's 26 questions; three finished

    def record(qid, route, p):
        return {"id": qid, "route": route, "answer": "I don't know." if route == "idk" else "x", "seconds": 2.0, "lm_calls": 3,
                "extras": {"p_answerable": p, "probability_source": "logprobs"}}

    gated = record("u02", "idk", 0.0) | {"extras": {"gated": True}}
    overruled = record("a02", "idk", 0.0) | {"extras": {"key_terms": {"overruled": "ANSWERABLE"}}}
    answered = record("u03", "answer", None) | {"extras": {"unanswerable_overruled": 0.61, "top_cosine": 0.61}}
    lines = [record("a01", "answer", 0.9), record("u01", "idk", 0.3), record("c01", "answer", 0.6), gated, overruled, answered]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    script = _bench_script("eval_report")
    assert script.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "6 of 26 questions finished" in out and "| clarify | 1 | 0.000" in out
    assert "per expected route: answer: key-term check 1; idk: label 1, retrieval gate 1" in out
    # a01 (answerable, 0.9) above u01 (0.3) and c01 (0.6): AUC 1; Brier (0.01 + 0.09 + 0.36) / 3.
    assert "P(answerable) on the 3 assessed questions (0.333 answerable, mean P 0.600): AUC 1.000, Brier 0.153" in out
    assert "mean P by expected route: answer 0.900, clarify 0.600, idk 0.300" in out
    assert script.main([str(tmp_path), "--misroutes"]) == 0
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| a0") or line.startswith("| u0")]
    assert table == ["| a02 | answer | idk | key-term check | - | 0.000 | - |",  # u01, u02 right, a01 answered; no cosine, no P
                     "| u03 | idk | answer | label overruled | 0.610 | - | - |"]


@pytest.mark.parametrize("path", sorted((BENCH / "candidates").glob("*.yaml")), ids=lambda p: p.name)
def test_instruction_candidates_name_steps_of_the_askfirst_program(path):
    from askfirst.optimizers.instruction_candidates import read_candidates
    from askfirst.programs.base import Resources
    from askfirst.programs.registry import Registry
    from tests.conftest import ListRetriever
    from tests.askfirst_harness import QueryCosines

    dense = QueryCosines({})
    program = Registry(Resources(retriever=ListRetriever(), store=dense, embedder=dense)).build("askfirst", load_config(BENCH / "askfirst_mtrag.yaml"))
    assert read_candidates(path, [name for name, _ in program.named_predictors()])  # raises on a step the program lacks


def test_divergence_replay_asks_the_program_again_with_the_recorded_per_passage_answers(tmp_path, capsys):
    from askfirst.config import config_path, save_resolved
    from askfirst.retrieval.factory import index_corpus, open_store

    config = load_config(config_path("demo"), overrides=[f"runs_dir={tmp_path / 'runs'}"])  # the demo's program and index
    store = open_store(config)
    try:
        index_corpus(config, store)
    finally:
        store.close()
    run = tmp_path / "run"
    run.mkdir()
    save_resolved(config, run)
    fees = ["fees-lab", "fees-registration"]
    records = [  # one amount in two wordings, recorded as diverging by answers compared word for word
        {"id": "c01", "route": "clarify", "retrieved": fees, "extras": {"standalone_query": "How much is the fee?", "ambiguity": {
            "divergence": {"diverges": True, "candidates": {"fees-lab": "EUR 85", "fees-registration": "85 euros"}}}}},
        {"id": "t04", "route": "answer", "retrieved": fees, "extras": {"standalone_query": "Is there a fee for each guest night?",
                                                                     "ambiguity": {"divergence": {"diverges": False, "form": "yes/no"}}}},
        {"id": "u01", "route": "idk", "retrieved": [], "extras": {"standalone_query": "parking", "ambiguity": {}}},  # never asked first
    ]
    (run / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (run / "scores.jsonl").write_text(json.dumps({"id": "c01", "expected_route": "clarify"}) + "\n")
    script = _bench_script("divergence_replay")
    assert script.replay(run, []) == {"replayed": 2, "diverges -> not, expected clarify": 1}  # typed: both name 85
    assert script.replay(run, ["askfirst.typed_divergence=false"]) == {"replayed": 2}
    # t04 is a follow-up: asked divergence only with follow_up_divergence, and then with no answers recorded
    assert script.replay(run, ["askfirst.factoid_divergence=false"]) == {"replayed": 2, "diverges -> not, expected clarify": 1}
    assert script.replay(run, ["askfirst.factoid_divergence=false", "askfirst.follow_up_divergence=true"]) == {
        "replayed": 1, "diverges -> not, expected clarify": 1, "needs the LM": 1}
    assert "c01 diverges -> not (route clarify, expected clarify): How much is the fee?" in capsys.readouterr().out


def test_repeated_turn_rewrites_lists_the_tasks_whose_recorded_rewrite_is_an_earlier_user_turn(tmp_path, capsys):
    from askfirst.config import save_resolved

    save_resolved(load_config(), tmp_path)  # the demo's questions; t01-t04 are follow-ups
    rows = [{"id": "t01", "extras": {"standalone_query": "what does undergraduate tuition cost for a full-time student"}},
            {"id": "t02", "extras": {"standalone_query": "By when do I apply for a residence hall?"}},
            {"id": "a01", "extras": {"standalone_query": "What does undergraduate tuition cost for a full-time student?"}}]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    _bench_script("repeated_turn_rewrites").main(str(tmp_path))
    out, err = capsys.readouterr()
    assert out.strip() == "[t01]" and "1 of 3 recorded tasks" in err  # a01 is a first turn: nothing earlier to repeat


def test_clarification_options_counts_what_the_responders_clarifications_offer(tmp_path, capsys):
    sentence = "A laboratory fee of EUR 85 is charged for each laboratory course."
    rows = [{"route": "clarify", "question": "How much is the fee?", "options": ["fee", sentence], "answer": "Which fee do you mean?"},
            {"route": "clarify", "question": "How much is it?", "options": ["lab fee", "registration fee"],
             "answer": "Which of the above is the lab fee?"},
            {"route": "clarify", "question": "When did he pay?", "options": [], "answer": 'Who do you mean by "he"?'},
            {"route": "clarify", "question": "How much is the fee?", "options": ["lab fee", "registration fee"],
             "answer": "Do you mean the lab fee or the registration fee?"},
            {"route": "clarify", "question": "When is this fee due?", "options": ["Laboratory fee", "Registration fee"],
             "answer": "Your question could be about several things: Laboratory fee; Registration fee. Which one do you mean?",
             "extras": {"titled_options": ["Laboratory fee", "Registration fee"]}},
            {"route": "clarify", "question": "Is it open?", "options": ["Is it open", "fee"], "answer": "Which one?",
             "extras": {"ambiguity": {"options": ["Is it open", "fee"]}}},  # a divergence's: not the responder's
            {"route": "answer", "question": "How much is the fee?", "options": ["fee"], "answer": "EUR 85."}]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    _bench_script("clarification_options").main(["--list", str(tmp_path)])
    out, err = capsys.readouterr()
    assert f"| {tmp_path.name} | 5 | 1 | 1 | 1 | 1 |" in out  # the second asks no choice; the third offers none; the fifth titles
    assert "'How much is it?' -> 'Which of the above is the lab fee?'" in err and "EUR 85" not in err


def test_assessment_demos_draws_one_labelled_demo_of_each_label_with_a_judged_sentence_as_the_answer():
    import types

    import dspy

    from askfirst.programs.base import Resources
    from askfirst.programs.registry import Registry
    from tests.conftest import ListRetriever

    resources = Resources(retriever=ListRetriever())
    program = Registry(resources).build("askfirst", load_config(overrides=["program.kind=askfirst", "program.reranker=false"]))
    session = types.SimpleNamespace(program=program, resources=resources)

    def task(tid, label, *, qrels=None, reference=""):
        return dspy.Example(id=tid, conversation=[{"role": "user", "content": f"question {tid}?"}], answerability=label,
                            reference=reference, qrels=qrels or {})

    tasks = [task("a-unjudged", "ANSWERABLE", qrels={"elsewhere": 1}, reference="EUR 85"),  # no judged passage shown
             task("a", "ANSWERABLE", qrels={"fees-lab": 1}, reference="The lab fee is EUR 85 per course."),
             task("p", "PARTIAL", qrels={"fees-registration": 1}, reference="A registration fee of EUR 60"),
             task("u", "UNANSWERABLE"), task("s", "UNDERSPECIFIED")]
    script = _bench_script("assessment_demos")
    # Every seed draws all but the unjudged ANSWERABLE task: the draw order is seeded, the labels interleaved as LABELS orders them.
    demos = script.labelled_demos(session, tasks, per_label=1, passages=3, seed=0)
    assert [d.label for d in demos] == ["ANSWERABLE", "PARTIAL", "UNDERSPECIFIED", "UNANSWERABLE"]
    assert demos[0].question == "question a?" and demos[0].answering_sentences == [
        "[fees-lab] A laboratory fee of EUR 85 is charged for each laboratory course."]
    assert demos[1].answering_sentences[0].startswith("[fees-registration] ")
    assert demos[2].answering_sentences == [] and demos[3].answering_sentences == []
    assert "[course-cs201] CS 201:" in demos[0].passages
    assert script.asked_about("How much does the lab fee for CS 201 cost per semester?") == "lab fee CS 201 semester"
    rows = [{"gold": "ANSWERABLE", "p": 0.9}, {"gold": "PARTIAL", "p": 0.4}, {"gold": "UNANSWERABLE", "p": 0.4},
            {"gold": "UNDERSPECIFIED", "p": 0.0}]
    assert script.auc(rows) == 0.75  # 0.9 above 0.4, 0.4 tied with 0.4; UNDERSPECIFIED not counted
    assert script.auc(rows[:2]) is None


def test_assessment_demos_rebuilds_the_inputs_of_the_tasks_the_assessment_labelled_without_escalation():
    import types

    import dspy

    from askfirst.programs.base import Resources
    from askfirst.programs.registry import Registry
    from tests.conftest import PASSAGES, ListRetriever

    program = Registry(Resources(retriever=ListRetriever())).build("askfirst", load_config(overrides=["program.kind=askfirst"]))
    store = types.SimpleNamespace(get_passages=lambda ids: {p.passage_id: p for p in PASSAGES if p.passage_id in ids})
    session = types.SimpleNamespace(program=program, store=store)
    conversation = [{"role": "user", "content": "How much is it?"}, {"role": "assistant", "content": "Which fee?"},
                    {"role": "user", "content": "The lab one"}]
    tasks = [dspy.Example(id=tid, conversation=conversation) for tid in ("assessed", "gated", "escalated", "unrun")]
    extras = {"standalone_query": "How much is the lab fee?", "answering_sentences": [], "escalated": False}
    records = {"assessed": {"retrieved": ["fees-lab", "gone"], "extras": extras},
               "gated": {"retrieved": [], "extras": extras | {"answering_sentences": None}},
               "escalated": {"retrieved": ["fees-lab"], "extras": extras | {"escalated": True}}}
    rows = _bench_script("assessment_demos").assessed_inputs(session, tasks, records)
    assert [task.id for task, _ in rows] == ["assessed"]
    inputs = rows[0][1]
    assert inputs["question"] == "How much is the lab fee?" and "How much is it?" in inputs["conversation_history"]
    assert inputs["passages"].startswith("[fees-lab] Laboratory fee: A laboratory fee") and "gone" not in inputs["passages"]


def test_answer_demos_shows_reference_answers_of_judged_answerable_training_tasks(use_dummy_lm):
    import types

    import dspy

    from askfirst.programs.base import Resources
    from askfirst.programs.registry import Registry
    from tests.conftest import ListRetriever

    resources = Resources(retriever=ListRetriever())
    program = Registry(resources).build("askfirst", load_config(overrides=["program.kind=askfirst", "program.reranker=false"]))
    session = types.SimpleNamespace(program=program, resources=resources)
    reference = "The lab fee is EUR 85 for each laboratory course."

    def task(tid, label, *, qrels=None, earlier=(), collection="fees"):
        turns = [*({"role": role, "content": text} for text in earlier for role in ("user", "assistant")),
                 {"role": "user", "content": f"question {tid}?"}]
        return dspy.Example(id=tid, conversation=turns, answerability=label, reference=reference, qrels=qrels or {}, collection=collection)

    tasks = [task("u", "UNANSWERABLE", qrels={"fees-lab": 1}), task("a-unjudged", "ANSWERABLE", qrels={"elsewhere": 1}),
             task("a-long", "ANSWERABLE", qrels={"fees-lab": 1}, earlier=["x" * 300]),  # a conversation too long to show
             task("a", "ANSWERABLE", qrels={"fees-lab": 1})]
    script = _bench_script("answer_demos")
    demos = script.reference_demos(session, tasks, k=2, passages=3, seed=0)
    assert [d.question for d in demos] == ["question a?"] and demos[0].answer == reference and demos[0].cited_ids == ["fees-lab"]
    more = [task(f"f{i}", "ANSWERABLE", qrels={"fees-lab": 1}) for i in range(3)] + [task("c", "ANSWERABLE", qrels={"course-cs201": 1}, collection="courses")]
    drawn = script.reference_demos(session, more, k=2, passages=3, seed=0)  # one of each collection before a second of either
    assert sorted(d.question for d in drawn)[0] == "question c?" and drawn[0].cited_ids != drawn[1].cited_ids
    assert demos[0].passages.startswith("[fees-lab] Laboratory fee: A laboratory fee") and "[course-cs201] CS 201:" in demos[0].passages

    rows = script.held_out_inputs(session, [tasks[0], tasks[1], tasks[3]], limit=None)  # first turns: no rewrite LM call
    assert [r["task"].id for r in rows] == ["a-unjudged", "a"] and rows[1]["judged"] == {"fees-lab"} and rows[0]["judged"] == set()
    assert rows[1]["inputs"]["question"] == "question a?" and "fees-lab" in rows[1]["inputs"]["passage_ids"]
    assert len(rows[1]["inputs"]["passage_ids"]) == len(rows[1]["texts"])
    assert script.held_out_inputs(session, tasks, limit=1)[0]["task"].id == "a-unjudged"

    use_dummy_lm([{"answer": reference, "cited_ids": ["fees-lab", "invented"]}] + [{"answer": "no ids"}] * 5)
    right = script.scored(program, rows[1])
    assert right["rl_f"] == 1.0 and right["recall"] == 1.0 and right["judged_cited"] and not right["failed"] and right["words"] == 10
    failed = script.scored(program, rows[0])  # a reply without its citations, on every try: scored as a failure, not raised
    assert failed["failed"] and failed["rl_f"] == 0.0 and failed["rb_agg"] == 0.0
