"""URASys: the semantic chunker, the two-phase index (FAQs linked to chunks, resumable), and every branch of
the manager's decision, with a schema-following fake LM (no model)."""

import dspy
import numpy as np
import pytest

from askfirst.config import ProgramConfig
from askfirst.programs.urasys.config import UrasysConfig
from askfirst.datasets.corpus import Document
from askfirst.programs.urasys.program import URASysProgram, manager_route
from askfirst.programs.urasys.indexing import AskAndAugment, ChunkAndTitle
from askfirst.retrieval.augmented_index import augment_corpus, faq_source_unit, read_ledger
from askfirst.retrieval.chunking import Passage
from askfirst.retrieval.semantic_chunker import SemanticChunker, sentence_spans
from tests.conftest import SchemaFollowingEngine, configure_with

TOPICS = ("parking", "tuition", "library")


def topic_embed(texts):
    """A stand-in embedder: one axis per topic word, so the topic shifts are where the chunker must break."""
    vectors = np.array([[t.lower().count(w) for w in TOPICS] + [0.01] for t in texts], dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


TEXT = ("Parking permits are sold at the gate. Parking costs EUR 95. Parking is free on Sundays. "
        "Tuition is EUR 4,200 a year. Tuition is paid in two parts. Late tuition costs a fee. "
        "The library opens at 8. The library lends laptops. Library cards are free.")


def test_chunker_breaks_where_the_topic_changes():
    chunks = SemanticChunker(topic_embed, buffer=0, min_chars=20, max_chars=1000).split(TEXT)
    assert [c.text.split()[0] for c in chunks] == ["Parking", "Tuition", "The"]
    assert all(TEXT[c.start : c.end] == c.text for c in chunks)  # spans point into the document


def test_chunker_holds_chunks_within_the_size_bounds():
    long_chunks = SemanticChunker(topic_embed, buffer=0, min_chars=20, max_chars=60).split(TEXT)
    assert all(len(c.text) <= 60 for c in long_chunks) and len(long_chunks) > 3
    merged = SemanticChunker(topic_embed, buffer=0, min_chars=150, max_chars=1000).split(TEXT)
    assert all(len(c.text) >= 150 for c in merged) and " ".join(c.text for c in merged) == TEXT
    assert SemanticChunker(topic_embed, min_chars=500, max_chars=1000).split("Too short. Stays whole.")[0].text == "Too short. Stays whole."
    assert sentence_spans("One. Two!\nThree") == [(0, 4), (5, 9), (10, 15)]
    with pytest.raises(ValueError, match="min_chars < max_chars"):
        SemanticChunker(topic_embed, min_chars=10, max_chars=5)


@pytest.mark.parametrize(("kind", "state", "attempt", "route"), [
    ("specific", "direct_answer", 0, "answer"),
    ("broad", "several_categories", 0, "clarify"),
    ("vague", "direct_answer", 0, "refine"),
    ("specific", "insufficient", 0, "refine"),
    ("specific", "insufficient", 3, "idk"),  # T = 4: the last attempt reports that nothing was found
    ("broad", "direct_answer", 0, "answer"),
    ("specific", "several_categories", 0, "clarify"),
    ("specific", "partial_answer", 0, "partial"),
])
def test_manager_route_follows_algorithm_1(kind, state, attempt, route):
    assert manager_route(kind, state, attempt=attempt, max_attempts=4) == route


def test_ask_when_vague_asks_instead_of_giving_up_on_a_vague_question():
    assert manager_route("vague", "insufficient", attempt=3, max_attempts=4, ask_when_vague=True) == "clarify"
    assert manager_route("vague", "insufficient", attempt=2, max_attempts=4, ask_when_vague=True) == "refine"
    assert manager_route("specific", "insufficient", attempt=3, max_attempts=4, ask_when_vague=True) == "idk"  # not vague: nothing found


FEE = Passage("fees#0", "fees", "Fees", "Tuition is EUR 4,200. The lab fee is EUR 120. Registration costs EUR 60.")
FAQ = Passage("fees~u0~q0.0", "fees", "What is the lab fee?", "Q: What is the lab fee?\nA: EUR 120")


def urasys(script, **switches):
    engine = SchemaFollowingEngine(script)
    program = URASysProgram(faq_search=lambda q, k: [FAQ], document_search=lambda q, k: [FEE],
                            config=UrasysConfig(max_attempts=2, **switches), program=ProgramConfig(), retries=0)
    return program, engine


def run(program, engine, question):
    with dspy.context(lm=dspy.LM("test/schema", engine=engine, cache=False), adapter=dspy.JSONAdapter()):
        return program(conversation=question)


AGENTS = {"next_query": {"adequate": True, "findings": "The lab fee is EUR 120 [fees~u0~q0.0]", "next_query": ""},
          "next_search_expression": {"adequate": True, "findings": "Lab fee EUR 120 [fees#0]", "next_search_expression": ""},
          "sub_queries": {"sub_queries": ["lab fee amount"]}}


def test_specific_question_with_direct_evidence_is_answered_with_citations():
    script = AGENTS | {"evidence_state": {"question_kind": "specific", "evidence_state": "direct_answer"},
                       "cited_ids": {"answer": "The lab fee is EUR 120.", "cited_ids": ["fees~u0~q0.0", "made-up"]}}
    program, engine = urasys(script)
    pred = run(program, engine, "What is the lab fee?")
    assert pred.route == "answer" and pred.answer == "The lab fee is EUR 120." and pred.citations == ["fees~u0~q0.0"]
    assert {p.passage_id for p in pred.evidence} == {"fees#0", "fees~u0~q0.0"} and pred.attempts == 1
    assert engine.calls == 5  # decompose, FAQ agent, document agent, manager decision, answer


def test_broad_question_gets_a_clarification_naming_the_categories():
    script = AGENTS | {"evidence_state": {"question_kind": "broad", "evidence_state": "several_categories",
                                          "categories": ["tuition", "lab fee", "registration fee"]}}
    program, engine = urasys(script)
    pred = run(program, engine, "How much is the fee?")
    assert pred.route == "clarify" and pred.options == ["tuition", "lab fee", "registration fee"]
    assert "tuition; lab fee; registration fee" in pred.answer and pred.answer.endswith("?")


def test_clarification_names_each_category_once():
    script = AGENTS | {"evidence_state": {"question_kind": "broad", "evidence_state": "several_categories",
                                          "categories": ["space age", "space exploration", "Space exploration ", "", "space age"]}}
    program, engine = urasys(script)
    pred = run(program, engine, "What about space?")
    assert pred.options == ["space age", "space exploration"]
    assert "space age; space exploration. Which" in pred.answer


def test_one_category_named_twice_is_not_offered_as_a_choice():
    script = AGENTS | {"evidence_state": {"question_kind": "broad", "evidence_state": "several_categories",
                                          "categories": ["tuition", "Tuition"]}}
    program, engine = urasys(script)
    pred = run(program, engine, "How much is the fee?")
    assert "several things" not in pred.answer and pred.options != ["tuition", "Tuition"]  # one category is no choice


def test_insufficient_evidence_is_refined_and_searched_again():
    verdicts = iter([{"question_kind": "vague", "evidence_state": "insufficient", "refined_question": "What is the chemistry lab fee?"},
                     {"question_kind": "specific", "evidence_state": "direct_answer"}])
    searched = []
    script = AGENTS | {"evidence_state": lambda _: next(verdicts), "cited_ids": {"answer": "EUR 120.", "cited_ids": ["fees#0"]}}
    program, engine = urasys(script, decomposition=False)
    program.document_agent._search = lambda q, k: searched.append(q) or [FEE]
    pred = run(program, engine, "That lab thing?")
    assert pred.route == "answer" and pred.attempts == 2
    assert searched == ["That lab thing?", "What is the chemistry lab fee?"]  # the second round searched the refined question


def test_nothing_found_after_t_attempts_says_so():
    script = {"next_query": {"adequate": False, "findings": "nothing", "next_query": ""},
              "next_search_expression": {"adequate": False, "findings": "nothing", "next_search_expression": ""},
              "evidence_state": {"question_kind": "specific", "evidence_state": "insufficient", "refined_question": "parking price"}}
    program, engine = urasys(script, decomposition=False)
    pred = run(program, engine, "What does parking cost?")
    assert pred.route == "idk" and pred.attempts == 2 and "after 2 search rounds" in pred.answer and pred.label == "UNANSWERABLE"


def test_a_still_vague_question_gets_a_clarifying_question_when_asked_to():
    script = AGENTS | {"evidence_state": {"question_kind": "vague", "evidence_state": "insufficient", "refined_question": "the fee"},
                       "clarifying_question": {"options": ["lab fee", "tuition"], "clarifying_question": "Which fee: the lab fee or tuition?"}}
    program, engine = urasys(script, decomposition=False, ask_when_vague=True)
    pred = run(program, engine, "How much is it?")
    assert pred.route == "clarify" and pred.answer == "Which fee: the lab fee or tuition?" and pred.options == ["lab fee", "tuition"]
    assert pred.attempts == 2 and pred.label == "UNDERSPECIFIED"
    program, engine = urasys(script, decomposition=False)  # Algorithm 1 as published: no information found
    assert run(program, engine, "How much is it?").route == "idk"


def test_ablation_switches_remove_their_steps():
    script = AGENTS | {"evidence_state": {"question_kind": "specific", "evidence_state": "direct_answer"},
                       "cited_ids": {"answer": "EUR 120.", "cited_ids": []}}
    program, engine = urasys(script, faq_agent=False, decomposition=False)
    assert program.faq_agent is None and program.decompose is None
    assert run(program, engine, "What is the lab fee?").route == "answer" and engine.calls == 3  # document agent, decision, answer
    with pytest.raises(ValueError, match="at least one"):
        urasys(script, faq_agent=False, document_agent=False)


DOCS = [Document("parking", "Parking", "Parking permits are sold at the gate. Parking costs EUR 95 per semester.", "t:1"),
        Document("library", "Library", "The library opens at 8 in the morning. The library lends laptops for a week.", "t:2")]
INDEX_SCRIPT = {
    "rewritten_chunk": lambda text: {"rewritten_chunk": text.split("chunk")[-1].strip(" :\"\n}{")},
    "title": {"title": "A titled chunk"},
    "faqs": {"faqs": [{"question": "What does a parking permit cost?", "answer": "EUR 95 per semester"}]},
    # The 0.5B model has appended the answer to a "paraphrase": that one must be dropped.
    "paraphrases": {"paraphrases": ["What does a parking permit cost? EUR 95 per semester", "How much is parking?", "Price of a parking permit?"]},
}


def augment(tmp_path, engine, docs=DOCS):
    chunker = SemanticChunker(topic_embed, min_chars=10, max_chars=1000)
    with dspy.context(lm=dspy.LM("test/schema", engine=engine, cache=False), adapter=dspy.JSONAdapter()):
        return augment_corpus(docs, chunker=chunker, chunk_and_title=ChunkAndTitle(retries=0), ledger=tmp_path / "ledger.jsonl",
                              ask_and_augment=AskAndAugment(faqs_per_chunk=2, paraphrases=2, retries=0), settings="test")


def test_faq_expansion_keeps_every_paraphrase_linked_to_its_answer_and_chunk(tmp_path):
    units, faqs, report = augment(tmp_path, SchemaFollowingEngine(INDEX_SCRIPT))
    assert [u.passage_id for u in units] == ["parking~u0", "library~u0"] and units[0].title == "A titled chunk"
    parking = [f for f in faqs if f.doc_id == "parking"]
    assert [f.title for f in parking] == ["What does a parking permit cost?", "How much is parking?", "Price of a parking permit?"]
    assert all(f.text.endswith("A: EUR 95 per semester") and faq_source_unit(f.passage_id) == "parking~u0" for f in parking)
    assert report.chunks == report.processed == 2 and report.faqs == 6


class StopAfter(SchemaFollowingEngine):
    def __init__(self, scripted, stop_at):
        super().__init__(scripted)
        self.stop_at = stop_at

    def complete(self, request):
        if self.calls + 1 >= self.stop_at:
            raise KeyboardInterrupt
        return super().complete(request)


def test_resumed_indexing_repeats_no_lm_call(tmp_path):
    full = SchemaFollowingEngine(INDEX_SCRIPT)
    augment(tmp_path / "full", full)
    per_chunk = full.calls // 2  # rewrite, title, create, expand

    with pytest.raises(KeyboardInterrupt):
        augment(tmp_path, StopAfter(INDEX_SCRIPT, stop_at=per_chunk + 2))  # dies inside the second chunk
    assert list(read_ledger(tmp_path / "ledger.jsonl")) == ["parking~u0"]
    resumed = SchemaFollowingEngine(INDEX_SCRIPT)
    _, _, report = augment(tmp_path, resumed)
    assert resumed.calls == per_chunk and report.reused == 1 and report.processed == 1

    again = SchemaFollowingEngine(INDEX_SCRIPT)
    added = Document("canteen", "Canteen", "The canteen serves lunch from noon. A meal costs EUR 4.", "t:3")
    _, _, report = augment(tmp_path, again, docs=[*DOCS, added])
    assert again.calls == per_chunk and report.reused == 2  # only the new document's chunk is paid for


def test_unchanged_documents_are_not_even_rechunked(tmp_path, monkeypatch):
    augment(tmp_path, SchemaFollowingEngine(INDEX_SCRIPT))
    split_calls = []
    original = SemanticChunker.split
    monkeypatch.setattr(SemanticChunker, "split", lambda self, text: split_calls.append(text) or original(self, text))
    units, faqs, report = augment(tmp_path, SchemaFollowingEngine(INDEX_SCRIPT))
    assert split_calls == [] and report.reused == 2 and [u.passage_id for u in units] == ["parking~u0", "library~u0"] and len(faqs) == 6
    edited = Document("library", "Library", DOCS[1].text + " Study rooms can be booked online.", "t:2")
    augment(tmp_path, SchemaFollowingEngine(INDEX_SCRIPT), docs=[DOCS[0], edited])
    assert split_calls == [edited.text]  # only the edited document is chunked again


def test_urasys_csv_errors_name_file_and_line(tmp_path):
    from askfirst.datasets.urasys import load_urasys_corpus, load_urasys_questions

    (tmp_path / "urasys").mkdir()
    bad = tmp_path / "urasys" / "Squad2_1000_dev.csv"
    bad.write_text('paragraph,question,answer\n"Plain paragraph.",Q1?,A1\n"[{\'title\': broken",Q2?,No answer\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"Squad2_1000_dev.csv:3: unreadable 'paragraph'"):
        load_urasys_corpus(tmp_path, "squad2")
    bad.write_text('paragraph,question,answer\n"Plain paragraph.",Q1?,A1\n"Other.",Q2?,No answer\n', encoding="utf-8")
    first, second = load_urasys_questions(tmp_path, "squad2")
    assert (first.answerability, first.gold_answers, second.answerability) == ("ANSWERABLE", ["A1"], "UNANSWERABLE")
    with pytest.raises(ValueError, match="unknown URASys set 'nope'"):
        load_urasys_questions(tmp_path, "nope")


def test_index_augment_command_builds_both_collections_and_resumes(monkeypatch, capsys, tmp_path):
    import json
    import sys

    from askfirst.cli.app import main

    engine = SchemaFollowingEngine(INDEX_SCRIPT)
    configure_with(monkeypatch, engine, where="askfirst.lm.factory.configure_dspy")
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("".join(json.dumps({"_id": d.doc_id, "title": d.title, "text": d.text}) + "\n" for d in DOCS))

    def index():
        monkeypatch.setattr(sys, "argv", ["askfirst", "index", "--augment", "--corpus", str(corpus), "--set", f"runs_dir={tmp_path}",
                                          "--set", "program.kind=urasys", "--set", "urasys.faqs_per_chunk=1", "--set", "urasys.paraphrases=2"])
        with pytest.raises(SystemExit) as exc:
            main()
        return exc.value.code, capsys.readouterr()

    code, out = index()
    assert code in (0, None), out.err
    assert "2 chunks (2 through the LM, 0 from the ledger, 0 failed" in out.out and "6 FAQ entries" in out.out
    assert "URASys index: chunk 2/2" in out.err  # progress on stderr
    calls = engine.calls
    code, out = index()
    assert "0 through the LM, 2 from the ledger" in out.out and engine.calls == calls and "0 units and 0 FAQ entries embedded" in out.out


def open_urasys_session(monkeypatch, tmp_path, *overrides):
    """A session of the URASys program over ``DOCS``, its LM following ``INDEX_SCRIPT``; with the engine."""
    import json

    from askfirst.config import load_config
    from askfirst.session import open_session

    engine = SchemaFollowingEngine(INDEX_SCRIPT)
    configure_with(monkeypatch, engine, where="askfirst.session.configure_dspy")
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("".join(json.dumps({"_id": d.doc_id, "title": d.title, "text": d.text}) + "\n" for d in DOCS))
    cfg = load_config(overrides=[f"runs_dir={tmp_path}", f"data.corpus={corpus}", "program.kind=urasys", *overrides])
    return open_session(cfg), engine


def test_a_urasys_session_reports_its_index_update(monkeypatch, tmp_path):
    session, engine = open_urasys_session(monkeypatch, tmp_path, "urasys.faqs_per_chunk=1", "urasys.paraphrases=2")
    try:
        result = session.augment_result
        assert result.report.chunks == 2 and result.report.processed == 2 and result.lm_calls == engine.calls > 0
    finally:
        session.close()


def test_a_urasys_session_without_faq_or_units_builds_no_augmented_index(monkeypatch, tmp_path):
    session, engine = open_urasys_session(monkeypatch, tmp_path, "urasys.faq_agent=false", "urasys.chunk_and_title=false")
    try:
        assert session.augment_result is None and engine.calls == 0  # the document agent reads the plain index
        assert len(session.retriever) == len(DOCS)
    finally:
        session.close()
