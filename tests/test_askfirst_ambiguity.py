"""The askfirst program asking first on a scripted LM: evidence divergence, the ambiguity detector, and answering every
reading (answer_all)."""

import pytest

from askfirst.programs.askfirst.divergence import divergent_options, named_document, named_in_conversation, rarest_word, reading_name, typed_answer
from askfirst.programs.askfirst.question_form import answer_type, question_form
from tests.askfirst_harness import UNANSWERABLE, passage_answers, referent, run, scripted
from tests.conftest import PASSAGES, LexicalRetriever


def test_answering_every_reading_is_not_cut_short_by_the_referent_check(schema_lm):
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.mode=answer_all", "askfirst.referent_check=true",
                    "askfirst.answer_all_readings=false", script=scripted(unnamed=referent("UNDERSPECIFIED")))
    assert reply.route == "answer" and reply.referent["flagged"] and reply.citations == ["fees-lab", "fees-registration"]


def test_answering_all_readings_plans_them_searches_each_and_answers_them_in_one_long_answer(schema_lm):
    written = []
    readings = {"clarified_queries": ["How much is the laboratory fee?", "How much is the registration fee?"]}
    long_answer = {"short_answers": ["EUR 85", "EUR 60"], "long_answer": "The laboratory fee is EUR 85; the registration fee is EUR 60."}
    script = scripted(clarified_queries=readings, long_answer=lambda text: written.append(text) or long_answer)
    for setting in ("askfirst.ambiguity=off", "askfirst.ambiguity=divergence"):  # whether or not divergence is on
        reply, program, retriever, _ = run(schema_lm, "How much is the fee?", "askfirst.mode=answer_all", setting, script=script)
        assert reply.route == "answer" and reply.answer == long_answer["long_answer"] and reply.options == readings["clarified_queries"]
        assert retriever.calls[-2:] == [[q] for q in readings["clarified_queries"]]  # each reading searched, no LM call
        assert "1. How much is the laboratory fee?\n[fees-lab]" in written[-1] and "2. How much is the registration fee?" in written[-1]
        assert reply.citations and set(reply.citations) <= {p.passage_id for p in reply.evidence}
        assert "passage_answers" not in {n.split(".")[0] for n, _ in program.named_predictors()}  # every reading answered: none asked
    assert len(written) == 2
    reply, program, _, _ = run(schema_lm, "How much is the fee?", "askfirst.mode=answer_all", "askfirst.ambiguity=off",
                               "askfirst.answer_all_readings=false", script=script)
    assert reply.answer == "The lab fee is EUR 85." and reply.citations == ["fees-lab"]  # the complete-answer responder's
    assert not {"readings", "write_readings"} & {n.split(".")[0] for n, _ in program.named_predictors()}


def test_diverging_evidence_asks_first_naming_the_documents(schema_lm):
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.ambiguity=either")
    assert reply.route == "clarify" and reply.options == ["Laboratory fee", "Registration fee"] and reply.label == "UNDERSPECIFIED"
    assert "Laboratory fee" in reply.answer and reply.ambiguity["divergence"]["diverges"] and not reply.ambiguity["detector"]["ambiguous"]


@pytest.mark.parametrize("question, form", [("Why is there a fee?", "why"), ("Anyway, can I pay the fee online?", "yes/no"),
                                            ("How do I pay the fee?", "how-to")])
def test_divergence_is_asked_only_of_a_question_for_a_fact(schema_lm, question, form):
    reply, *_ = run(schema_lm, question)
    assert reply.route == "answer" and reply.ambiguity["divergence"] == {"diverges": False, "form": form}
    reply, *_ = run(schema_lm, question, "askfirst.factoid_divergence=false")
    assert reply.route == "clarify" and reply.options == ["Laboratory fee", "Registration fee"]


@pytest.mark.parametrize(("mode", "asks_different_kinds", "asks_times"), [("always", True, True), ("same_kind", False, True),
                                                                     ("never", False, False)])
