"""The composed askfirst program on a scripted LM: every stage and switch."""

import math

import dspy
import numpy as np
import pytest

from askfirst.config import load_config
from askfirst.programs.askfirst.divergence import (UNSAID_CHOICE, asks_which, divergent_options, named_document, named_in_conversation, names_kinds, not_readings, rarest_word,
                                                   reading_name, repeated_example, titled_readings, typed_answer, ungrounded_options)
from askfirst.programs.askfirst.key_terms import unmatched_terms
from askfirst.programs.askfirst.program import assessed_passages
from askfirst.programs.askfirst.question_form import answer_type, question_form
from askfirst.programs.askfirst.standalone import checked_rewrite, copies_one_of, mostly_new_words, repeats_earlier_turn, without_copied_tags
from askfirst.programs.base import Resources
from askfirst.programs.common.conversation import format_history, previous_user_turn, to_turns, user_turns
from askfirst.programs.registry import Registry
from askfirst.retrieval.chunking import Passage
from tests.conftest import PASSAGES, LexicalRetriever, ListRetriever
from tests.test_label_probability import LabelScoringEngine

FEE_ANSWERS = {"fees-lab": "EUR 85", "fees-registration": "EUR 60"}


def assessment(label: str = "ANSWERABLE", asked_about: str = "fee"):
    """The evidence assessment's reply."""
    return {"answering_sentences": [], "label": label, "confidence": 0.9, "asked_about": asked_about}


def passage_answers(text: str) -> dict:
    """Each fee passage the call was shown answers with its own amount."""
    return {"passage_answers": [{"passage_id": pid, "answer": a} for pid, a in FEE_ANSWERS.items() if f"[{pid}]" in text]}


ANSWERABLE, UNANSWERABLE = assessment("ANSWERABLE"), assessment("UNANSWERABLE")
FEES_FOLLOW_UP = [{"role": "user", "content": "Which fees are there?"}, {"role": "assistant", "content": "Lab and registration."},
                  {"role": "user", "content": "And the lab fee?"}]


def scripted(**overrides):
    base = {
        "standalone_question": {"standalone_question": "How much is the laboratory fee?"},
        "complexity": {"complexity": "simple", "reason": "one fact"},
        "queries": {"queries": ["lab fee"]},
        "is_ambiguous": {"is_ambiguous": False, "ambiguity_type": "none", "ambiguous_aspects": [], "clarification_needed": ""},
        "cited_ids": {"answer": "The lab fee is EUR 85.", "cited_ids": ["fees-lab"]},
        "asked_about": ANSWERABLE,
        "passage_answers": passage_answers,
        "expansions": {"expansions": ["laboratory charge"]},
        "clarifying_question": {"clarifying_question": "Which fee do you mean?", "options": ["lab", "registration"]},
    }
    return base | overrides


class QueryCosines:
    """A dense index whose top cosine for a query is scripted (the retrieval gate's signal), and an embedder whose
    vectors are scripted topics: each text is the unit vector of its topic in ``topics`` (0 unless named), so two
    texts have cosine 1 on one topic and 0 on two (the topic-switch check's signal). The store looks the score up for
    the text embedded last, which is the query ``Resources.dense`` searches with."""

    def __init__(self, cosines: dict[str, float], topics: dict[str, int] | None = None):
        self.cosines, self.topics, self.embedded = cosines, topics or {}, []

    def embed(self, texts):
        self.embedded = list(texts)
        return np.eye(4)[[self.topics.get(text, 0) for text in texts]]

    def dense_search(self, query_vector, k):
        return [(PASSAGES[0].passage_id, self.cosines.get(self.embedded[-1], 0.9))][:k]

    def get_passages(self, ids):
        return {p.passage_id: p for p in PASSAGES if p.passage_id in ids}


def scoring_lm(logprobs: dict[str, float]):
    """A ``schema_lm`` whose engine reports ``logprobs`` for the label fields, as llama.cpp does: for :func:`run`."""
    return lambda script: dspy.LM("test/scoring", engine=LabelScoringEngine(script, logprobs=logprobs), cache=False)


def run(schema_lm, question, *overrides, script=None, retriever=None, cosines=None, topics=None, rewrite_demos=()):
    retriever = retriever or ListRetriever()
    config = load_config(overrides=["program.kind=askfirst", "program.reranker=false", "program.iterations=1", *overrides])
    dense = QueryCosines(cosines or {}, topics)
    program = Registry(Resources(retriever=retriever, store=dense, embedder=dense)).build("askfirst", config)
    if rewrite_demos:
        program.rewrite.demos = list(rewrite_demos)
    lm = schema_lm(script or scripted())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        return program(conversation=question), program, retriever, lm


def referent(label: str, unnamed: str = "fee") -> dict:
    """The unnamed-referent check's reply."""
    return {"unnamed": unnamed if label == "UNDERSPECIFIED" else "none", "label": label}


def test_a_question_naming_its_thing_only_by_kind_is_asked_which_before_any_assessment(schema_lm):
    assessed = []
    script = scripted(asked_about=lambda text: assessed.append(text) or ANSWERABLE, unnamed=referent("UNDERSPECIFIED"))
    reply, program, _, _ = run(schema_lm, "How much is the fee?", "askfirst.ambiguity=off", "askfirst.referent_check=true", script=script)
    assert reply.route == "clarify" and reply.label == "UNDERSPECIFIED" and reply.answer == "Which fee do you mean?"
    assert reply.options == ["lab", "registration"] and assessed == []  # the clarification responder's, no assessment call
    assert reply.referent == {"unnamed": "fee", "label": "UNDERSPECIFIED", "p_underspecified": 1.0, "source": "generated", "flagged": True}
    reply, *_ = run(schema_lm, "How much is the lab fee?", "askfirst.ambiguity=off", "askfirst.referent_check=true",
                    script=scripted(asked_about=lambda text: assessed.append(text) or ANSWERABLE, unnamed=referent("SPECIFIC")))
    assert reply.route == "answer" and not reply.referent["flagged"] and len(assessed) == 1
    reply, program, _, _ = run(schema_lm, "How much is the fee?", "askfirst.ambiguity=off", "askfirst.referent_cue=false", script=script)
    assert reply.route == "answer" and reply.referent is None and "referent" not in {n.split(".")[0] for n, _ in program.named_predictors()}


@pytest.mark.parametrize(("threshold", "flagged"), [(0.25, True), (0.5, False)])
def test_with_a_threshold_the_labels_probability_decides_not_the_label_written(threshold, flagged):
    reply, *_ = run(scoring_lm({"SPECIFIC": math.log(0.7), "UNDERSPECIFIED": math.log(0.3)}), "How much is the fee?",
                    "askfirst.ambiguity=off", "askfirst.referent_check=true", f"askfirst.referent_threshold={threshold}",
                    "askfirst.first_turn_cue_answered=false", script=scripted(unnamed=referent("SPECIFIC")))
    assert reply.referent["source"] == "logprobs" and reply.referent["p_underspecified"] == pytest.approx(0.3)
    assert reply.referent["flagged"] is flagged and reply.route == ("clarify" if flagged else "answer")


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


