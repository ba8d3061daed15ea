"""Loaders on the real benchmark data in ../shared/data (skipped where it is absent)."""


import pytest

from askfirst.datasets.corpus import load_corpus
from askfirst.datasets.mtrag import COLLECTIONS, SYNTHETIC_FILE, load_mtrag_synthetic, load_mtrag_tasks, passage_pool_path
from askfirst.datasets.shared_data import shared_data_dir

DATA = shared_data_dir()
pytestmark = pytest.mark.skipif(not (DATA / "mtrag").is_dir(), reason=f"shared MTRAG data not found at {DATA} (set ASKFIRST_DATA_DIR)")


def test_mtrag_tasks_load_with_qrels_and_collections():
    tasks = load_mtrag_tasks(DATA)
    assert len(tasks) == 265
    assert {t.collection for t in tasks} == set(COLLECTIONS)
    assert {t.answerability for t in tasks} == {"ANSWERABLE", "PARTIAL", "UNANSWERABLE", "UNDERSPECIFIED"}
    answerable = [t for t in tasks if t.answerability == "ANSWERABLE"]
    assert sum(bool(t.qrels) for t in answerable) / len(answerable) > 0.9
    assert all(t.conversation[-1]["role"] == "user" for t in tasks)


def test_every_judged_passage_is_in_the_pool():
    tasks = load_mtrag_tasks(DATA)
    for name in COLLECTIONS:
        ids = {d.doc_id for d in load_corpus(passage_pool_path(DATA, name))}
        judged = {p for t in tasks if t.collection == name for p in t.qrels}
        assert judged <= ids, name


def test_named_sources_split_by_collection_and_set():
    from askfirst.config import load_config
    from askfirst.datasets.splits import configured_questions

    cloud = load_corpus("mtrag:cloud")
    assert cloud and all(d.source.startswith(str(passage_pool_path(DATA, "cloud"))) for d in cloud)
    cfg = load_config(overrides=["data.questions=mtrag", "data.limit=24"])
    train, val = configured_questions(cfg, split="train"), configured_questions(cfg, split="validation")
    assert len(train) + len(val) == 24 and not {e.id for e in train} & {e.id for e in val}
    with pytest.raises(ValueError, match="unknown MTRAG collection"):
        load_corpus("mtrag:nope")


@pytest.mark.skipif(not (DATA / "mtrag" / SYNTHETIC_FILE).is_file(), reason=f"MTRAG synthetic tasks not found under {DATA / 'mtrag'}")
def test_mtrag_synthetic_tasks_load_with_their_contexts_as_gold_passages():
    tasks = load_mtrag_synthetic(DATA)
    assert len(tasks) == 1181 and {e.answerability for e in tasks} == {"ANSWERABLE", "PARTIAL", "UNANSWERABLE"}
    assert {e.collection for e in tasks} == set(COLLECTIONS)
    pool = {d.doc_id for name in COLLECTIONS for d in load_corpus(f"mtrag:{name}")}
    answerable = [e for e in tasks if e.answerability == "ANSWERABLE"]
    assert all(e.gold_passages and set(e.gold_passages) <= pool for e in answerable)
    assert not any(e.gold_passages for e in tasks if e.answerability == "UNANSWERABLE")  # they come with no contexts


@pytest.mark.skipif(not (DATA / "urasys").is_dir(), reason=f"URASys question sets not found at {DATA / 'urasys'}")
def test_urasys_sets_load_with_their_paragraphs_as_corpus():
    from askfirst.datasets.questions import load_questions

    squad = load_questions("urasys:squad2")
    assert len(squad) == 504 and sum(e.answerability == "UNANSWERABLE" for e in squad) == 250
    assert all(e.gold_answers for e in squad if e.answerability == "ANSWERABLE")
    ambiguous = load_questions("urasys:squad2_ambiguous")
    assert {e.answerability for e in ambiguous} == {"UNDERSPECIFIED"} and all(e.clarification_options for e in ambiguous)
    for name, questions in (("squad2", squad), ("squad2_ambiguous", ambiguous)):
        ids = {d.doc_id for d in load_corpus(f"urasys:{name}")}
        assert all(set(e.gold_passages) <= ids and e.gold_passages for e in questions)


@pytest.mark.skipif(not (DATA / "asqa").is_dir() or not (DATA / "multihop").is_dir(), reason=f"ASQA / multi-hop data not found under {DATA}")
def test_ambiguous_and_multihop_sets_load_with_their_corpora():
    from askfirst.datasets.questions import load_questions
    from askfirst.evaluation.scoring import score_prediction

    asqa = load_questions("asqa")
    assert len(asqa) == 458 and all(e.answerability == "UNDERSPECIFIED" and len(e.qa_pairs) >= 1 for e in asqa)
    ids = {d.doc_id for d in load_corpus("asqa")}
    assert all(set(e.gold_passages) <= ids for e in asqa)
    first = asqa[0]  # who played the Weasley brothers: one reading's actor named of several readings
    scores = score_prediction(first, {"route": "answer", "answer": f"{first.qa_pairs[0][1][0]} played one of them.", "retrieved_docs": []})
    assert 0 < scores["str_em"] < 1
    ambignq = load_questions("ambignq")
    assert {e.answerability for e in ambignq} == {"ANSWERABLE", "UNDERSPECIFIED"}
    for name in ("hotpot", "musique", "wikihop"):
        questions, ids = load_questions(f"multihop:{name}"), {d.doc_id for d in load_corpus(f"multihop:{name}")}
        assert questions and all(set(e.gold_passages) <= ids for e in questions) and all(e.gold_answers for e in questions)


def test_the_all_tasks_training_half_never_holds_a_validation_conversation():
    """The benches that tune on "all tasks' training half" (data.limit=null, data.split=train: 132 tasks) measure the
    program on the validation half of the first 80 shuffled tasks (the built-in mtrag config). The split orders
    conversations by hash, so the two would share a conversation only if this data or its shuffle changed."""
    from askfirst.config import config_path, load_config
    from askfirst.datasets.splits import configured_questions

    def conversations(examples):
        return {str(e.get("conversation_id") or e.id) for e in examples}

    config = config_path("mtrag")
    validation = configured_questions(load_config(config), split="validation")
    pool = configured_questions(load_config(config, overrides=["data.limit=null"]), split="train")
    assert len(validation) == 40 and len(pool) == 132
    assert not conversations(validation) & conversations(pool)
