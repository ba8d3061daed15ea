"""LLM judges of MTRAGEval (SemEval-2026 Task 8), as Signatures so a judge LM can be swapped or compiled."""

from typing import Literal

import dspy

from askfirst.signatures.bounds import NoteList


class JudgeIDK(dspy.Signature):
    """Does the response indicate that there is not sufficient information to answer the question?
    Answer "yes" if the response says it does not know or cannot answer, "partial" if it answers part of
    the question and says the rest cannot be answered, and "no" if it answers the question."""

    question: str = dspy.InputField()
    response: str = dspy.InputField()
    verdict: Literal["yes", "no", "partial"] = dspy.OutputField()


class JudgeClarification(dspy.Signature):
    """Is the response a clarification request: a direct question or directive asking the user to supply
    missing information (for example which of several things they mean)?"""

    question: str = dspy.InputField()
    response: str = dspy.InputField()
    decision: Literal["yes", "no"] = dspy.OutputField()


class JudgeFaithfulness(dspy.Signature):
    """Break the answer into its factual claims, then judge each claim: "supported" if the contexts state
    it, "unsupported" otherwise (the RAGAS faithfulness procedure)."""

    conversation: str = dspy.InputField(desc="The conversation as 'speaker: text' lines")
    contexts: str = dspy.InputField(desc="The passages the answer may use")
    answer: str = dspy.InputField()
    claims: NoteList = dspy.OutputField(desc="The answer's factual claims")
    verdicts: list[Literal["supported", "unsupported"]] = dspy.OutputField(desc="One verdict per claim, in order")


class JudgeAnswerQuality(dspy.Signature):
    """Compare the answer with the reference answer, the documents and the previous turns. Rate its
    faithfulness to the documents, appropriateness to the conversation and completeness against the
    reference, as one rating from 1 (poor) to 10 (as good as the reference)."""

    conversation: str = dspy.InputField(desc="The conversation as 'speaker: text' lines")
    documents: str = dspy.InputField()
    reference: str = dspy.InputField(desc="The reference answer")
    answer: str = dspy.InputField()
    rating: int = dspy.OutputField(desc="1 to 10")
