"""The Answerability Classifier that decides which responder speaks."""

from typing import Literal

import dspy

AnswerabilityLabel = Literal["ANSWERABLE", "PARTIAL", "UNDERSPECIFIED", "UNANSWERABLE"]


class ClassifyAnswerability(dspy.Signature):
    """Decide, from the retrieved passages alone, how the user's latest question can be answered.
    ANSWERABLE: the passages state everything the question asks.
    PARTIAL: the passages answer part of the question but not all of it.
    UNDERSPECIFIED: the question is ambiguous — it could mean several different things that the passages
    answer differently (for example "the fee" when there are tuition, lab and registration fees), so the
    user must say which one they mean.
    UNANSWERABLE: the passages do not contain the asked-for fact at all.
    Do not use outside knowledge: judge only what the passages say."""

    conversation_history: str = dspy.InputField(desc="Earlier turns, oldest first; empty for a first question")
    question: str = dspy.InputField(desc="The user's latest question")
    passages: str = dspy.InputField(desc="Retrieved passages as '[id] title: text'")
    label: AnswerabilityLabel = dspy.OutputField()
    confidence: float = dspy.OutputField(desc="Probability between 0 and 1 that the label is right")
