"""The composed askfirst program's own steps: a standalone question, the evidence assessment, and per-passage answers."""

import dspy

from askfirst.signatures.answerability import ClassifyAnswerability
from askfirst.signatures.bounds import PassageAnswerList


class StandaloneQuestion(dspy.Signature):
    """Rewrite the user's latest question so that it can be understood without the conversation: resolve
    pronouns and references ("it", "that course", "the second one") from the earlier turns, keep every
    constraint the user gave, and add nothing else. If it already stands alone, return it unchanged."""

    conversation_history: str = dspy.InputField(desc="Earlier turns, oldest first")
    question: str = dspy.InputField(desc="The user's latest question")
    standalone_question: str = dspy.OutputField(desc="One self-contained question")


class AssessEvidence(ClassifyAnswerability):
    # The classifier's extract-then-label instruction (it labelled the demo's answerable questions best), then one
    # more output: the words the key-term check looks for in the passages.
    __doc__ = ClassifyAnswerability.__doc__ + """
    Then name what the question asks about, in the question's own words (the thing or person, not the
    quantity: "parking permit", "single room in Birchwood Hall", "prerequisite for CS 201")."""

    asked_about: str = dspy.OutputField(desc="What the question asks about, in its own words, a few words")


class PassageAnswers(dspy.Signature):
    """For each passage, write the answer that passage alone gives to the user's question, in a few words (an
    amount, a date, a course code, a name), or "none" if it does not answer it. Give one entry per passage, in
    the passages' order."""

    question: str = dspy.InputField(desc="The user's latest question")
    passages: str = dspy.InputField(desc="Passages as '[id] title: text'")
    passage_answers: PassageAnswerList = dspy.OutputField(desc="One {passage_id, answer} per passage: its answer in a few words, or 'none'")