def test_the_record_keeps_the_sentences_the_assessment_copied(schema_lm):
    copied = assessment() | {"answering_sentences": ["[fees-lab] The laboratory fee is EUR 85."]}
    reply, *_ = run(schema_lm, "How much is the laboratory fee?", script=scripted(asked_about=copied))
    assert reply.route == "answer" and reply.extras["answering_sentences"] == ["[fees-lab] The laboratory fee is EUR 85."]
    reply, *_ = run(schema_lm, "Lab fee?", "askfirst.escalation=false", "askfirst.min_top_cosine=0.4", cosines={"Lab fee?": 0.3})
    assert reply.route == "idk" and reply.extras["answering_sentences"] is None  # gated: no assessment call


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


def test_a_follow_up_is_made_standalone_before_retrieval(schema_lm):
    turns = [{"role": "user", "content": "Tell me about lab courses."}, {"role": "assistant", "content": "They carry an L suffix."},
             {"role": "user", "content": "How much is its fee?"}]
    reply, _, retriever, _ = run(schema_lm, turns, "askfirst.ambiguity=off")
    assert reply.standalone_query == "How much is the laboratory fee?" and retriever.calls[0] == ["How much is the laboratory fee?"]
    reply, _, retriever, _ = run(schema_lm, turns, "askfirst.ambiguity=off", "askfirst.standalone=false")
    assert retriever.calls[0] == ["How much is its fee?"]


def assert_refused_unless(lm, rewrite: str, setting: str, *, script):
    """The scripted ``rewrite`` of FEES_FOLLOW_UP is refused (the user's turn searched, the rewrite recorded), and searched
    with ``setting``."""
    reply, _, retriever, _ = run(lm, FEES_FOLLOW_UP, script=script)
    assert reply.standalone_query == "And the lab fee?" and retriever.calls[0] == ["And the lab fee?"]
    assert reply.rewrite_refused == rewrite
    reply, _, retriever, _ = run(lm, FEES_FOLLOW_UP, setting, script=script)
    assert reply.standalone_query == rewrite and retriever.calls[0] == [rewrite] and reply.rewrite_refused is None


def test_a_rewrite_that_answers_instead_of_asking_is_refused(schema_lm):
    assert checked_rewrite("Is Sweden politically neutral?", " Sweden is not politically neutral. ") is None
    assert checked_rewrite("And the lab fee?", "How much is the laboratory fee? [fees-lab]") == "How much is the laboratory fee? [fees-lab]"
    assert checked_rewrite("I heard the lab fee went up.", "The laboratory fee went up.") == "The laboratory fee went up."  # a statement
    assert checked_rewrite("I heard the lab fee went up.", "The laboratory fee went up.", every_turn=True) is None
    assert checked_rewrite("And the lab fee?", "The laboratory fee.", every_turn=True) is None
    assert checked_rewrite("And the lab fee?", "  ") is None
    answered = scripted(standalone_question={"standalone_question": "The lab fee is EUR 85 [fees-lab]."})
    assert_refused_unless(schema_lm, "The lab fee is EUR 85 [fees-lab].", "askfirst.rewrite_check=false", script=answered)
    statement = FEES_FOLLOW_UP[:2] + [{"role": "user", "content": "I heard the lab fee went up."}]
    for setting, searched in (("askfirst.rewrite_check=every_turn", "I heard the lab fee went up."),
                              ("askfirst.rewrite_check=questions", "The lab fee is EUR 85 [fees-lab]."),
                              ("askfirst.rewrite_check=true", "The lab fee is EUR 85 [fees-lab].")):
        reply, _, retriever, _ = run(schema_lm, statement, setting, script=answered)
        assert retriever.calls[0] == [searched], setting


def test_a_rewrite_loses_the_citation_tags_it_copied_from_earlier_answers(schema_lm):
    history = "user: Which halls are there?\nassistant: Birchwood and Elm Court [housing-residence-halls]."
    copied = "By when do I apply for one of them? [housing-residence-halls]"
    assert without_copied_tags(copied, history) == "By when do I apply for one of them?"
    assert without_copied_tags("Is [x] in [housing-residence-halls] rooms?", history) == "Is [x] in rooms?"  # the user's own kept
    assert without_copied_tags("How much is the laboratory fee? [fees-lab]", "user: Which fees?") == "How much is the laboratory fee? [fees-lab]"
    linked = "assistant: Add a [Classifier](https://example.org) enrichment [doc7]."
    assert without_copied_tags("How do I train the [Classifier]? [doc7]", linked) == "How do I train the [Classifier]?"
    conversation = [{"role": "user", "content": "Which halls are there?"},
                    {"role": "assistant", "content": "Birchwood and Elm Court [housing-residence-halls]."},
                    {"role": "user", "content": "By when do I apply for one of them?"}]
    reply, _, retriever, _ = run(schema_lm, conversation, script=scripted(standalone_question={"standalone_question": copied}))
    assert reply.standalone_query == "By when do I apply for one of them?" and retriever.calls[0] == [reply.standalone_query]


def test_a_rewrite_that_repeats_an_earlier_user_turn_is_refused(schema_lm):
    history = "user: Which fees are there?\nassistant: Lab and registration.\nuser: Who sets them?\nassistant: The board."
    assert user_turns(history) == ["Which fees are there?", "Who sets them?"]
    assert repeats_earlier_turn("And the lab fee?", "which fees are there ?", history)  # case and punctuation aside
    assert not repeats_earlier_turn("And the lab fee?", "How much is the lab fee?", history)
    assert not repeats_earlier_turn("Which fees are there?", "Which fees are there?", history)  # the user asked it again
    assert not repeats_earlier_turn("And the lab fee?", "Which fees are there?", "assistant: Which fees are there?")
    repeated = scripted(standalone_question={"standalone_question": "Which fees are there?"})
    assert_refused_unless(schema_lm, "Which fees are there?", "askfirst.rewrite_repeat_check=false", script=repeated)


def test_a_rewrite_that_copies_a_demonstrations_rewrite_is_refused(schema_lm):
    """The 0.5B returned a shipped demo's rewrite about the Roman Empire for the demo's question about guest-night fees."""
    billed = "How are conversations billed in Watson Assistant?"
    assert copies_one_of("And the lab fee?", "how are conversations billed in watson assistant", [billed])
    assert not copies_one_of("And the lab fee?", "How much is the lab fee?", [billed])
    assert not copies_one_of(billed, billed, [billed])  # the user asked the demonstration's question
    assert not copies_one_of("And the lab fee?", billed, [])
    compiled = dspy.Example(conversation_history="user: some example of alerts", question="are they billed per turn?",
                            standalone_question=billed).with_inputs("conversation_history", "question")
    loaded = {"conversation_history": "user: Which fees?", "question": "Who sets them?", "standalone_question": "Who sets the fees?"}
    for copied in (billed, "Who sets the fees?"):  # a demo as a compile leaves it and as a compiled program's file loads it
        script = scripted(standalone_question={"standalone_question": copied})
        reply, _, retriever, _ = run(schema_lm, FEES_FOLLOW_UP, script=script, rewrite_demos=[compiled, loaded])
        assert retriever.calls[0] == ["And the lab fee?"] and reply.rewrite_refused == copied
        reply, _, retriever, _ = run(schema_lm, FEES_FOLLOW_UP, "askfirst.rewrite_repeat_check=false", script=script,
                                     rewrite_demos=[compiled, loaded])
        assert retriever.calls[0] == [copied] and reply.rewrite_refused is None
        reply, _, retriever, _ = run(schema_lm, FEES_FOLLOW_UP, script=script)  # no demonstrations: nothing to copy
        assert retriever.calls[0] == [copied] and reply.rewrite_refused is None


