"""The composed askfirst program on a scripted LM: its stages and switches (rewrite, router, assessment and its checks,
escalation, retrieval gate, debate). Asking first is in test_askfirst_ambiguity and test_askfirst_clarification."""

import math

import dspy
import pytest

from askfirst.programs.askfirst.key_terms import unmatched_terms
from askfirst.programs.askfirst.program import assessed_passages
from askfirst.programs.askfirst.standalone import checked_rewrite, copies_one_of, mostly_new_words, repeats_earlier_turn, without_copied_tags
from askfirst.programs.common.conversation import format_history, previous_user_turn, to_turns, user_turns
from tests.askfirst_harness import ANSWERABLE, FEES_FOLLOW_UP, UNANSWERABLE, assessment, referent, run, scoring_lm, scripted
from tests.conftest import PASSAGES


@pytest.mark.parametrize(("threshold", "flagged"), [(0.25, True), (0.5, False)])
def test_with_a_threshold_the_labels_probability_decides_not_the_label_written(threshold, flagged):
    reply, *_ = run(scoring_lm({"SPECIFIC": math.log(0.7), "UNDERSPECIFIED": math.log(0.3)}), "How much is the fee?",
                    "askfirst.ambiguity=off", "askfirst.referent_check=true", f"askfirst.referent_threshold={threshold}",
                    "askfirst.first_turn_cue_answered=false", script=scripted(unnamed=referent("SPECIFIC")))
    assert reply.referent["source"] == "logprobs" and reply.referent["p_underspecified"] == pytest.approx(0.3)
    assert reply.referent["flagged"] is flagged and reply.route == ("clarify" if flagged else "answer")


def test_the_record_keeps_the_sentences_the_assessment_copied(schema_lm):
    copied = assessment() | {"answering_sentences": ["[fees-lab] The laboratory fee is EUR 85."]}
    reply, *_ = run(schema_lm, "How much is the laboratory fee?", script=scripted(asked_about=copied))
    assert reply.route == "answer" and reply.extras["answering_sentences"] == ["[fees-lab] The laboratory fee is EUR 85."]
    reply, *_ = run(schema_lm, "Lab fee?", "askfirst.escalation=false", "askfirst.min_top_cosine=0.4", cosines={"Lab fee?": 0.3})
    assert reply.route == "idk" and reply.extras["answering_sentences"] is None  # gated: no assessment call


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


def test_an_unanswerable_label_stands_only_below_its_cosine_threshold(schema_lm):
    script = scripted(asked_about=UNANSWERABLE)
    common = ("askfirst.ambiguity=off", "askfirst.escalation=false")
    reply, *_ = run(schema_lm, "Lab fee?", *common, "askfirst.label_unanswerable_below=0.55", script=script, cosines={"Lab fee?": 0.60})
    assert reply.route == "answer" and reply.label == "ANSWERABLE" and reply.unanswerable_overruled == 0.60
    reply, *_ = run(schema_lm, "Lab fee?", *common, "askfirst.label_unanswerable_below=0.55", script=script, cosines={"Lab fee?": 0.50})
    assert reply.route == "idk" and reply.label == "UNANSWERABLE" and reply.unanswerable_overruled is None
    reply, *_ = run(schema_lm, "Lab fee?", *common, script=script, cosines={"Lab fee?": 0.60})
    assert reply.route == "idk" and reply.unanswerable_overruled is None  # off by default: the label stands
    reply, *_ = run(schema_lm, "Lab fee?", "askfirst.ambiguity=off", "askfirst.label_unanswerable_below=0.55", script=script,
                    cosines={"Lab fee?": 0.50, "Lab fee? laboratory charge": 0.60})
    assert reply.escalated and reply.route == "idk" and reply.unanswerable_overruled is None  # the searched query's cosine decides
    partial = scripted(asked_about=assessment("PARTIAL"))
    reply, *_ = run(schema_lm, "What is the lab fee, and who teaches it?", *common, "askfirst.label_unanswerable_below=0.55",
                    script=partial, cosines={"What is the lab fee, and who teaches it?": 0.60})
    assert reply.route == "partial" and reply.unanswerable_overruled is None  # only UNANSWERABLE is overruled


def test_an_overruled_label_that_escalation_discards_is_not_recorded():
    # A first PARTIAL (P(answerable) 0.7 under program.answer_threshold 0.75) escalates; the second assessment's
    # UNANSWERABLE is overruled, but its P(answerable) keeps it from answering, so the first assessment stands.
    labels = iter([assessment("PARTIAL"), UNANSWERABLE])
    lm = scoring_lm({"PARTIAL": math.log(0.4), "ANSWERABLE": math.log(0.3), "UNDERSPECIFIED": math.log(0.2), "UNANSWERABLE": math.log(0.1)})
    question = "How much is the lab fee? Can I pay it later?"
    reply, *_ = run(lm, question, "askfirst.ambiguity=off", "askfirst.label_unanswerable_below=0.55", "program.answer_threshold=0.75",
                    "askfirst.referent_cue=false", script=scripted(asked_about=lambda _: next(labels)), cosines={question: 0.60})
    assert reply.escalated and reply.route == "idk" and reply.label == "PARTIAL" and reply.unanswerable_overruled is None


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