def test_multipart_divergence_decides_whether_a_question_of_two_parts_gets_divergence(schema_lm, mode, asks_different_kinds, asks_times):
    def divergence_asked(question: str) -> bool:
        reply, _, _, lm = run(schema_lm, question, f"askfirst.multipart_divergence={mode}")
        asked = any("passage_answers" in str(call["messages"]) for call in lm.history)
        assert (reply.route == "clarify") == asked and asked == (reply.ambiguity["divergence"] != {"diverges": False, "parts": 2})
        return asked

    assert divergence_asked("How much is the fee, and when is the fee paid?") == asks_different_kinds  # a quantity and a time
    assert divergence_asked("When is the fee due, and when is the fee refunded?") == asks_times  # a time each
    assert divergence_asked("How much is the fee?")  # one part: asked whatever the mode


def test_a_question_asks_for_a_fact_unless_each_question_sentence_is_why_how_to_or_yes_no():
    assert [question_form(q) for q in (
        "How much is the fee?", "When is the deadline?", "How long is it?", "the lab fee?", "Tell me about the fees.",
        "In 2015, who won?", "Which fee, of the two, is higher?",
        "Is it open? What time?", "", "Can I skip the meal plan, and how much is the rent?")] == ["fact"] * 10
    assert [question_form(q) for q in ("Why was the wall built?", "How do I apply?", "How to apply?", "How is it calculated?",
                                       "I see. Anyway, Can I file online?", "Is it open? Can I come?", "Can I pay, or do I wait?")] == [
        "why", "how-to", "how-to", "how-to", "yes/no", "yes/no", "yes/no"]
    # a why-question asked with "what", and what stays a fact: a meaning, a name, the purpose as one of two things asked
    assert [question_form(q) for q in ("What was the reason for the revocation of the Act?", "What are the main benefits of a Roth IRA?",
                                       "What is the meaning of yang?", "What is Benefit Charges?", "What is the fee, and what is the purpose of it?",
                                       "What is the reason?")] == ["why", "why", "fact", "fact", "fact", "fact"]


def test_both_signals_needed_when_configured_so(schema_lm):
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.ambiguity=both", "askfirst.first_turn_cue_answered=false")
    assert reply.route == "answer" and reply.citations == ["fees-lab"] and reply.ambiguity["ambiguous"] is False


def test_the_detector_alone_asks_with_its_aspects(schema_lm):
    detector = {"is_ambiguous": True, "ambiguity_type": "semantic", "ambiguous_aspects": ["lab fee", "registration fee"],
                "clarification_needed": "which fee"}
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.ambiguity=detector", script=scripted(is_ambiguous=detector))
    assert reply.route == "clarify" and reply.options == ["lab fee", "registration fee"] and "divergence" not in reply.ambiguity


@pytest.mark.parametrize("setting", ["askfirst.ambiguity=off", "askfirst.mode=answer_all"])
def test_no_asking_when_switched_off_or_answering_all(schema_lm, setting):
    reply, program, _, _ = run(schema_lm, "How much is the fee?", setting, "askfirst.first_turn_cue_answered=false",
                               "askfirst.answer_all_readings=false")
    assert reply.route == "answer"
    if setting == "askfirst.mode=answer_all":  # without the readings stage, each reading answered by its own passage, cited
        assert reply.answer == "Laboratory fee: EUR 85 [fees-lab]. Registration fee: EUR 60 [fees-registration]."
        assert reply.citations == ["fees-lab", "fees-registration"]
    names = {n.split(".")[0] for n, _ in program.named_predictors()}
    assert "assess" in names and "detect" not in names  # the default: divergence alone
    assert ("passage_answers" in names) == (setting != "askfirst.ambiguity=off")


def test_divergence_needs_two_documents_and_two_answers():
    a, b, c = PASSAGES
    assert divergent_options([(a, "EUR 85"), (b, "EUR 60"), (c, "none")]) == ["Laboratory fee", "Registration fee"]
    assert divergent_options([(a, "EUR 85"), (b, "eur 85."), (c, "none")]) == []  # the same answer, normalised
    chunk = a.__class__("fees-lab#1", "fees-lab", "Laboratory fee", "more")
    assert divergent_options([(a, "EUR 85"), (chunk, "EUR 80")]) == []  # two chunks of one document never diverge
    cs201, cs310 = (a.__class__(f"course-cs{n}", f"course-cs{n}", f"CS {n} {name}", "") for n, name in ((201, "Data Structures"), (310, "Machine Learning")))
    assert divergent_options([(cs201, "CS 101"), (cs310, "CS 201")], "What is the prerequisite for CS 201?") == []  # it names one
    assert divergent_options([(cs201, "CS 101"), (cs310, "CS 201")], "What are the prerequisites for the course?") == [cs201.title, cs310.title]
    assert divergent_options([(a, "EUR 85"), (b, "EUR 60")], "How much is the fee?") == ["Laboratory fee", "Registration fee"]