def test_a_rewrite_made_mostly_of_words_no_turn_has_is_refused_when_set(schema_lm):
    """The 0.5B translated "Is it available in Spanish?" into Spanish and answered a turn about cancer treatment."""
    said = "user: Is the tool free? assistant: Yes. user: Is it available in Spanish?"
    assert mostly_new_words("¿Está disponible en español?", said, above=0.5)
    assert not mostly_new_words("Is the tool available in Spanish?", said, above=0.5)
    assert not mostly_new_words("What is the Hubble Space Telescope?", "user: Hubble?", above=0.5)  # two new words: a name in full
    assert mostly_new_words("What is the Hubble Space Telescope launched by NASA?", "user: Hubble?", above=0.5)
    assert not mostly_new_words("What is the Hubble Space Telescope launched by NASA?", "user: Hubble?", above=0.8)  # 4 of 5
    translated = scripted(standalone_question={"standalone_question": "¿Cuánto cuesta la tarifa de laboratorio?"})
    reply, _, retriever, _ = run(schema_lm, FEES_FOLLOW_UP, "askfirst.rewrite_new_words_above=0.5", script=translated)
    assert retriever.calls[0] == ["And the lab fee?"] and reply.rewrite_refused == "¿Cuánto cuesta la tarifa de laboratorio?"
    reply, _, retriever, _ = run(schema_lm, FEES_FOLLOW_UP, script=translated)  # off by default
    assert retriever.calls[0] == ["¿Cuánto cuesta la tarifa de laboratorio?"] and reply.rewrite_refused is None


def test_a_follow_up_searched_as_written_is_searched_with_the_previous_user_turn_too_when_configured(schema_lm):
    answered = scripted(standalone_question={"standalone_question": "The lab fee is EUR 85 [fees-lab]."})  # refused
    with_previous = "Which fees are there? And the lab fee?"
    reply, program, retriever, lm = run(schema_lm, FEES_FOLLOW_UP, "askfirst.follow_up_search=with_previous_turn",
                                       "askfirst.min_top_cosine=0.4", script=answered,
                                       cosines={"And the lab fee?": 0.30, with_previous: 0.50})
    assert retriever.calls[0] == ["And the lab fee?", with_previous] and reply.queries == ["And the lab fee?", with_previous]
    assert reply.top_cosine == 0.50 and not reply.gated and reply.route == "answer"  # the gate measures the query with context
    assert reply.standalone_query == "And the lab fee?"  # the LM steps still read the user's turn
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):  # what the gate tuner measures is what the gate measured
        assert program.search_query("And the lab fee?", "user: Which fees are there?\nassistant: Lab and registration.") == with_previous
    reply, _, retriever, _ = run(schema_lm, FEES_FOLLOW_UP, "askfirst.min_top_cosine=0.4", "askfirst.escalation=false", script=answered,
                                 cosines={"And the lab fee?": 0.30, with_previous: 0.50})
    assert retriever.calls[0] == ["And the lab fee?"] and reply.gated and reply.route == "idk"  # 'turn', the default
    # A kept rewrite is searched alone; so is a first turn, which has no previous turn.
    reply, _, retriever, _ = run(schema_lm, FEES_FOLLOW_UP, "askfirst.follow_up_search=with_previous_turn")
    assert retriever.calls[0] == ["How much is the laboratory fee?"]
    reply, _, retriever, _ = run(schema_lm, "Lab fee?", "askfirst.follow_up_search=with_previous_turn")
    assert retriever.calls[0] == ["Lab fee?"]


def test_the_previous_user_turn_is_read_from_the_history_with_its_own_line_breaks():
    turns = to_turns([{"role": "user", "content": "How much is\nthe fee?"}, {"role": "assistant", "content": "EUR 85.\nPer course."},
                      {"role": "user", "content": "And part-time?"}])
    assert previous_user_turn(format_history(turns, max_turns=6)) == "How much is\nthe fee?"
    assert previous_user_turn("assistant: Hello.") is None and previous_user_turn("") is None


def test_the_router_sends_complex_questions_through_the_notes_loop(schema_lm):
    reply, _, retriever, _ = run(schema_lm, "Compare the lab and registration fees.", "askfirst.ambiguity=off",
                                 script=scripted(complexity={"complexity": "complex", "reason": "two parts"}))
    assert reply.stage == "complex" and "lab fee" in retriever.calls[0]  # the query generator's query was searched
    reply, program, retriever, _ = run(schema_lm, "Lab fee?", "askfirst.ambiguity=off", "askfirst.complexity_router=simple")
    assert reply.stage == "simple" and retriever.calls == [["Lab fee?"]] and program.router is None


def test_an_unsure_idk_escalates_with_an_expanded_query(schema_lm):
    labels = iter([UNANSWERABLE, ANSWERABLE])
    reply, _, retriever, _ = run(schema_lm, "Lab fee?", "askfirst.ambiguity=off", script=scripted(asked_about=lambda _: next(labels)))
    assert reply.escalated and reply.route == "answer" and retriever.calls[-1] == ["Lab fee?", "Lab fee? laboratory charge"]
    reply, *_ = run(schema_lm, "Lab fee?", "askfirst.ambiguity=off", "askfirst.escalation=false", script=scripted(asked_about=UNANSWERABLE))
    assert reply.route == "idk" and not reply.escalated


@pytest.mark.parametrize(("escalate_below", "escalated"), [(1.0, True), (0.6, False)])
def test_escalate_below_leaves_a_partial_route_whose_p_answerable_reaches_it(escalate_below, escalated):
    # PARTIAL with P(answerable) = P(ANSWERABLE) + P(PARTIAL) = 0.7, as the 1.5B labelled MTRAG-UN's "Are the compost
    # expensive in the market? Can I sell it?" (0.71), which the second search then answered.
    labels = iter([assessment("PARTIAL"), ANSWERABLE])
    lm = scoring_lm({"PARTIAL": math.log(0.4), "ANSWERABLE": math.log(0.3), "UNDERSPECIFIED": math.log(0.2), "UNANSWERABLE": math.log(0.1)})
    reply, _, retriever, _ = run(lm, "How much is the lab fee? Can I pay it later?",  # two parts: PARTIAL stands
                                 "askfirst.ambiguity=off", f"askfirst.escalate_below={escalate_below}",
                                 script=scripted(asked_about=lambda _: next(labels)))
    assert reply.escalated is escalated and reply.route == ("answer" if escalated else "partial")
    assert len(retriever.calls) == (2 if escalated else 1)
    if not escalated:
        assert reply.p_answerable == pytest.approx(0.7) and reply.label == "PARTIAL"


