"""MTRAG's human rewrites as labelled examples of the standalone rewrite, and the demonstrations drawn from them."""

import json

import dspy
import pytest

from askfirst.config import ConfigError, builtin_config_path, load_config
from askfirst.datasets.errors import DataError
from askfirst.datasets.mtrag import COLLECTIONS, HUMAN_RETRIEVAL_DIR, load_mtrag_rewrites
from askfirst.datasets.shared_data import shared_data_dir
from askfirst.optimizers.compile import compile_program, load_compiled, save_compiled
from askfirst.optimizers.curves import optimisation_curve
from askfirst.optimizers.rewrite_demos import MAX_HISTORY_CHARS, drawn_rewrite_demos
from askfirst.programs.base import Resources
from askfirst.programs.registry import Registry
from askfirst.retrieval.hybrid import Hit
from askfirst.signatures.askfirst import StandaloneQuestion
from tests.conftest import ListRetriever, SchemaFollowingEngine
from tests.askfirst_harness import QueryCosines


def write_collection(root, name, tasks):
    """``tasks``: ``[(task id, [user turns], rewrite)]`` as MTRAG's ``<name>_questions.jsonl`` / ``<name>_rewrite.jsonl``."""
    folder = root / "mtrag" / HUMAN_RETRIEVAL_DIR / name
    folder.mkdir(parents=True)
    (folder / f"{name}_questions.jsonl").write_text(
        "".join(json.dumps({"_id": i, "text": "\n".join(f"|user|: {t}" for t in turns)}) + "\n" for i, turns, _ in tasks))
    (folder / f"{name}_rewrite.jsonl").write_text("".join(json.dumps({"_id": i, "text": f"|user|: {r}"}) + "\n" for i, _, r in tasks))


def human_set(tmp_path):
    for name in COLLECTIONS:
        write_collection(tmp_path, name, [
            (f"{name}<::>1", [f"What is {name}?"], f"What is {name}?"),
            (f"{name}<::>2", [f"What is {name}?", "Who made it?\nAnd when?"], f"Who made {name} and when?"),
            (f"{name}<::>3", [f"What is {name}?", "Who made it?", f"Is {name} free?"], f"Is {name} free?"),
        ])
    return load_mtrag_rewrites(tmp_path)


def test_follow_ups_load_with_their_user_turns_as_history_and_the_rewrite(tmp_path):
    examples = human_set(tmp_path)
    assert len(examples) == 2 * len(COLLECTIONS)  # first turns have nothing to resolve
    made = next(e for e in examples if e.id == "cloud<::>2")
    assert (made.conversation_history, made.question, made.standalone_question) == ("user: What is cloud?", "Who made it?\nAnd when?",
                                                                                     "Who made cloud and when?")
    assert made.changed and made.collection == "cloud" and set(made.inputs().keys()) == {"conversation_history", "question"}
    unchanged = next(e for e in examples if e.id == "cloud<::>3")
    assert unchanged.conversation_history == "user: What is cloud?\nuser: Who made it?" and not unchanged.changed


def test_a_rewrite_without_its_conversation_names_its_file_and_line(tmp_path):
    human_set(tmp_path)
    path = tmp_path / "mtrag" / HUMAN_RETRIEVAL_DIR / "fiqa" / "fiqa_rewrite.jsonl"
    path.write_text(path.read_text() + json.dumps({"_id": "fiqa<::>9", "text": "|user|: Why?"}) + "\n")
    with pytest.raises(DataError, match=r"fiqa_rewrite.jsonl:4: task 'fiqa<::>9' has no conversation"):
        load_mtrag_rewrites(tmp_path)
    path.write_text("{not json\n")
    with pytest.raises(DataError, match=r"fiqa_rewrite.jsonl:1: malformed JSON"):
        load_mtrag_rewrites(tmp_path)