def test_a_passage_without_the_questions_rarest_word_takes_no_part_in_divergence():
    lab, registration, course = PASSAGES
    frequency = {"fee": 2, "semester": 1, "laboratory": 1}.get
    assert rarest_word("How much is the fee each semester?", frequency) == "semester"  # "much" is a quantity word
    assert rarest_word("How much is the parking fee?", frequency) == "fee"  # "parking": in no passage, passed over
    assert rarest_word("How much is the parking fee?", lambda word: None) is None  # no index to ask
    said = [(lab, "EUR 85"), (registration, "85 euros"), (course, "CS 101")]
    assert divergent_options(said, "How much is the fee?", kind="quantity") == ["Laboratory fee", "CS 201"]  # the fees agree on 85
    assert divergent_options(said, "How much is the fee?", kind="quantity", topic_word="fee") == []  # "CS 101" is of no fee
    assert divergent_options(said, "How much is the fee?", kind="quantity", topic_word="fees") == []  # by stem
    # Only a minority of the candidates has the word (or none): it does not tell the topic, so every one takes part.
    for word in ("laboratory", "parking"):
        assert divergent_options(said, "How much is the fee?", kind="quantity", topic_word=word) == ["Laboratory fee", "CS 201"]


@pytest.mark.parametrize(("guarded", "route"), [(True, "answer"), (False, "clarify")])
def test_divergence_rarest_word_is_a_switch(schema_lm, guarded, route):
    said = {"fees-lab": "EUR 85", "fees-registration": "85 euros", "course-cs201": "CS 101"}  # the two fees agree
    script = scripted(passage_answers=lambda text: {"passage_answers": [{"passage_id": p, "answer": a} for p, a in said.items() if f"[{p}]" in text]})
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.escalation=false", "askfirst.first_turn_cue_answered=false",
                    f"askfirst.divergence_rarest_word={str(guarded).lower()}", script=script, retriever=LexicalRetriever())
    assert reply.route == route and reply.ambiguity["divergence"].get("rarest_word") == ("fee" if guarded else None)
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.escalation=false", "askfirst.first_turn_cue_answered=false", script=script)
    assert reply.route == "clarify" and "rarest_word" not in reply.ambiguity["divergence"]  # no lexical index: no guard


def test_a_question_for_a_time_or_a_quantity_is_told_apart_by_the_times_or_numbers_the_answers_name():
    P = PASSAGES[0].__class__
    guarantee, portal, awards, grading = (P(d, d, t, "") for d, t in (("housing-guarantee", "Housing guarantee"), ("housing-apply", "Applying for housing"),
                                                                    ("schol-apply", "How to apply for scholarships"), ("pass-fail", "Pass/fail option")))
    said = [(guarantee, "The 30 June deadline is the time by which students must apply"), (portal, "Apply through the Housing Portal by 30 June."),
            (awards, "Applications are made through the Awards Portal."), (grading, "Students may take at most one elective pass/fail.")]
    question = "By when do I have to apply for one of them?"
    assert answer_type(question) == "time"
    assert len(divergent_options(said, question)) == 4  # as worded, every page gives another answer
    assert divergent_options(said, question, kind="time") == []  # one time, 30 June; the others name none ("may" is no May)
    assert divergent_options([*said, (awards, "Apply by 1 May.")][1:], question, kind="time") == ["Applying for housing", "How to apply for scholarships"]
    fees = [(PASSAGES[0], "EUR 85 per semester"), (PASSAGES[1], "The registration fee is EUR 60."), (grading, "It depends on the course.")]
    assert answer_type("How much is the fee?") == "quantity"
    assert divergent_options(fees, "How much is the fee?", kind="quantity") == ["Laboratory fee", "Registration fee"]
    assert divergent_options(fees[:1] + [(PASSAGES[1], "It is EUR 85, as for labs.")], "How much?", kind="quantity") == []  # both 85
    for other in ("What is the fee, and when is it due?", "Who scored most?", "How do I apply?", "Can I skip the meal plan, and how much is the rent?"):
        assert answer_type(other) is None, other  # asks for something else, or for two kinds of thing
    assert typed_answer("On 1 May, and in the autumn.", "time") == "1 autumn may" and typed_answer("two halls", "quantity") == "two"


