"""The askfirst program's checks for a thing the question never names (no LM): dangling pronouns and demonstratives, a
follow-up's demonstrative new to the conversation, the unnamed-referent cues, and a follow-up that switches topic."""

from askfirst.config import ProgramConfig
from askfirst.programs.askfirst.key_terms import documents_with
from askfirst.programs.askfirst.topic_switch import switched_referents, topic_similarity
from askfirst.programs.askfirst.unnamed_referent import (bare_referents, dangling_kind, dangling_question, dangling_references, referent_question,
                                                          unnamed_referents, unseen_demonstratives)
from askfirst.programs.common.conversation import history_text, question_and_history
from tests.conftest import PASSAGES
from tests.askfirst_harness import QueryCosines


def test_the_first_turn_cue_marks_a_question_that_names_nothing_but_the_x():
    assert bare_referents("When did the investigation begin?", max_words=3) == ["investigation"]
    assert bare_referents("How much is the scholarship worth?", max_words=3) == ["scholarship"]
    assert bare_referents("How much is the scholarship worth?", max_words=1) == []  # two content words
    assert bare_referents("When did the investigation begin?", max_words=0) == []
    assert bare_referents("When was the Hartley grant founded?", max_words=3) == []  # a name says which
    assert bare_referents("What was the fee in 2023?", max_words=3) == []  # so may a number
    assert bare_referents("What is the tuition for the medical school?", max_words=3) == []  # two: one qualifies the other
    assert bare_referents("What is the same as before?", max_words=3) == []  # "the same" names no thing
    assert bare_referents("How much are fees?", max_words=3) == []  # no "the"
    assert documents_with("fees", PASSAGES) == {"fees-lab", "fees-registration"}  # by stem: "fee"
    assert documents_with("prerequisites", PASSAGES) == {"course-cs201"} and documents_with("tuition", PASSAGES) == set()


def test_the_unnamed_referent_cue_reads_the_earlier_turns_by_stem():
    earlier = "Which scholarships can first-year students get? The Merit Scholarship."
    assert unnamed_referents("What documentation is needed to apply for the loan?", earlier) == ["loan"]
    assert unnamed_referents("Is the scholarship renewable?", earlier) == []  # "scholarships" named it
    assert unnamed_referents("Who funds the Hartley grant, and is the same true of this award?", earlier) == ["award"]
    assert unnamed_referents("What documentation is needed to apply for the loan?", "") == []  # no earlier turn
    # "this" as a pronoun: the word after it is no thing's name ("and" was taken for one on MTRAG-UN).
    assert unnamed_referents("What is the link between this and the Merit Scholarship?", earlier) == ["link"]


def test_unseen_demonstratives_are_a_follow_ups_demonstratives_with_a_word_new_to_the_conversation():
    earlier = "user: What does Medicare cover?\nassistant: Original Medicare covers hospital stays."
    assert unseen_demonstratives("Tell me about the importance of this tricolor national flag.", earlier) == ["this tricolor national flag"]
    assert unseen_demonstratives("Does this Medicare cover dental care?", earlier) == []  # a name, and "cover" said before
    assert unseen_demonstratives("Does this Medicare plan cover dental care?", earlier) == ["this Medicare plan cover"]  # "plan"
    assert unseen_demonstratives("Do these hospitals charge more?", earlier) == []  # "hospitals" stems as "hospital" does
    assert unseen_demonstratives("Which actor played the boy in this TV series?", earlier) == ["this TV series"]  # "series"
    assert unseen_demonstratives("Does the Medicare of this kind cover dental care?", earlier) == []  # "kind" names nothing
    assert unseen_demonstratives("Is this different from Medicaid?", earlier) == []  # a lone word after "is": a predicate
    assert unseen_demonstratives("What does Medicare pay for those visits?", earlier) == ["those visits"]
    assert unseen_demonstratives("Is this plan different?", "") == []  # no earlier turn: dangling_references' business
    assert dangling_references("Is this different from Medicaid?") == ["this different"]  # a first question's "this" dangles


