"""The Answerability Classifier that decides which responder speaks."""

from typing import Literal

import dspy

from askfirst.signatures.bounds import NoteList

AnswerabilityLabel = Literal["ANSWERABLE", "PARTIAL", "UNDERSPECIFIED", "UNANSWERABLE"]


class ClassifyAnswerability(dspy.Signature):
    """Decide whether the passages answer the user's latest question.
    First copy the sentences from the passages that answer the question, each with its [passage id]
    (copy none if no passage answers it). Then choose the label:
    ANSWERABLE: the copied sentences answer the whole question.
    PARTIAL: they answer only part of the question; another part is not in the passages.
    UNDERSPECIFIED: the question is vague and could mean several different things in the passages (for
    example "the fare" when there are single, day-pass and monthly fares), so the user must say which one.
    UNANSWERABLE: no passage states what is asked.
    Judge only from the passages, never from outside knowledge."""

    conversation_history: str = dspy.InputField(desc="Earlier turns, oldest first; empty for a first question")
    question: str = dspy.InputField(desc="The user's latest question")
    passages: str = dspy.InputField(desc="Retrieved passages as '[id] title: text'")
    answering_sentences: NoteList = dspy.OutputField(desc="Sentences copied from the passages that answer the question, each with its [id]")
    label: AnswerabilityLabel = dspy.OutputField()
    confidence: float = dspy.OutputField(desc="Probability between 0 and 1 that the label is right")