def test_a_query_the_collection_is_far_from_is_refused_by_the_gate_without_an_assessment(schema_lm):
    assessed = []
    script = scripted(asked_about=lambda text: assessed.append(text) or ANSWERABLE)
    far = {"Lab fee?": 0.30}
    reply, *_ = run(schema_lm, "Lab fee?", "askfirst.ambiguity=off", "askfirst.escalation=false", "askfirst.min_top_cosine=0.4",
                    script=script, cosines=far)
    assert reply.route == "idk" and reply.label == "UNANSWERABLE" and reply.gated and reply.top_cosine == 0.30 and assessed == []
    reply, *_ = run(schema_lm, "Lab fee?", "askfirst.ambiguity=off", "askfirst.escalation=false", script=script, cosines=far)
    assert reply.route == "answer" and not reply.gated and reply.top_cosine == 0.30 and len(assessed) == 1  # off: recorded only
    reply, *_ = run(schema_lm, "Lab fee?", "askfirst.ambiguity=off", "askfirst.escalation=false", "askfirst.min_top_cosine=0.3",
                    script=script, cosines=far)
    assert reply.route == "answer" and not reply.gated  # at the threshold the assessment decides


def test_the_gate_lets_an_escalated_query_through_when_the_expansion_comes_closer_if_configured(schema_lm):
    gated = ("askfirst.ambiguity=off", "askfirst.min_top_cosine=0.4")
    lifted = (*gated, "askfirst.escalate_gated=true")
    reply, _, retriever, _ = run(schema_lm, "Lab fee?", *lifted, script=scripted(), cosines={"Lab fee?": 0.30, "Lab fee? laboratory charge": 0.55})
    assert reply.escalated and reply.route == "answer" and not reply.gated and retriever.calls[-1] == ["Lab fee?", "Lab fee? laboratory charge"]
    reply, *_ = run(schema_lm, "Lab fee?", *lifted, script=scripted(), cosines={"Lab fee?": 0.30, "Lab fee? laboratory charge": 0.35})
    assert reply.escalated and reply.route == "idk" and reply.gated and reply.top_cosine == 0.30
    reply, _, retriever, _ = run(schema_lm, "Lab fee?", *gated, script=scripted(), cosines={"Lab fee?": 0.30, "Lab fee? laboratory charge": 0.55})
    assert not reply.escalated and reply.route == "idk" and reply.gated and len(retriever.calls) == 1  # the default: the gate's word stands
    reply, *_ = run(schema_lm, "Lab fee?", *gated, "askfirst.debate=true", script=scripted(), cosines={"Lab fee?": 0.30})
    assert reply.route == "idk" and reply.gated and reply.debate is None  # nor is it debated


def test_a_question_still_unsure_after_escalation_is_debated_and_an_accepted_aggregate_answers(schema_lm):
    aggregate = {"answer": "The lab fee is EUR 85 [fees-lab].", "is_unknown": False, "converged": True, "confidence": 0.8}
    script = scripted(asked_about=UNANSWERABLE, is_unknown=aggregate, answer={"answer": "EUR 85"})
    reply, program, _, lm = run(schema_lm, "Lab fee?", "askfirst.ambiguity=off", "askfirst.debate=true", "mafrag.debate_agents=2",
                                script=script)
    assert reply.route == "answer" and reply.answer == aggregate["answer"] and reply.citations == ["fees-lab"]
    assert reply.escalated and reply.debate == {"rounds": 2, "confidence": 0.8, "unknown": False, "accepted": True}  # settled in round 2
    assert {"debate.agent", "debate.aggregate"} <= {n for n, _ in program.named_predictors()}
    unknown = scripted(asked_about=UNANSWERABLE, is_unknown=aggregate | {"answer": "unknown", "is_unknown": True}, answer={"answer": "unknown"})
    reply, *_ = run(schema_lm, "Lab fee?", "askfirst.ambiguity=off", "askfirst.debate=true", script=unknown)
    assert reply.route == "idk" and reply.debate["accepted"] is False
    low = scripted(asked_about=UNANSWERABLE, is_unknown=aggregate | {"confidence": 0.5}, answer={"answer": "EUR 85"})
    reply, *_ = run(schema_lm, "Lab fee?", "askfirst.ambiguity=off", "askfirst.debate=true", "mafrag.debate_rounds=1", script=low)
    assert reply.route == "idk" and reply.debate == {"rounds": 1, "confidence": 0.5, "unknown": False, "accepted": False}  # below 0.65
    reply, program, *_ = run(schema_lm, "Lab fee?", "askfirst.ambiguity=off", script=script)
    assert reply.route == "idk" and reply.debate is None and not any(n.startswith("debate.") for n, _ in program.named_predictors())


def test_the_stages_are_the_notes_programs_modules_composed_through_the_registry(schema_lm):
    _, program, _, _ = run(schema_lm, "Lab fee?", "askfirst.ambiguity=off")
    names = {n for n, _ in program.named_predictors()}
    assert {"rewrite", "router", "retrieval.query_generator", "assess", "responders.complete", "expand"} <= names
    _, simple, _, _ = run(schema_lm, "Lab fee?", "askfirst.ambiguity=off", "askfirst.complexity_router=simple")
    names = {n for n, _ in simple.named_predictors()}  # what a compile is offered: only steps a question can reach
    assert "assess" in names and not {n for n in names if n.startswith(("retrieval.", "router"))}


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


LOAN_FOLLOW_UP = [{"role": "user", "content": "Which scholarships can first-year students get?"},
                  {"role": "assistant", "content": "The Northmoor Merit Scholarship [schol-merit]."},
                  {"role": "user", "content": "What documentation is needed to apply for the loan?"}]