def test_dangling_references_are_pronouns_with_nothing_to_stand_for_and_demonstratives():
    assert dangling_references("When did he return to work?") == ["he"]
    assert dangling_references("How many awards has she won, and when did she win her first?") == ["she", "she", "her"]
    assert dangling_references("Which war did they participate in?") == ["they"]
    assert dangling_references("Who played the title character he-man in the 1987 movie?") == []  # no pronoun in "he-man"
    assert dangling_references("What are the services offered by this state library?") == ["this state library"]
    assert dangling_references("Does this animal have antlers?") == ["this animal"]  # the phrase ends at a function word
    assert dangling_references("Are these clinics open at night?") == ["these clinics open"]  # no tagger: a verb joins it
    assert dangling_references("Did Beyoncé say she is a feminist?") == []  # a name before it
    assert dangling_references("Chopin brought a new sense of nationalism with his music because of what?") == []
    assert dangling_references("Do students pay a fee when they withdraw?") == []  # a plural noun before it
    assert dangling_references("Who could handle the calculations at that time?") == ["that time"]  # "that" after a preposition
    assert dangling_references("Which course that I took has a lab?") == []  # a relative pronoun
    assert dangling_references("Which courses must I finish before I take CS 310?") == []  # "I" is no third person
    assert dangling_references("Is this the only way to pay?") == []  # "this" before a function word
    assert dangling_references("Who runs the company that owns the hall?") == []  # "that" is mostly a relative pronoun
    assert dangling_references("What did it serve as before?") == ["it"]  # "it" with nothing before it
    assert dangling_references("How does the engine start when it is cold?") == []  # "engine" before it
    assert dangling_references("How long does it take to enrol?") == []  # a dummy "it"
    assert dangling_references("Is it true that fees rose?") == [] and dangling_references("Who made it to the final?") == []
    # What the question itself named before it (MTRAG's synthetic tasks, none of them underspecified)
    assert dangling_references("What are the goals of collaborative courts, and what are some examples of these courts?") == []
    assert dangling_references("What was the purpose of the twelve spies' mission and the outcome of their report?") == []
    assert dangling_references("What are the goals of these courts?") == ["these courts"]
    assert dangling_question(["their", "this state"]) == 'Who or what do you mean by "their"?'
    assert dangling_question(["His", "they"]) == 'Who do you mean by "His"?' and dangling_question([]) == ""
    assert dangling_question(["these clinics"]) == 'What do you mean by "these clinics"?'
    assert dangling_question(["it"]) == 'What do you mean by "it"?'
    # A phrase that starts with a name and follows the opening auxiliary ends with the name: "publish" is the verb.
    court = "Does this Superior Court publish judges roster?"
    assert dangling_question(["this Superior Court publish"], court) == 'What do you mean by "this Superior Court"?'
    assert dangling_question(["this TV series"], "Which actor played a boy in this TV series?") == 'What do you mean by "this TV series"?'
    assert dangling_question(["this plan covers"], "Does this plan covers dental?") == 'What do you mean by "this plan covers"?'
    assert referent_question(["investigation"]) == "Which investigation do you mean?" and referent_question([]) == ""
    # The kind the quoted phrase names, for the options: its last word, lower-cased; a pronoun names none.
    assert dangling_kind(["this tricolor national flag"]) == "flag" and dangling_kind(["this Superior Court publish"], court) == "court"
    assert dangling_kind(["he", "this state"]) is None and dangling_kind([]) is None


_, LOAN_HISTORY, _ = question_and_history([{"role": "user", "content": "Which scholarships can first-year students get?"},
                                           {"role": "assistant", "content": "The Northmoor Merit Scholarship [schol-merit]."},
                                           {"role": "user", "content": "Is it renewable?"}, {"role": "assistant", "content": "Yes."},
                                           {"role": "user", "content": "What documentation is needed to apply for the loan?"}],
                                          ProgramConfig(max_question_chars=500, history_turns=6))


def test_topic_similarity_is_the_best_cosine_to_an_earlier_user_turn():
    loan = "What documentation is needed to apply for the loan?"
    assert topic_similarity(loan, LOAN_HISTORY, QueryCosines({}, {loan: 1, "Is it renewable?": 1}).embed) == 1.0  # one turn shares it
    assert topic_similarity(loan, LOAN_HISTORY, QueryCosines({}, {"Is it renewable?": 2}).embed) == 1.0
    assert topic_similarity("Which loan?", LOAN_HISTORY, QueryCosines({}, {"Which loan?": 1}).embed) == 0.0  # far from both turns
    assert topic_similarity("Which loan?", "", QueryCosines({}).embed) is None  # no earlier user turn


def test_a_follow_up_switches_topic_when_it_names_its_thing_by_kind_and_is_far_from_every_earlier_user_turn():
    loan = "What documentation is needed to apply for the loan?"
    said_before = history_text(LOAN_HISTORY)
    far = QueryCosines({}, {loan: 1}).embed
    assert switched_referents(loan, LOAN_HISTORY, said_before, far, below=0.125) == {"words": ["loan"], "similarity": 0.0, "switched": True}
    assert not switched_referents(loan, LOAN_HISTORY, said_before, far, below=0.0)["switched"]  # below, not at, the threshold
    assert switched_referents(loan, LOAN_HISTORY, said_before, QueryCosines({}).embed, below=0.125)["switched"] is False  # same topic
    named = QueryCosines({}, {"What documentation is needed for the scholarship?": 1})
    record = switched_referents("What documentation is needed for the scholarship?", LOAN_HISTORY, said_before, named.embed, below=0.125)
    assert record == {"words": [], "similarity": None, "switched": False} and named.embedded == []  # no cue word: nothing embedded
