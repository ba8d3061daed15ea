import json

import pytest

from askfirst.datasets.corpus import Document, load_corpus
from askfirst.datasets.errors import DataError
from askfirst.retrieval.chunking import chunk_corpus, chunk_document, split_sentences


def test_demo_corpus_loads_with_unique_ids():
    docs = load_corpus("demo")
    assert 30 <= len(docs) <= 60
    assert len({d.doc_id for d in docs}) == len(docs)


def test_jsonl_and_folder(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps({"_id": "d1", "title": "T", "text": "Hello."}) + "\n\n" + json.dumps({"_id": 2, "text": "Two."}) + "\n")
    docs = load_corpus(f)
    assert [d.doc_id for d in docs] == ["d1", "2"] and docs[0].title == "T"
    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("# Fees\nThe fee is 5.")
    (folder / "sub" / "b.txt").write_text("Plain text.")
    (folder / "ignored.bin").write_bytes(b"\x00")
    docs = load_corpus(folder)
    assert [(d.doc_id, d.title) for d in docs] == [("a", "Fees"), ("sub/b", "b")]


def test_a_document_with_no_text_is_left_out_with_a_warning_naming_it(tmp_path, caplog):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("The fee is 5.")
    (folder / "blank.md").write_text("  \n")
    with caplog.at_level("WARNING", logger="askfirst.datasets.corpus"):
        docs = load_corpus(folder)
    assert [d.doc_id for d in docs] == ["a"]
    assert "1 document(s) with no text left out" in caplog.text and "blank.md" in caplog.text


def test_bad_corpora_are_named(tmp_path):
    with pytest.raises(DataError, match="corpus not found"):
        load_corpus(tmp_path / "nope.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(DataError, match="no documents"):
        load_corpus(empty)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"_id": "a", "text": "ok"}\n{"_id": "b", "text": \n')
    with pytest.raises(DataError, match=r"bad\.jsonl:2: malformed JSON"):
        load_corpus(bad)
    no_text = tmp_path / "no_text.jsonl"
    no_text.write_text('{"_id": "a"}\n')
    with pytest.raises(DataError, match=r"no_text\.jsonl:1: .*'text'"):
        load_corpus(no_text)
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"_id": "a", "text": "x"}\n{"_id": "a", "text": "y"}\n')
    with pytest.raises(DataError, match="duplicate document id 'a'.*dup.jsonl:2"):
        load_corpus(dup)


def test_short_document_keeps_its_id():
    doc = Document("fees-lab", "Lab", "One sentence. Two sentences.", "x")
    assert [(p.passage_id, p.doc_id) for p in chunk_document(doc, max_words=50)] == [("fees-lab", "fees-lab")]


def test_long_document_splits_on_sentences_with_overlap():
    sentences = [f"Sentence number {i} has five words." for i in range(10)]  # 6 words each
    doc = Document("d", "T", " ".join(sentences), "x")
    chunks = chunk_document(doc, max_words=20, overlap_sentences=1)
    assert [c.passage_id for c in chunks] == [f"d#{i}" for i in range(len(chunks))]
    assert all(len(c.text.split()) <= 20 for c in chunks)
    assert all(c.text.endswith(".") for c in chunks)  # never cut inside a sentence
    for a, b in zip(chunks, chunks[1:]):
        assert split_sentences(a.text)[-1] == split_sentences(b.text)[0]  # one sentence of overlap
    covered = {s for c in chunks for s in split_sentences(c.text)}
    assert covered == set(sentences)


def test_overlong_sentence_is_cut_by_words():
    doc = Document("d", "T", " ".join(["word"] * 45) + ".", "x")
    chunks = chunk_document(doc, max_words=20, overlap_sentences=0)
    assert [len(c.text.split()) for c in chunks] == [20, 20, 5]