@pytest.mark.parametrize(("typed", "route"), [(True, "answer"), (False, "clarify")])
def test_typed_divergence_is_a_switch(schema_lm, typed, route):
    same = {"fees-lab": "EUR 85", "fees-registration": "85 euros, the lab rate"}  # one amount in two wordings
    script = scripted(passage_answers=lambda text: {"passage_answers": [{"passage_id": p, "answer": a} for p, a in same.items() if f"[{p}]" in text]})
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.escalation=false", "askfirst.first_turn_cue_answered=false",
                    f"askfirst.typed_divergence={str(typed).lower()}", script=script)
    assert reply.route == route and reply.extras["ambiguity"]["divergence"].get("answer_type") == ("quantity" if typed else None)


def test_untitled_documents_are_offered_by_their_opening_words_not_their_ids():
    P = PASSAGES[0].__class__
    tour = P("p-e58f", "p-e58f", "", "Beyonce's world tour opened in Sunrise, Florida, and travelled on to Europe in the summer.")
    tardis = P("p-b828", "p-b828", "", "The TARDIS landed in London.")
    assert divergent_options([(tour, "Europe"), (tardis, "London")], "Where did it go next?") == [
        "Beyonce's world tour opened in Sunrise, Florida, and …", "The TARDIS landed in London."]
    union = P("p-1c", "p-1c", "", "On December 30, 1922, with the creation of the Soviet Union, Russia became a republic.")
    backup = P("p-2d", "p-2d", "", "Using the [backup service](https://cloud.example/docs?topic=backup), you can back up volumes.")
    in_may = P("p-3e", "p-3e", "", "Details of school casualties had been under non-governmental investigation since May 2008.")
    assert [reading_name(p) for p in (union, backup, in_may)] == [
        "On December 30, 1922, with the creation of the Soviet Union …",  # not cut just before the name
        "Using the backup service, you can back up …",  # a Markdown link as its text
        "Details of school casualties had been under non-governmental …"]  # a month is no name
    fabric = P("p-4f", "p-4f", "", "The platform is the commercial distribution of Hyperledger Fabric. It adds security.")
    assert reading_name(fabric) == "The platform is the commercial distribution of Hyperledger Fabric …"


def test_an_unanswerable_assessment_is_never_asked_about(schema_lm):
    """Passages that answer other questions diverge without the question having readings (the demo's u01, u02)."""
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.escalation=false", "askfirst.first_turn_cue_words=0",
                    script=scripted(asked_about=UNANSWERABLE))
    assert reply.route == "idk" and reply.ambiguity == {} and reply.label == "UNANSWERABLE"


def test_a_question_naming_one_reading_is_not_ambiguous_but_a_shared_word_names_none():
    P = PASSAGES[0].__class__
    waitlist = P("enrol-waitlists", "enrol-waitlists", "Course waitlists", "A seat offered from the waitlist stays open for 48 hours.")
    library = P("library-hours", "library-hours", "Library opening hours", "The library is open 24 hours in exam weeks.")
    assert divergent_options([(waitlist, "48 hours"), (library, "24 hours")], "How long does a waitlist seat stay open?") == []
    payment = P("fees-payment-deadlines", "fees-payment-deadlines", "Tuition payment deadlines", "Tuition is due on 15 September.")
    housing = P("housing-guarantee", "housing-guarantee", "Housing guarantee", "Apply by the 30 June deadline to be guaranteed a room.")
    # "deadline" is in one title only, but a question that is nothing but that noun asks about the kind
    assert divergent_options([(payment, "15 September"), (housing, "30 June")], "When is the deadline?") == [payment.title, housing.title]
    assert divergent_options([(payment, "15 September"), (housing, "30 June")], "When is the tuition payment deadline?") == []
    # an "answer" that only repeats the question's own words is none
    assert divergent_options([(payment, "15 September"), (housing, "the deadline")], "When is the deadline?") == []


