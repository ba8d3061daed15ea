"""The collection check (``askfirst.absent_terms``): questions about things the collection never mentions."""

from askfirst.programs.askfirst.absent_terms import coverage, question_parts, term_checker
from askfirst.programs.askfirst.lexicon import document_frequency, has_term
from askfirst.retrieval.bm25 import tokenize
from tests.conftest import PASSAGES, LexicalRetriever, ListRetriever
from tests.askfirst_harness import ANSWERABLE, assessment, run, scripted

ABOUT_FEES = "What is the registration fee for the medical school?"
HALF_ABOUT_FEES = "What is the lab fee, and does the university sell used textbooks?"


def test_a_question_is_cut_at_sentence_ends_and_at_and_before_a_question_word():
    assert question_parts(HALF_ABOUT_FEES) == ["What is the lab fee", "does the university sell used textbooks"]
    assert question_parts("I want CS 310. Which courses come first and what is the math one?") == [
        "I want CS 310", "Which courses come first", "what is the math one"]
    # "and" inside a part, and a decimal point, cut nothing
    assert question_parts("Is a GPA of 3.7 and a thesis needed, and in which semester?") == ["Is a GPA of 3.7 and a thesis needed, and in which semester"]


def test_a_word_is_known_by_its_stem_in_the_passages_or_as_written_in_the_collection():
    asked = []
    known = term_checker(PASSAGES[:1], lambda token: asked.append(token) or token == "semester")
    assert known("courses") and known("fees") and known("semester") and not known("parking")
    assert asked[0] == "semester" and "parking" in asked and "fees" not in asked  # asked only about what the passages lack


def test_a_part_needs_enough_unknown_words_to_count_as_uncovered():
    known = term_checker(PASSAGES, lambda token: False)
    record = coverage(ABOUT_FEES, known, min_words=2)
    assert record["verdict"] == "none" and record["parts"] == [{"part": ABOUT_FEES.rstrip("?"), "unknown": ["medical", "school"], "covered": False}]
    assert coverage(ABOUT_FEES, known, min_words=3)["verdict"] == "all"
    half = coverage(HALF_ABOUT_FEES, known, min_words=2)
    assert half["verdict"] == "some" and half["uncovered"] == 1 and half["parts"][0]["unknown"] == ["lab"]
    assert coverage("And you?", known, min_words=1)["verdict"] == "all"  # nothing but stopwords is no part


def test_the_collection_is_asked_through_its_bm25_index_and_without_one_nothing_is_unknown():
    assert has_term(LexicalRetriever(), "registration") and not has_term(LexicalRetriever(), "medical")
    assert has_term(ListRetriever(), "medical")
    having = sum("registration" in tokenize(f"{p.title} {p.text}") for p in PASSAGES)
    assert having and document_frequency(LexicalRetriever(), "registration") == having
    assert document_frequency(LexicalRetriever(), "medical") == 0 and document_frequency(ListRetriever(), "medical") is None


def test_a_question_about_what_the_collection_never_mentions_is_idk_with_no_lm_call(schema_lm):
    assessed = []
    script = scripted(asked_about=lambda text: assessed.append(text) or ANSWERABLE)
    reply, *_ = run(schema_lm, ABOUT_FEES, script=script, retriever=LexicalRetriever())
    assert reply.route == "idk" and reply.label == "UNANSWERABLE" and reply.absent_terms["verdict"] == "none"
    assert assessed == [] and not reply.escalated and not reply.citations
    # Off, or with a retriever that cannot say what the collection has, the assessment decides (here: answer).
    reply, *_ = run(schema_lm, ABOUT_FEES, "askfirst.absent_terms=0", "askfirst.ambiguity=off", script=script, retriever=LexicalRetriever())
    assert reply.route == "answer" and reply.absent_terms is None
    reply, *_ = run(schema_lm, ABOUT_FEES, "askfirst.ambiguity=off", script=script)
    assert reply.route == "answer" and reply.absent_terms["verdict"] == "all"


def test_a_question_with_one_part_the_collection_never_mentions_is_partial(schema_lm):
    answered = []
    script = scripted(cited_ids=lambda text: answered.append(text) or {"answer": "The lab fee is EUR 85.", "cited_ids": ["fees-lab"]})
    reply, *_ = run(schema_lm, HALF_ABOUT_FEES, "askfirst.escalation=false", script=script, retriever=LexicalRetriever())
    assert reply.route == "partial" and reply.label == "PARTIAL" and reply.citations == ["fees-lab"]
    # The covered part gets a complete answer; the uncovered one is what the reply says is missing.
    assert reply.missing == "does the university sell used textbooks"
    assert reply.answer == "The lab fee is EUR 85. What the documents do not say: does the university sell used textbooks"
    assert len(answered) == 1 and "[[ ## question ## ]]\nWhat is the lab fee\n\n[[ ## passages ## ]]" in answered[0]
    assert reply.absent_terms["verdict"] == "some" and reply.absent_terms["overruled"] == "ANSWERABLE"
    assert reply.extras["ambiguity"] == {}  # a partial question is not asked about
    # Asked about as a whole, its uncovered words are missing from every passage too; the collection check reads the
    # user's parts first, and the key-term check exempts the PARTIAL it gives (the demo's p01 was "I don't know").
    whole = scripted(asked_about=assessment("ANSWERABLE", asked_about=HALF_ABOUT_FEES))
    reply, *_ = run(schema_lm, HALF_ABOUT_FEES, "askfirst.escalation=false", "askfirst.key_terms=2", script=whole, retriever=LexicalRetriever())
    assert reply.route == "partial" and reply.absent_terms["overruled"] == "ANSWERABLE"
    assert reply.key_terms["missing"] == ["lab", "university", "sell", "used", "textbooks"] and reply.key_terms["overruled"] is None
    reply, *_ = run(schema_lm, HALF_ABOUT_FEES, "askfirst.escalation=false", "askfirst.absent_terms=0", "askfirst.key_terms=2", script=whole,
                    retriever=LexicalRetriever())
    assert reply.route == "idk" and reply.key_terms["overruled"] == "ANSWERABLE"  # the key-term check alone
    # The words are in the collection, though not in the passages retrieved: the assessment's label stands.
    collection = [*PASSAGES, PASSAGES[0].__class__("shop", "shop", "Bookshop", "The university bookshop will sell used textbooks.")]
    reply, *_ = run(schema_lm, HALF_ABOUT_FEES, "askfirst.escalation=false", "askfirst.ambiguity=off", retriever=LexicalRetriever(collection=collection))
    assert reply.route == "answer" and reply.absent_terms["verdict"] == "all"


def test_words_that_name_no_topic_are_never_unknown():
    # A small collection (the paragraphs of a few SQuAD2 questions) lacks "did" and "could": only "near" is unknown here,
    # so the question is covered, where "did" and "near" made it uncovered.
    collection = {"europeans", "take", "control", "region", "congo", "river"}
    known = term_checker([], collection.__contains__)
    record = coverage("When did the Europeans take control of the region near the Congo River?", known, min_words=2)
    assert record["verdict"] == "all" and record["parts"][0]["unknown"] == ["near"]
    # a part of function words only says nothing, so the part about the fee decides alone
    assert [p["part"] for p in coverage("Could you? What is the parking fee", known, min_words=2)["parts"]] == ["What is the parking fee"]