def test_a_follow_up_naming_its_thing_only_by_kind_is_asked_about_instead_of_i_dont_know(schema_lm):
    """MTRAG-UN's UNDERSPECIFIED follow-ups ("the loan" when no turn said which) mostly ended "I don't know"."""
    unanswerable = scripted(asked_about=UNANSWERABLE)
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.escalation=false", "askfirst.referent_cue=true", script=unanswerable)
    assert reply.route == "clarify" and reply.label == "UNDERSPECIFIED" and reply.referent_cue == ["loan"]
    assert reply.answer == "Which fee do you mean?"  # the clarification responder's question
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.escalation=false", script=unanswerable)
    assert reply.route == "clarify" and reply.referent_cue == ["loan"]  # on by default
    assistant = [*LOAN_FOLLOW_UP[:-1], {"role": "user", "content": "What documentation does the assistant need?"}]
    reply, *_ = run(schema_lm, assistant, "askfirst.escalation=false", script=unanswerable)
    assert reply.route == "clarify" and reply.referent_cue == ["assistant"]  # a role label is no turn's word
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.escalation=false", "askfirst.referent_cue=false", script=unanswerable)
    assert reply.route == "idk" and reply.referent_cue is None
    first_turn = LOAN_FOLLOW_UP[-1]["content"]  # a first question that says more than "the loan": the assessment decides
    reply, *_ = run(schema_lm, first_turn, "askfirst.escalation=false", "askfirst.referent_cue=true", script=unanswerable)
    assert reply.route == "idk" and reply.referent_cue == []
    # one that names nothing but "the fee" could mean any fee the collection has
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.escalation=false", script=unanswerable)
    assert reply.route == "clarify" and reply.label == "UNDERSPECIFIED" and reply.referent_cue == ["fee"]
    assert reply.answer == "Which fee do you mean?"  # the cue's question, which the responder's already was: asked once
    options = {"clarifying_question": "The lab fee or the registration fee?", "options": ["lab", "registration"]}
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.escalation=false", script=unanswerable | {"clarifying_question": options})
    assert reply.answer == "Which fee do you mean? The lab fee or the registration fee?"  # the cue's word opens the reply
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.escalation=false", "askfirst.first_turn_cue_words=0", script=unanswerable)
    assert reply.route == "idk" and reply.referent_cue == []
    # turned away by the retrieval gate: nothing in the collection is near it, so it has no fee the user may mean
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.escalation=false", "askfirst.min_top_cosine=0.4", script=unanswerable,
                    cosines={"How much is the fee?": 0.3})
    assert reply.route == "idk" and reply.gated and reply.referent_cue is None
    # no retrieved passage has a tuition: there is none to ask about, and "I don't know" stands
    reply, *_ = run(schema_lm, "What is the tuition?", "askfirst.escalation=false", script=unanswerable)
    assert reply.route == "idk" and reply.referent_cue == []
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.referent_cue=true")  # an answered follow-up is not second-guessed
    assert reply.route == "answer" and reply.referent_cue is None
    # a first question answered from one fee, when two retrieved documents have one, may have meant the other
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.ambiguity=off")
    assert reply.route == "clarify" and reply.referent_cue == ["fee"] and reply.answer == "Which fee do you mean?"
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.ambiguity=off", "askfirst.first_turn_cue_answered=false")
    assert reply.route == "answer" and reply.referent_cue is None
    reply, *_ = run(schema_lm, "What is the prerequisite?", "askfirst.ambiguity=off")  # one document has one
    assert reply.route == "answer" and reply.referent_cue == []
    reply, *_ = run(schema_lm, "How do I pay the fee?", "askfirst.ambiguity=off")  # how-to: the passages explain
    assert reply.route == "answer" and reply.referent_cue is None


def test_a_clarification_offers_only_options_the_passages_have(schema_lm):
    """The offline 1.5B, given passages with nothing to choose between, offered its instruction's example fees."""
    assert ungrounded_options(["lab", "Registration fees", "tuition"], PASSAGES, "") == ["tuition"]  # "lab": "laboratory"
    assert ungrounded_options(["tuition"], PASSAGES, "Is the tuition due?") == []  # the user's own word
    assert ungrounded_options(["lab fee"], PASSAGES[1:], "") == ["lab fee"]  # half its words: "fee" but no "lab"
    assert ungrounded_options(["A laboratory fee charged each semester on Mars"], PASSAGES, "") == []  # most of them
    copied = {"clarifying_question": "Do you mean the tuition, the lab fee or the registration fee?",
              "options": ["tuition", "lab fee", "registration fee", "Registration fee"]}
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.escalation=false", script=scripted(
        asked_about=UNANSWERABLE, clarifying_question=copied))
    assert reply.route == "clarify" and reply.options == ["lab fee", "Registration fee"] and reply.ungrounded_options == ["tuition"]  # once each
    assert reply.answer == "Which fee do you mean? Your question could be about several things: lab fee; Registration fee. Which one do you mean?"
    invented = {"clarifying_question": "Do you mean the tuition or the bursary?", "options": ["tuition", "bursary"]}
    reply, *_ = run(schema_lm, "When did it open?", script=scripted(clarifying_question=invented))
    assert reply.dangling == ["it"] and reply.options == [] and reply.answer == 'What do you mean by "it"?'  # the lead alone
    reply, *_ = run(schema_lm, "When did he pay the lab fee?", script=scripted(clarifying_question={**invented, "options": ["bursary"]}))
    assert reply.answer == 'Who do you mean by "he"?'
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.escalation=false", script=scripted(asked_about=UNANSWERABLE, clarifying_question=invented))
    assert reply.route == "clarify" and reply.answer == UNSAID_CHOICE  # no lead on a follow-up: ask for the detail


def test_a_clarification_that_lists_an_option_twice_offers_it_once(schema_lm):
    """The offline 1.5B asked "Do you mean the pet policy, the pet policy, …, or the pet policy?" on MTRAG-UN."""
    twice = {"clarifying_question": "Do you mean the lab fee, the lab fee or the registration fee?",
             "options": ["lab fee", "Lab fee", "registration fee"]}
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.escalation=false", script=scripted(asked_about=UNANSWERABLE, clarifying_question=twice))
    assert reply.route == "clarify" and reply.options == ["Lab fee", "registration fee"] and reply.ungrounded_options == []
    assert reply.answer == "Your question could be about several things: Lab fee; registration fee. Which one do you mean?"
    one = {"clarifying_question": "Do you mean the lab fee, the lab fee or the lab fee?", "options": ["lab fee"] * 3}
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.escalation=false", script=scripted(asked_about=UNANSWERABLE, clarifying_question=one))
    assert reply.route == "clarify" and reply.options == ["lab fee"] and reply.answer == UNSAID_CHOICE  # no choice left to offer
    distinct = {"clarifying_question": "Do you mean the lab fee or the registration fee?", "options": ["lab fee", "registration fee"]}
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.escalation=false", script=scripted(asked_about=UNANSWERABLE, clarifying_question=distinct))
    assert reply.answer == distinct["clarifying_question"]  # the responder's own question, when nothing is dropped


def test_a_clarification_offers_no_sentence_and_none_of_the_users_own_words(schema_lm):
    """The 1.5B offered passage sentences ("The tricolor flag is a symbol of Irish heritage and tradition.") and the
    user's own words ("fast food chain" of "How did the fast food chain establish …?") as options on MTRAG-UN."""
    sentence = "A laboratory fee of EUR 85 is charged for each laboratory course."  # 12 words with "is"
    title = "The Lord of the Rings: The Fellowship of the Ring"  # 10 words, no verb
    question = LOAN_FOLLOW_UP[-1]["content"]
    assert not_readings([sentence, title, "loan", "documentation for the loan", "lab fee", "EUR 85"], question) == [
        sentence, "loan", "documentation for the loan"]
    assert not_readings([sentence], question, max_name_words=12) == []  # a name may be that long
    offered = {"clarifying_question": "Do you mean the laboratory fee, the loan or the registration fee?",
               "options": [sentence, "the loan", "lab fee", "registration fee"]}
    script = scripted(asked_about=UNANSWERABLE, clarifying_question=offered)
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.escalation=false", script=script)
    assert reply.route == "clarify" and reply.options == ["lab fee", "registration fee"] and reply.ungrounded_options == []
    assert reply.not_readings == [sentence, "the loan"]
    assert reply.answer == "Your question could be about several things: lab fee; registration fee. Which one do you mean?"
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.escalation=false", script=script | {
        "clarifying_question": {**offered, "options": [sentence, "the loan", "lab fee"]}})
    assert reply.options == ["lab fee"] and reply.answer == UNSAID_CHOICE  # one reading left is no choice
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.escalation=false", script=script | {
        "clarifying_question": {**offered, "options": ["lab fee", "registration fee"]}})
    assert reply.not_readings == [] and reply.answer == offered["clarifying_question"]  # nothing dropped: its own question


