"""URASys's FAQ collection as a source of the askfirst program's ranking (``askfirst.faq``): the fusion, the program
stage, and the session that builds the collection only when the stage is on."""

import json

import dspy
import pytest

from askfirst.config import load_config
from askfirst.programs.askfirst.faq_fusion import fuse_faq_hits
from askfirst.programs.askfirst.program import AskFirstProgram
from askfirst.programs.base import Resources
from askfirst.programs.registry import Registry
from askfirst.retrieval.chunking import Passage
from tests.conftest import PASSAGES, ListRetriever, SchemaFollowingEngine, configure_with
from tests.askfirst_harness import QueryCosines, scripted
from tests.test_urasys import DOCS, INDEX_SCRIPT

LAB, REGISTRATION, CS201 = PASSAGES


def entry(doc_id: str, n: int = 0) -> Passage:
    """An FAQ entry of ``doc_id`` (its n-th question or paraphrase)."""
    return Passage(f"{doc_id}::faq-0-{n}", doc_id, f"Question {n} about {doc_id}?", f"Q: Question {n}?\nA: an answer")


def ids(passages):
    return [p.passage_id for p in passages]


def test_an_faq_entry_votes_for_its_documents_best_ranked_passage():
    split = Passage("course-cs201#1", "course-cs201", "CS 201", "Second part.")
    fused = fuse_faq_hits([LAB, REGISTRATION, CS201, split], [entry("course-cs201")], k=60)
    # CS 201's first passage: 1/63 + 1/61 beats the lab fee's 1/61; its second passage gets no vote.
    assert ids(fused) == ["course-cs201", "fees-lab", "fees-registration", "course-cs201#1"]


def test_paraphrases_of_one_document_vote_once_and_an_unfound_document_joins_by_its_entry():
    faq = [entry("course-cs201", 0), entry("course-cs201", 1), entry("housing", 0), entry("fees-lab", 0)]
    fused = fuse_faq_hits([LAB, REGISTRATION, CS201], faq, k=60)
    # Votes by document rank: course-cs201 1, housing 2, fees-lab 3. Scores: fees-lab 1/61 + 1/63, course-cs201 1/63 + 1/61,
    # fees-registration 1/62, the housing entry 1/62 (ties keep first appearance).
    assert ids(fused) == ["fees-lab", "course-cs201", "fees-registration", "housing::faq-0-0"]
    assert fuse_faq_hits([LAB, REGISTRATION], [], k=60) == [LAB, REGISTRATION]


def program_with_faq(faq_hits, *overrides):
    config = load_config(overrides=["program.kind=askfirst", "notes.reranker=false", "askfirst.complexity_router=simple",
                                    "askfirst.faq=true", "askfirst.faq_k=3", *overrides])
    dense = QueryCosines({})
    resources = Resources(retriever=ListRetriever(), store=dense, embedder=dense)
    searched = []

    def faq_search(query, k):
        searched.append((query, k))
        return faq_hits[:k]

    program = AskFirstProgram(resources, config.askfirst, config.program, notes=Registry(resources).build("notes_rag", config),
                              faq_search=faq_search, retries=0)
    return program, searched


def test_the_program_reads_the_fused_ranking_and_records_the_entries(schema_lm):
    faq = [entry("course-cs201"), entry("housing"), entry("fees-lab"), entry("parking")]
    program, searched = program_with_faq(faq)
    with dspy.context(lm=schema_lm(scripted()), adapter=dspy.JSONAdapter()):
        reply = program(conversation="How much is the laboratory fee?")
    assert searched == [("How much is the laboratory fee?", 3)]  # faq_k entries for the searched query
    assert reply.extras["faq"] == ["course-cs201::faq-0-0", "housing::faq-0-0", "fees-lab::faq-0-0"]
    assert ids(reply.ranking)[:2] == ["fees-lab", "course-cs201"] and "housing::faq-0-0" in ids(reply.ranking)
    assert reply.route == "answer" and reply.citations == ["fees-lab"]


def test_without_the_stage_no_faq_collection_is_searched_or_built(monkeypatch, tmp_path):
    from askfirst.session import open_session

    engine = SchemaFollowingEngine(INDEX_SCRIPT)
    configure_with(monkeypatch, engine, where="askfirst.session.configure_dspy")
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("".join(json.dumps({"_id": d.doc_id, "title": d.title, "text": d.text}) + "\n" for d in DOCS))
    base = [f"runs_dir={tmp_path}", f"data.corpus={corpus}", "program.kind=askfirst", "urasys.faqs_per_chunk=1", "urasys.paraphrases=2"]
    session = open_session(load_config(overrides=base))
    try:
        assert session.augment_result is None and session.program.faq_search is None and engine.calls == 0
    finally:
        session.close()
    session = open_session(load_config(overrides=[*base, "askfirst.faq=true"]))
    try:
        assert session.augment_result.report.chunks == 2 and session.augment_result.lm_calls == engine.calls > 0
        found = session.program.faq_search("What does a parking permit cost?", 3)
        assert found and {p.doc_id for p in found} <= {"parking", "library"} and found[0].text.startswith("Q: ")
    finally:
        session.close()


def test_the_stage_on_an_index_without_its_faq_collection_names_the_command(tmp_path):
    from askfirst.datasets.errors import DataError
    from askfirst.retrieval.factory import open_store

    config = load_config(overrides=[f"runs_dir={tmp_path}", "program.kind=askfirst", "askfirst.faq=true"])
    store = open_store(config)
    try:
        with pytest.raises(DataError, match="collection 'demo_urasys_faq' of corpus 'demo' is empty; build it with: askfirst index --augment"):
            Registry(Resources(retriever=ListRetriever(), store=store)).build("askfirst", config)
    finally:
        store.close()


def test_index_augment_says_when_the_program_needs_nothing_more(monkeypatch, capsys, tmp_path):
    import sys

    from askfirst.cli.app import main

    engine = SchemaFollowingEngine(INDEX_SCRIPT)
    configure_with(monkeypatch, engine, where="askfirst.lm.factory.configure_dspy")
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("".join(json.dumps({"_id": d.doc_id, "title": d.title, "text": d.text}) + "\n" for d in DOCS))
    monkeypatch.setattr(sys, "argv", ["askfirst", "index", "--augment", "--corpus", str(corpus), "--set", f"runs_dir={tmp_path}",
                                      "--set", "program.kind=askfirst"])
    with pytest.raises(SystemExit) as exc:
        main()
    out = capsys.readouterr()
    assert exc.value.code in (0, None), out.err
    assert "program 'askfirst' needs nothing beyond the plain index with this config" in out.out and engine.calls == 0