def test_demos_are_changed_rewrites_from_each_collection_in_turn_with_only_the_signatures_fields(tmp_path):
    examples = human_set(tmp_path)
    demos = drawn_rewrite_demos(examples, k=3, seed=0)
    assert [d.standalone_question for d in demos] == [f"Who made {name} and when?" for name in sorted(COLLECTIONS)[:3]]
    assert all(set(d.keys()) == set(StandaloneQuestion.fields) for d in demos)
    assert len(drawn_rewrite_demos(examples, k=10, seed=0)) == len(COLLECTIONS)  # only the changed ones, each once


def test_draws_are_seeded_and_skip_long_histories(tmp_path):
    long_turn = "word " * (MAX_HISTORY_CHARS // 4)
    write_collection(tmp_path, "govt", [(f"g<::>{n}", [f"Tell me about office {n}", "When does it open?"], f"When does office {n} open?")
                                        for n in range(20)] + [("g<::>long", [long_turn, "And it?"], "And the word?")])
    pool = [e for name in ("govt",) for e in _loaded(tmp_path, name)]
    first, again, other = (drawn_rewrite_demos(pool, k=4, seed=s) for s in (0, 0, 1))
    assert first == again and first != other
    assert all(d.standalone_question != "And the word?" for d in drawn_rewrite_demos(pool, k=21, seed=0))


def _loaded(root, name):
    for other in COLLECTIONS:  # the loader reads every collection: the others empty
        folder = root / "mtrag" / HUMAN_RETRIEVAL_DIR / other
        if not folder.is_dir():
            write_collection(root, other, [])
    return [e for e in load_mtrag_rewrites(root) if e.collection == name]


DATA = shared_data_dir()


@pytest.mark.skipif(not (DATA / "mtrag" / HUMAN_RETRIEVAL_DIR).is_dir(), reason=f"MTRAG human retrieval tasks not found under {DATA / 'mtrag'}")
def test_the_shared_human_rewrites_load_and_share_no_conversation_with_mtrag_un():
    from askfirst.datasets.mtrag import load_mtrag_tasks

    examples = load_mtrag_rewrites(DATA)
    assert len(examples) == 675  # the follow-up turns among the 777 tasks
    assert {e.collection for e in examples} == set(COLLECTIONS) and sum(e.changed for e in examples) == 563
    assert not {e.id.split("<::>")[0] for e in examples} & {t.conversation_id for t in load_mtrag_tasks(DATA)}


GOOD_REWRITE = "How much is the registration fee?"


class DemoAwareEngine(SchemaFollowingEngine):
    """Rewrites the follow-up well only when the prompt shows demonstrations (messages before the question), unless
    ``always``; every other step gets a placeholder."""

    def __init__(self, *, always: bool = False):
        super().__init__()
        self.always = always

    def complete(self, request):
        shown = self.always or len(request.messages) > 1
        self.scripted = {"standalone_question": {"standalone_question": GOOD_REWRITE if shown else "And that one?"}}
        return super().complete(request)


class WordRetriever(ListRetriever):
    """The fixed passages that share a word of four letters or more with the query, in their order."""

    def search_many(self, queries, k):
        words = {w for q in queries for w in q.lower().strip("?").split() if len(w) >= 4}
        found = [p for p in self.passages if words & set(f"{p.title} {p.text}".lower().split())]
        return [Hit(p, 1.0 / (i + 1)) for i, p in enumerate(found[:k])]


def fee_tasks(n):
    conversation = [{"role": "user", "content": "Which fees are there?"}, {"role": "assistant", "content": "Lab and registration."},
                    {"role": "user", "content": "And that one?"}]
    return [dspy.Example(id=f"t{i}", conversation_id=f"c{i}", conversation=conversation, qrels={"fees-registration": 1},
                         gold_passages=["fees-registration"], answerability="ANSWERABLE").with_inputs("conversation") for i in range(n)]


def unanswerable_tasks(n):
    conversation = [{"role": "user", "content": "Which fees are there?"}, {"role": "assistant", "content": "Lab and registration."},
                    {"role": "user", "content": "And the parking fee?"}]
    return [dspy.Example(id=f"u{i}", conversation_id=f"u{i}", conversation=conversation, qrels={}, gold_passages=[],
                         answerability="UNANSWERABLE").with_inputs("conversation") for i in range(n)]


def compiled_with(tmp_path, engine, *overrides, trainset=None, dense=None):
    human_set(tmp_path)
    config = load_config(overrides=["program.kind=askfirst", "notes.reranker=false", "askfirst.ambiguity=off", f"runs_dir={tmp_path}",
                                    f"data.shared_data_dir={tmp_path}", "compile.optimizer=rewrite_demos", "compile.objective=recall",
                                    "compile.max_demos=2", "compile.num_candidates=2", *overrides])
    program = Registry(Resources(retriever=WordRetriever(), store=dense, embedder=dense)).build("askfirst", config)
    with dspy.context(lm=dspy.LM("test/demo-aware", engine=engine, cache=False), adapter=dspy.JSONAdapter()):
        return compile_program(program, trainset or fee_tasks(4), fee_tasks(2), config=config, reflection_lm=None, run_dir=tmp_path), program


def test_the_draw_whose_rewrites_search_best_is_kept_and_saved_with_its_demos(tmp_path, monkeypatch):
    monkeypatch.delenv("ASKFIRST_DATA_DIR", raising=False)
    compiled, seed = compiled_with(tmp_path, DemoAwareEngine())
    assert len(compiled.rewrite.demos) == 2 and seed.rewrite.demos == []  # the program compiled is not changed
    curve = optimisation_curve(compiled)
    assert [(r["scored_on"], r["score"]) for r in curve] == [("trainset", 0.0), ("trainset", 1.0), ("trainset", 1.0),
                                                            ("valset", 0.0), ("valset", 1.0)]
    assert curve[-1]["candidate"] == 1 and curve[-1]["best_so_far"] == 1.0  # a tie keeps the earlier draw
    save_compiled(compiled, tmp_path)
    load_compiled(seed, tmp_path)
    assert [d["standalone_question"] for d in seed.rewrite.demos] == [d.standalone_question for d in compiled.rewrite.demos]


def test_the_seed_stands_when_no_draw_searches_better(tmp_path, monkeypatch):
    monkeypatch.delenv("ASKFIRST_DATA_DIR", raising=False)
    compiled, _ = compiled_with(tmp_path, DemoAwareEngine(always=True))
    assert compiled.rewrite.demos == [] and [r["score"] for r in optimisation_curve(compiled)] == [1.0] * 5


def test_through_the_gate_a_draw_that_lets_unanswerable_follow_ups_past_it_loses(tmp_path, monkeypatch):
    """The draws rewrite every follow-up into the registration-fee question, which the gate (0.5) lets through; the
    follow-up as the program rewrites it without demos ("And that one?", cosine 0.2) it stops."""
    monkeypatch.delenv("ASKFIRST_DATA_DIR", raising=False)
    trainset = fee_tasks(1) + unanswerable_tasks(2)
    dense = QueryCosines({"And that one?": 0.2, GOOD_REWRITE: 0.9})
    for name in ("recall", "gated"):
        (tmp_path / name).mkdir()
    compiled, _ = compiled_with(tmp_path / "recall", DemoAwareEngine(), trainset=trainset, dense=dense)  # plain recall: the draw
    assert len(compiled.rewrite.demos) == 2 and [r["score"] for r in optimisation_curve(compiled)][:3] == [0.0, 1.0, 1.0]
    compiled, _ = compiled_with(tmp_path / "gated", DemoAwareEngine(), "compile.objective=gated_recall", "askfirst.min_top_cosine=0.5",
                                trainset=trainset, dense=dense)
    curve = optimisation_curve(compiled)
    assert compiled.rewrite.demos == [] and [round(r["score"], 3) for r in curve[:3]] == [0.667, 0.333, 0.333]
    assert [r["score"] for r in curve[3:]] == [0.0, 0.0]  # the valset's answerable follow-ups: stopped without demos; the seed kept


@pytest.mark.parametrize(("override", "message"), [("compile.objective=outcome", "needs compile.objective=recall"),
                                                   ("compile.objective=gated_recall", "set askfirst.min_top_cosine"),
                                                   ("compile.max_demos=0", "at least 1"),
                                                   ("askfirst.standalone=false", "askfirst.standalone on")])
def test_rewrite_demos_needs_recall_demos_and_a_rewrite_step(tmp_path, monkeypatch, override, message):
    monkeypatch.delenv("ASKFIRST_DATA_DIR", raising=False)
    with pytest.raises(ConfigError, match=message):
        compiled_with(tmp_path, DemoAwareEngine(), override)


SHIPPED = "askfirst:mtrag-rewrite-demos"


@pytest.mark.parametrize("overrides", [[], ["askfirst.ambiguity=off", "askfirst.escalation=false"], ["askfirst.mode=answer_all"]])
def test_the_shipped_rewrite_demos_load_into_the_askfirst_program_with_its_stages_on_or_off(retriever, overrides):
    from askfirst.programs.registry import build_program

    program = build_program(load_config(builtin_config_path("demo"), overrides=[f"program.compiled={SHIPPED}", *overrides]), Resources(retriever=retriever))
    assert len(program.rewrite.demos) == 4 and all(d["standalone_question"] for d in program.rewrite.demos)
    plain = build_program(load_config(builtin_config_path("demo"), overrides=["program.compiled=none", *overrides]), Resources(retriever=retriever))
    assert plain.rewrite.demos == [] and program.assess.signature.instructions == plain.assess.signature.instructions


def test_the_shipped_rewrite_demos_are_refused_by_a_program_without_the_rewrite(retriever):
    from askfirst.optimizers.program_state import ProgramStateError
    from askfirst.programs.registry import build_program

    with pytest.raises(ProgramStateError, match=r"unknown predictor\(s\) \['rewrite'\].*program.compiled=none"):
        build_program(load_config(builtin_config_path("demo"), overrides=[f"program.compiled={SHIPPED}", "askfirst.standalone=false"]), Resources(retriever=retriever))


def test_the_shipped_program_comes_with_its_config_training_set_curve_and_diff():
    from askfirst.optimizers.compile import SHIPPED_DIR

    folder = SHIPPED_DIR / SHIPPED.removeprefix("askfirst:")
    assert {p.name for p in folder.iterdir()} >= {"program.json", "config.yaml", "trainset.json", "curve.json", "instructions.diff"}
    assert set(json.loads((folder / "program.json").read_text())) == {"rewrite", "metadata"}  # the one step it changed
    shown = json.loads((folder / "trainset.json").read_text())
    assert shown["compile_split"] == "train" and shown["objective"] == "recall"  # MTRAG-UN's training half only
    config = load_config(folder / "config.yaml")
    assert (config.compile.optimizer, config.compile.max_demos, config.runs_dir) == ("rewrite_demos", 4, "runs")
    curve = json.loads((folder / "curve.json").read_text())
    kept = curve[-1]["candidate"]
    assert curve[kept]["score"] == max(row["score"] for row in curve if row["scored_on"] == "trainset")


@pytest.mark.skipif(not (DATA / "mtrag").is_dir(), reason=f"shared MTRAG data not found at {DATA} (set ASKFIRST_DATA_DIR)")
def test_the_shipped_program_was_never_shown_a_validation_half_task():
    from askfirst.datasets.splits import configured_questions
    from askfirst.optimizers.compile import SHIPPED_DIR

    folder = SHIPPED_DIR / SHIPPED.removeprefix("askfirst:")
    shown = json.loads((folder / "trainset.json").read_text())
    from askfirst.config import config_path

    validation = {e.id for e in configured_questions(load_config(config_path("mtrag"), overrides=["data.limit=null"]), split="validation")}
    assert validation and not (set(shown["trainset"]["ids"]) | set(shown["valset"]["ids"])) & validation