def test_a_clarification_that_asks_a_question_of_its_own_offers_its_options(schema_lm):
    """The 1.5B kept good options but asked "Which of the above options is the Prime Minister of Canada?" (MTRAG-UN)."""
    options = ["lab fee", "registration fee"]
    assert asks_which("Do you mean the lab fee or the registration fee?", options)  # names both
    assert asks_which("Which one do you mean?", options) and asks_which("Are you referring to a course?", options)
    assert not asks_which("Which of the above options is the lab fee?", options)  # names one, asks for an answer
    assert not asks_which("How much is the lab fee?", ["Lab fee", "tuition"])
    own = {"clarifying_question": "Which of the above options is the lab fee?", "options": options}
    script = scripted(asked_about=UNANSWERABLE, clarifying_question=own)
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.escalation=false", script=script)
    assert reply.route == "clarify" and reply.no_choice_asked and reply.options == options
    assert reply.answer == "Your question could be about several things: lab fee; registration fee. Which one do you mean?"
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.escalation=false", script=script | {
        "clarifying_question": {**own, "options": ["lab fee"]}})
    assert reply.no_choice_asked is False and reply.answer == own["clarifying_question"]  # one option: no choice to offer


def test_a_clarification_with_fewer_than_two_options_offers_the_titled_documents_of_its_kind(schema_lm):
    """The 1.5B offered no option for "this tricolor national flag" over the flags of France and Ireland, and only "Pet
    Policy" for "the pets in the park" over three state parks' pages (MTRAG-UN dev)."""
    untitled = Passage("note#0", "note", "", "A fee is due.")
    second_chunk = Passage("fees-lab#1", "fees-lab", "Laboratory fee", "The fee is waived for auditors.")
    assert titled_readings(["fee"], [untitled, *PASSAGES, second_chunk]) == ["Laboratory fee", "Registration fee"]  # each once
    assert titled_readings(["fee", "semester"], PASSAGES) == ["Registration fee"]  # every word
    assert titled_readings(["fee"], PASSAGES, most=1) == ["Laboratory fee"] and titled_readings([], PASSAGES) == []
    waived = Passage("waivers", "waivers", "Fee waivers", "Ask the bursar.")
    assert titled_readings(["fee"], [PASSAGES[2], waived, PASSAGES[1]]) == ["Fee waivers", "Registration fee"]
    assert titled_readings(["grade"], [PASSAGES[2], waived, PASSAGES[1]]) == ["CS 201"]  # in a text: one document
    fee_in_text = Passage("cs-fees", "cs-fees", "CS 310", "The CS 310 fee is EUR 20.")
    assert titled_readings(["fee"], [fee_in_text, waived, PASSAGES[1]]) == ["Fee waivers", "Registration fee"]  # titles first
    assert titled_readings(["fee"], [fee_in_text, waived]) == ["CS 310", "Fee waivers"]  # one title names it: texts too
    one = {"clarifying_question": "Which fee do you mean?", "options": ["lab fee"]}
    reply, *_ = run(schema_lm, "When is this fee due?", script=scripted(clarifying_question=one))
    assert reply.route == "clarify" and reply.dangling == ["this fee"] and reply.titled_options == ["Laboratory fee", "Registration fee"]
    assert reply.options == reply.titled_options and reply.answer == (
        'What do you mean by "this fee"? Your question could be about several things: Laboratory fee; Registration fee. '
        "Which one do you mean?")
    two = {"clarifying_question": "Do you mean the lab fee or the registration fee?", "options": ["lab fee", "registration fee"]}
    reply, *_ = run(schema_lm, "When is this fee due?", script=scripted(clarifying_question=two))
    assert reply.titled_options is None and reply.options == two["options"]  # the responder named two: its own choice
    reply, *_ = run(schema_lm, "When did he pay the fee?", script=scripted(clarifying_question=one))
    assert reply.titled_options is None and reply.answer.startswith('Who do you mean by "he"?')  # a pronoun names no kind
    reply, *_ = run(schema_lm, "When is this bursary due?", script=scripted(clarifying_question=one))
    assert reply.titled_options is None and reply.options == ["lab fee"]  # no document of the kind: nothing to offer


def test_a_clarification_that_offers_kinds_of_the_thing_offers_the_titled_documents_of_its_kind(schema_lm):
    """The 1.5B offered "restaurant chain; fast food restaurant; restaurant" for "the fast food chain" (MTRAG-UN dev)."""
    chains = ["Jack in the Box", "Chipotle Mexican Grill"]
    question = "How did the fast food chain establish a significant presence in the United States?"
    assert names_kinds(["restaurant chain", "fast food restaurant", "restaurant"], question, chains)
    assert not names_kinds(["lab fee", "registration fee"], "How much is the fee?", ["Laboratory fee", "Registration fee"])  # a title
    assert not names_kinds(["moose", "guinea pig"], "Does this animal have antlers?", chains)  # none of the question's words
    assert not names_kinds(["Lab fee", "course fee"], "How much is the fee?", []) and not names_kinds([], question, chains)
    kinds = {"clarifying_question": "Do you mean the course fee or the semester fee?", "options": ["course fee", "semester fee"]}
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.ambiguity=off", script=scripted(clarifying_question=kinds))
    assert reply.route == "clarify" and reply.referent_cue == ["fee"] and reply.options == ["Laboratory fee", "Registration fee"]
    assert reply.titled_options == reply.options and reply.answer == (
        "Which fee do you mean? Your question could be about several things: Laboratory fee; Registration fee. Which one do you mean?")


def test_a_clarification_that_is_the_users_own_question_is_not_asked(schema_lm):
    """The 1.5B returned "What documentation is needed to apply for the loan?" as its clarifying question (MTRAG-UN)."""
    unanswerable = scripted(asked_about=UNANSWERABLE)
    echo = {"clarifying_question": "what documentation is needed to apply for the loan", "options": []}
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.escalation=false", script=unanswerable | {"clarifying_question": echo})
    assert reply.route == "clarify" and reply.echoed_question and reply.answer == UNSAID_CHOICE
    with_options = {"clarifying_question": LOAN_FOLLOW_UP[-1]["content"], "options": ["lab fee", "registration fee"]}
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.escalation=false", script=unanswerable | {"clarifying_question": with_options})
    assert reply.echoed_question and reply.answer == "Your question could be about several things: lab fee; registration fee. Which one do you mean?"
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.escalation=false", script=unanswerable)
    assert reply.echoed_question is False and reply.answer == "Which fee do you mean?"


