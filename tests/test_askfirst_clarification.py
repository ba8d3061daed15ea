"""The askfirst program's referent checks (a thing named only by its kind, pointed at but never named, a topic switch)
and the checks on the clarification responder's options, on a scripted LM."""

from askfirst.programs.askfirst.divergence import UNSAID_CHOICE, asks_which, names_kinds, not_readings, repeated_example, titled_readings, ungrounded_options
from askfirst.retrieval.chunking import Passage
from tests.askfirst_harness import ANSWERABLE, UNANSWERABLE, referent, run, scripted
from tests.conftest import PASSAGES

LOAN_FOLLOW_UP = [{"role": "user", "content": "Which scholarships can first-year students get?"},
                  {"role": "assistant", "content": "The Northmoor Merit Scholarship [schol-merit]."},
                  {"role": "user", "content": "What documentation is needed to apply for the loan?"}]


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