def test_a_question_naming_one_assessed_document_skips_the_per_passage_answers_call(schema_lm):
    lab, registration, course = PASSAGES
    assert named_document("What is the laboratory fee for a course?", [lab, registration, course]) == "fees-lab"
    assert named_document("How much is the fee?", [lab, registration]) is None  # "fee" is in both titles
    assert named_document("Which fee?", [lab, registration]) is None  # one content word names a kind
    asked = []
    script = scripted(passage_answers=lambda text: asked.append(text) or passage_answers(text))
    reply, *_ = run(schema_lm, "What is the laboratory fee for a course?", script=script)
    assert reply.route == "answer" and asked == [] and reply.ambiguity["divergence"] == {"diverges": False, "named": "fees-lab", "named_in": "question"}
    reply, *_ = run(schema_lm, "What is the laboratory fee for a course?", "askfirst.skip_named=false", script=script)
    assert reply.route == "answer" and len(asked) == 1 and "candidates" in reply.ambiguity["divergence"]  # the guard, after the call


def test_a_document_an_earlier_turn_named_is_the_reading_a_follow_up_means(schema_lm):
    lab, registration, _ = PASSAGES
    history = "user: Tell me about the laboratory fee.\nassistant: It is charged for each laboratory course [fees-lab]."
    assert named_in_conversation(history, [lab, registration]) == "fees-lab"
    assert named_in_conversation("user: Tell me about the fees.\nassistant: Which fee?", [lab, registration]) is None  # a kind
    assert named_in_conversation("", [lab, registration]) is None
    posts = lab.__class__("jobs-ta", "jobs-ta", "Teaching assistant posts", "Teaching assistants are paid EUR 15 an hour.")
    assert named_in_conversation("user: Who pays for the course?\nassistant: The department does.", [posts, lab]) is None  # a role label
    # the guard on the diverging documents reads the conversation too (skip_named off: the call is made)
    assert divergent_options([(lab, "EUR 85"), (registration, "EUR 60")], "How much is it?", conversation=history) == []
    conversation = [{"role": "user", "content": "Tell me about the laboratory fee."},
                    {"role": "assistant", "content": "It is charged for each laboratory course [fees-lab]."},
                    {"role": "user", "content": "How much is the fee?"}]
    asked = []
    lost = scripted(standalone_question={"standalone_question": "How much is the fee?"},  # the rewrite dropped the subject
                    passage_answers=lambda text: asked.append(text) or passage_answers(text))
    reply, *_ = run(schema_lm, conversation, "askfirst.follow_up_divergence=true", script=lost)
    assert reply.route == "answer" and asked == []
    assert reply.ambiguity["divergence"] == {"diverges": False, "named": "fees-lab", "named_in": "conversation"}
    reply, *_ = run(schema_lm, conversation, "askfirst.conversation_names=false", "askfirst.follow_up_divergence=true", script=lost)
    assert reply.route == "clarify" and len(asked) == 1 and reply.options == ["Laboratory fee", "Registration fee"]


def test_divergence_is_asked_of_a_follow_up_only_when_follow_up_divergence_is_on(schema_lm):
    conversation = [{"role": "user", "content": "Tell me about the fees."}, {"role": "assistant", "content": "There are several."},
                    {"role": "user", "content": "How much is it?"}]
    asked = []
    script = scripted(standalone_question={"standalone_question": "How much is the fee?"},
                      passage_answers=lambda text: asked.append(text) or passage_answers(text))
    reply, *_ = run(schema_lm, conversation, script=script)
    assert reply.route == "answer" and asked == [] and reply.ambiguity["divergence"] == {"diverges": False, "follow_up": True}
    reply, *_ = run(schema_lm, conversation, "askfirst.follow_up_divergence=true", script=script)
    assert reply.route == "clarify" and len(asked) == 1 and reply.options == ["Laboratory fee", "Registration fee"]
    reply, *_ = run(schema_lm, "How much is the fee?", script=script)  # a first question is asked either way
    assert reply.route == "clarify" and len(asked) == 2