def test_a_clarification_that_repeats_its_instructions_example_is_rebuilt_from_its_options(schema_lm):
    """The 1.5B took its options from the passages but wrote its instruction's example fares as the question."""
    instruction = 'Ask. (for example: "Do you mean the single fare, the day pass or the monthly pass?")'
    copied = "Do you mean the single fare, the day pass or the monthly pass?"
    assert repeated_example(copied, instruction, PASSAGES, "") == ["day", "fare", "mean", "monthli", "pass", "singl"]
    # With two words left (mean, monthly) the words do not tell, but the example's phrases repeated word for word do.
    assert repeated_example(copied, instruction, PASSAGES, "single day pass fare", min_pairs=99) == []
    assert repeated_example(copied, instruction, PASSAGES, "single day pass fare") == [
        "fare day", "monthli pass", "pass monthli", "singl fare"]
    assert repeated_example("Which fee do you mean?", instruction, PASSAGES, "") == []  # "mean" alone
    # Passages that have its words but not its phrases: the example's "day pass" and "monthly pass" still give it away.
    trading = [Passage("etf#1", "etf", "ETFs", "A single ETF trades all day. Funds report monthly. Costs pass to investors.")]
    funds = "Do you mean the single fund, the day pass or the monthly pass?"
    assert repeated_example(funds, instruction, trading, "") == ["day pass", "monthli pass", "pass monthli"]
    assert repeated_example("Do you mean the single fund or the day pass?", instruction, trading, "") == []  # one phrase
    assert repeated_example("Do you mean the day trade or the monthly report?", instruction, trading, "") == []
    script = {"clarifying_question": copied, "options": ["lab fee", "registration fee"]}
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.escalation=false", script=scripted(
        asked_about=UNANSWERABLE, clarifying_question=script))
    assert reply.route == "clarify" and reply.options == ["lab fee", "registration fee"] and reply.ungrounded_options == []
    assert reply.repeated_example == ["day", "fare", "mean", "monthli", "pass", "singl"]
    assert reply.answer == "Which fee do you mean? Your question could be about several things: lab fee; registration fee. Which one do you mean?"
    own = {"clarifying_question": "Do you mean the laboratory fee or the registration fee?", "options": ["lab fee", "registration fee"]}
    reply, *_ = run(schema_lm, "How much is the fee?", "askfirst.escalation=false", script=scripted(
        asked_about=UNANSWERABLE, clarifying_question=own))
    assert reply.repeated_example == [] and reply.answer == "Which fee do you mean? Do you mean the laboratory fee or the registration fee?"


def test_asked_about_words_from_an_earlier_turn_count_only_when_configured(schema_lm):
    """The 1.5B named an earlier turn's question as what a follow-up asks about; its words are not the user's."""
    turns = [{"role": "user", "content": "Can I get a parking permit?"}, {"role": "assistant", "content": "Ask the office."},
             {"role": "user", "content": "How much is the fee?"}]
    earlier = scripted(standalone_question={"standalone_question": "How much is the fee?"},
                       asked_about=assessment("ANSWERABLE", asked_about="parking permit fee"))
    reply, *_ = run(schema_lm, turns, "askfirst.escalation=false", "askfirst.referent_cue=false", "askfirst.key_terms=2", script=earlier)
    assert reply.route == "idk" and reply.key_terms["missing"] == ["parking", "permit"] and reply.key_terms["overruled"] == "ANSWERABLE"
    reply, *_ = run(schema_lm, turns, "askfirst.escalation=false", "askfirst.referent_cue=false", "askfirst.key_terms=2",
                    "askfirst.key_terms_in_turn=true", script=earlier)
    assert reply.key_terms["missing"] == [] and reply.key_terms["not_in_turn"] == ["parking", "permit"]
    assert reply.key_terms["overruled"] is None and reply.route == "answer"  # the assessment's label stands


def test_a_question_about_something_no_passage_mentions_is_unanswerable(schema_lm):
    """The 1.5B assessment took fee passages to answer a parking-permit question; the asked-about words decide."""
    parking = scripted(asked_about=assessment("UNDERSPECIFIED", asked_about="parking permit"))
    reply, *_ = run(schema_lm, "How much is a parking permit?", "askfirst.escalation=false", "askfirst.key_terms=2", script=parking)
    assert reply.route == "idk" and reply.label == "UNANSWERABLE"
    assert reply.key_terms == {"asked_about": "parking permit", "echo": False, "missing": ["parking", "permit"], "not_in_turn": [],
                               "overruled": "UNDERSPECIFIED"}
    reply, *_ = run(schema_lm, "How much is a parking permit?", "askfirst.escalation=false", script=parking)
    assert reply.route == "clarify" and reply.key_terms["missing"] == []  # off by default: the readings are asked about
    reply, *_ = run(schema_lm, "How much is a parking permit?", "askfirst.escalation=false", "askfirst.key_terms=3", script=parking)
    assert reply.route == "clarify" and reply.key_terms["overruled"] is None  # two missing words are not enough for three
    partial = scripted(asked_about=assessment("PARTIAL", asked_about="lab fee and used textbooks"))
    reply, *_ = run(schema_lm, "What is the lab fee, and are used textbooks sold?", "askfirst.escalation=false", "askfirst.key_terms=2",
                    script=partial)
    assert reply.route == "partial" and reply.key_terms["missing"] == ["lab", "used", "textbooks"]  # a missing part is expected


def test_unmatched_terms_count_a_plural_as_its_singular():
    lab, registration, _ = PASSAGES
    # "courses" is found as the passage's "course"; the words come back as the question spells them
    assert unmatched_terms("Are laboratory courses charged a fee for textbooks?", [lab]) == ["textbooks"]
    assert unmatched_terms("What is the registration fee each semester?", [registration]) == []
    assert unmatched_terms("registration fee", []) == ["registration", "fee"]
    assert unmatched_terms("the maximum number of credits, and the cost", []) == ["credits"]  # quantities are not what is asked about


def test_the_assessment_reads_the_evidence_then_other_documents():
    lab, registration, course = PASSAGES
    chunk = lab.__class__("fees-lab#1", "fees-lab", "Laboratory fee", "more")
    assert assessed_passages([lab, chunk, registration, course], evidence_k=2, documents=2) == [lab, chunk, registration]
    assert assessed_passages([lab, chunk, registration, course], evidence_k=1, documents=3) == [lab, registration, course]
    assert assessed_passages([lab, registration], evidence_k=3, documents=4) == [lab, registration]


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


def test_an_asked_about_repeating_its_field_description_is_not_checked(schema_lm):
    """The 1.5B wrote the field's description as what an MTRAG-UN question asks about; its words are in no passage."""
    echo = scripted(asked_about=assessment("ANSWERABLE", asked_about="What the question asks about, in its own words, a few words"))
    reply, *_ = run(schema_lm, "How much is the laboratory fee?", "askfirst.escalation=false", "askfirst.key_terms=2", script=echo)
    assert reply.route == "answer" and reply.key_terms["echo"] is True and reply.key_terms["missing"] == []
    named = scripted(asked_about=assessment("ANSWERABLE", asked_about="question about parking permit"))
    # (with no first-turn cue, which would ask which laboratory fee is meant rather than say "I don't know")
    reply, *_ = run(schema_lm, "How much is the laboratory fee?", "askfirst.escalation=false", "askfirst.first_turn_cue_words=0", "askfirst.key_terms=2",
                    script=named)
    assert reply.route == "idk" and reply.key_terms["echo"] is False and reply.key_terms["overruled"] == "ANSWERABLE"


