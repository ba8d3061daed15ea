"""The composed askfirst program's own steps: a standalone question, the unnamed-referent check, the evidence assessment,
and per-passage answers."""

from typing import Literal

import dspy

from askfirst.signatures.answerability import ClassifyAnswerability
from askfirst.signatures.bounds import PassageAnswerList


class StandaloneQuestion(dspy.Signature):
    """Rewrite the user's latest question so that it can be understood without the conversation: resolve
    pronouns and references ("it", "that route", "the second one") from the earlier turns, keep every
    constraint the user gave, and add nothing else. If it already stands alone, return it unchanged."""

    conversation_history: str = dspy.InputField(desc="Earlier turns, oldest first")
    question: str = dspy.InputField(desc="The user's latest question")
    standalone_question: str = dspy.OutputField(desc="One self-contained question")


ReferentLabel = Literal["SPECIFIC", "UNDERSPECIFIED"]


class UnnamedReferent(dspy.Signature):
    """Decide whether the user's latest question says which thing it asks about.

    UNDERSPECIFIED: it asks about one particular thing but names it only by its kind ("the fare", "this route",
    "the actor", "the hurricane", "this language"), and neither the question nor the earlier turns say which one,
    so several things of that kind could be meant. SPECIFIC: it names the thing ("Hurricane Katrina", "the monthly
    fare for zone 2"), or the earlier turns name it and the question refers back to it ("it", "that route", "the
    second one"), or it asks about the kind in general ("how do hurricanes form?"). First write the unnamed thing,
    or "none", then the label."""

    conversation_history: str = dspy.InputField(desc="Earlier turns, oldest first")
    question: str = dspy.InputField(desc="The user's latest question")
    unnamed: str = dspy.OutputField(desc="The thing the question refers to by its kind only, a few words, or 'none'")
    label: ReferentLabel = dspy.OutputField()


class AssessEvidence(ClassifyAnswerability):
    # The classifier's extract-then-label instruction (it labelled the demo's answerable questions best), then one
    # more output: the words the key-term check looks for in the passages.
    __doc__ = ClassifyAnswerability.__doc__ + """
    Then name what the question asks about, in the question's own words (the thing or person, not the
    quantity: "bike rental", "monthly pass for zone 2", "first bus on line 7")."""

    asked_about: str = dspy.OutputField(desc="What the question asks about, in its own words, a few words")


class PassageAnswers(dspy.Signature):
    """For each passage, write the answer that passage alone gives to the user's question, in a few words (an
    amount, a date, a code, a name), or "none" if it does not answer it. Give one entry per passage, in
    the passages' order."""

    question: str = dspy.InputField(desc="The user's latest question")
    passages: str = dspy.InputField(desc="Passages as '[id] title: text'")
    passage_answers: PassageAnswerList = dspy.OutputField(desc="One {passage_id, answer} per passage: its answer in a few words, or 'none'")