def test_chunk_ids_are_stable_across_runs():
    docs = load_corpus("demo")
    first = [(p.passage_id, p.content_hash) for p in chunk_corpus(docs, max_words=40)]
    again = [(p.passage_id, p.content_hash) for p in chunk_corpus(load_corpus("demo"), max_words=40)]
    assert first == again and len(first) > len(docs)


def test_corpus_scope_keeps_the_documents_the_questions_cite(tmp_path):
    from askfirst.config import load_config
    from askfirst.datasets.errors import DataError
    from askfirst.datasets.splits import configured_corpus, configured_questions
    from askfirst.retrieval.factory import collection_name

    full = load_config(overrides=["data.limit=4"])
    scoped = load_config(overrides=["data.limit=4", "data.corpus_scope=questions"])
    cited = {d for e in configured_questions(scoped) for d in e.gold_passages}
    docs = configured_corpus(scoped)
    assert cited and {d.doc_id for d in docs} == cited and len(docs) < len(configured_corpus(full))
    assert collection_name(scoped) != collection_name(full) == "demo"
    assert collection_name(scoped) != collection_name(load_config(overrides=["data.limit=5", "data.corpus_scope=questions"]))
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "x", "turns": [{"role": "user", "content": "hi"}], "gold_passages": ["nowhere"]}\n')
    with pytest.raises(DataError, match="cite no document"):
        configured_corpus(load_config(overrides=[f"data.questions={questions}", "data.corpus_scope=questions"]))


def test_shuffled_questions_are_a_seeded_sample():
    from askfirst.config import load_config
    from askfirst.datasets.splits import configured_questions

    first = [e.id for e in configured_questions(load_config(overrides=["data.limit=5"]))]
    shuffled = [e.id for e in configured_questions(load_config(overrides=["data.limit=5", "data.shuffle=true"]))]
    assert shuffled != first and len(set(shuffled)) == 5
    assert shuffled == [e.id for e in configured_questions(load_config(overrides=["data.limit=5", "data.shuffle=true"]))]
    assert shuffled != [e.id for e in configured_questions(load_config(overrides=["data.limit=5", "data.shuffle=true", "seed=1"]))]


def test_per_label_keeps_the_first_questions_of_each_label_before_the_limit():
    from collections import Counter

    from askfirst.config import load_config
    from askfirst.datasets.splits import configured_questions, question_selection

    every = configured_questions(load_config())
    two = configured_questions(load_config(overrides=["data.per_label=2"]))
    labels = Counter(e.answerability for e in every)
    assert Counter(e.answerability for e in two) == {label: min(n, 2) for label, n in labels.items()}
    assert [e.id for e in two] == [e.id for e in every if e.id in {t.id for t in two}]  # in the set's order
    assert [e.id for e in configured_questions(load_config(overrides=["data.per_label=2", "data.limit=3"]))] == [e.id for e in two[:3]]
    assert question_selection(load_config(overrides=["data.per_label=2"])) != question_selection(load_config())


def test_data_ids_keeps_the_named_questions_of_the_split_and_names_an_id_it_lacks():
    from askfirst.config import load_config
    from askfirst.datasets.errors import DataError
    from askfirst.datasets.splits import configured_questions, question_selection

    train = configured_questions(load_config(overrides=["data.split=train"]))
    validation = configured_questions(load_config(overrides=["data.split=validation"]))
    wanted = [train[3].id, train[0].id]  # out of order: the set's order is kept
    picked = configured_questions(load_config(overrides=["data.split=train", f"data.ids=[{wanted[0]}, {wanted[1]}]"]))
    assert [e.id for e in picked] == [train[0].id, train[3].id]
    assert question_selection(load_config(overrides=[f"data.ids=[{wanted[0]}]"])) != question_selection(load_config())
    with pytest.raises(DataError, match=r"data.ids: 1 of 2 ids are not among the .* selected questions.*" + validation[0].id):
        configured_questions(load_config(overrides=["data.split=train", f"data.ids=[{train[0].id}, {validation[0].id}]"]))