def test_a_one_part_question_labelled_partial_is_answered(schema_lm):
    partial = scripted(asked_about=assessment("PARTIAL", asked_about="lab fee"))
    reply, *_ = run(schema_lm, "How much is the laboratory fee?", "askfirst.escalation=false", script=partial)
    assert reply.route == "answer" and reply.label == "ANSWERABLE" and reply.one_part_partial == "ANSWERABLE"
    reply, *_ = run(schema_lm, "How much is the laboratory fee?", "askfirst.escalation=false", "askfirst.partial_needs_parts=false", script=partial)
    assert reply.route == "partial" and reply.one_part_partial is None
    reply, *_ = run(schema_lm, "How much is the laboratory fee, and is it refunded?", "askfirst.escalation=false", script=partial)
    assert reply.route == "partial" and reply.one_part_partial is None  # two parts: one may be unanswered
    # With one_part_key_terms, taken as ANSWERABLE, it no longer has PARTIAL's exemption from the key-term check.
    absent = scripted(asked_about=assessment("PARTIAL", asked_about="parking permit"))
    reply, *_ = run(schema_lm, "How much is a parking permit?", "askfirst.escalation=false", "askfirst.key_terms=2", "askfirst.one_part_key_terms=true",
                    script=absent)
    assert reply.route == "idk" and reply.one_part_partial == "ANSWERABLE" and reply.key_terms["overruled"] == "ANSWERABLE"
    reply, *_ = run(schema_lm, "How much is a parking permit?", "askfirst.escalation=false", "askfirst.key_terms=2", script=absent)
    # Off (the default), the exemption stands: taken as ANSWERABLE, the fee passages' diverging answers are asked about.
    assert reply.route == "clarify" and reply.one_part_partial == "ANSWERABLE" and reply.key_terms["overruled"] is None


def test_a_first_question_pointing_at_something_it_never_names_is_asked_about_before_the_assessment(schema_lm):
    """URASys's SQuAD2-ambiguous "When did he return to work?": no search or assessment can tell who is meant."""
    assessed = []
    script = scripted(asked_about=lambda text: assessed.append(text) or ANSWERABLE)
    reply, *_ = run(schema_lm, "When did he pay the fee?", script=script)
    assert reply.route == "clarify" and reply.label == "UNDERSPECIFIED" and reply.dangling == ["he"] and not assessed
    assert reply.answer == 'Who do you mean by "he"? Which fee do you mean?' and reply.evidence  # then the responder's
    reply, *_ = run(schema_lm, "When did he pay the lab fee?", script=script)  # "lab", an option, is the user's own word
    assert reply.options == ["registration"] and reply.answer == 'Who do you mean by "he"?'
    reply, *_ = run(schema_lm, "Is the fee of these courses ever refunded?", script=script)
    assert reply.route == "clarify" and reply.dangling == ["these courses"]
    assert reply.answer == 'What do you mean by "these courses"? Which fee do you mean?'
    reply, *_ = run(schema_lm, "When did he pay the lab fee?", "askfirst.dangling_reference=false", "askfirst.ambiguity=off", script=script)
    assert reply.route == "answer" and reply.dangling is None and len(assessed) == 1
    reply, *_ = run(schema_lm, "When did he pay the lab fee?", "askfirst.mode=answer_all", "askfirst.ambiguity=off", script=script)
    assert reply.route == "answer" and reply.dangling is None  # answer_all asks nothing
    follow_up = [{"role": "user", "content": "Is Dr. Okafor still a student?"}, {"role": "assistant", "content": "Yes [fees-lab]."},
                 {"role": "user", "content": "When did he pay the lab fee?"}]
    reply, *_ = run(schema_lm, follow_up, "askfirst.ambiguity=off", script=script)
    assert reply.route == "answer" and reply.dangling == []  # an earlier turn may say who: the other stages decide
    reply, *_ = run(schema_lm, "When did Dr. Okafor pay his lab fee?", "askfirst.ambiguity=off", script=script)
    assert reply.route == "answer" and reply.dangling == []


def test_a_follow_up_pointing_at_a_thing_no_earlier_turn_named_is_asked_about_before_the_assessment(schema_lm):
    """MTRAG-UN's "Tell me about the importance of this tricolor national flag." after turns about Medicare."""
    assessed = []
    script = scripted(asked_about=lambda text: assessed.append(text) or ANSWERABLE)
    earlier = [{"role": "user", "content": "How much is the lab fee?"}, {"role": "assistant", "content": "EUR 85 [fees-lab]."}]
    new_thing = [*earlier, {"role": "user", "content": "Is the lab fee of these evening courses ever refunded?"}]
    reply, *_ = run(schema_lm, new_thing, script=script)
    assert reply.route == "clarify" and reply.label == "UNDERSPECIFIED" and reply.dangling == ["these evening courses"]
    assert reply.answer.startswith('What do you mean by "these evening courses"?') and not assessed
    named_before = [*earlier, {"role": "user", "content": "Is this fee refunded?"}]  # "fee" is in the earlier turns
    reply, *_ = run(schema_lm, named_before, "askfirst.ambiguity=off", script=script)
    assert reply.route == "answer" and reply.dangling == [] and len(assessed) == 1
    reply, *_ = run(schema_lm, new_thing, "askfirst.dangling_follow_up=false", "askfirst.ambiguity=off", script=script)
    assert reply.route == "answer" and reply.dangling is None and len(assessed) == 2
    reply, *_ = run(schema_lm, new_thing, "askfirst.dangling_reference=false", "askfirst.ambiguity=off", script=script)
    assert reply.route == "clarify" and len(assessed) == 2  # the first-turn switch leaves follow-ups alone


def test_a_follow_up_that_switches_topic_to_a_thing_named_by_kind_is_asked_about_before_the_assessment(schema_lm):
    """MTRAG-UN's "How did the fast food chain establish a significant presence in the United States?" after Gallipoli."""
    assessed = []
    script = scripted(asked_about=lambda text: assessed.append(text) or ANSWERABLE)
    loan = LOAN_FOLLOW_UP[-1]["content"]
    far = {loan: 1}  # the loan question on a topic of its own, far from the scholarship turn
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.standalone=false", script=script, topics=far)
    assert reply.route == "clarify" and reply.label == "UNDERSPECIFIED" and not assessed
    assert reply.topic_switch == {"words": ["loan"], "similarity": 0.0, "switched": True}
    assert reply.answer == "Which fee do you mean?" and reply.evidence  # the clarification responder's question, no lead
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.standalone=false", "askfirst.ambiguity=off", script=script)  # one topic
    assert reply.route == "answer" and reply.topic_switch == {"words": ["loan"], "similarity": 1.0, "switched": False}
    switched_off = ("askfirst.standalone=false", "askfirst.ambiguity=off", "askfirst.topic_switch_below=null")
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, *switched_off, script=script, topics=far)
    assert reply.route == "answer" and reply.topic_switch is None and len(assessed) == 2
    # turned away by the retrieval gate: nothing in the collection is near it, so it has no loan the user may mean
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.standalone=false", "askfirst.escalation=false", "askfirst.min_top_cosine=0.4",
                    script=script, topics=far, cosines={loan: 0.3})
    assert reply.route == "idk" and reply.gated and reply.topic_switch is None
    reply, *_ = run(schema_lm, LOAN_FOLLOW_UP, "askfirst.standalone=false", "askfirst.mode=answer_all", "askfirst.ambiguity=off",
                    script=script, topics=far)
    assert reply.route == "answer" and reply.topic_switch is None  # answer_all asks nothing
    reply, *_ = run(schema_lm, loan, "askfirst.standalone=false", "askfirst.ambiguity=off", script=script, topics=far)
    assert reply.topic_switch is None  # a first question has no topic to leave
