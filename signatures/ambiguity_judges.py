"""Judges for ambiguous questions: CLARION's LLM-as-judge scores of a long answer, and URASys's check that a
clarifying question asks for what the user left out."""

from typing import Literal

import dspy

Score = Literal[0, 1, 2, 3, 4, 5]


class JudgeLongAnswer(dspy.Signature):
    """Rate the answer to an ambiguous question on four criteria, each from 0 (worst) to 5 (best).
    relevance: it addresses the question's readings. faithfulness: every claim is supported by the
    passages. informativeness: it gives the useful details for each reading. correctness: it agrees with
    the reference answers. Judge strictly and only from what is given."""

    question: str = dspy.InputField()
    reference_answers: str = dspy.InputField(desc="Each reading's clarified question and its gold short answers")
    passages: str = dspy.InputField(desc="The passages the answer may use")
    answer: str = dspy.InputField()
    relevance: Score = dspy.OutputField()
    faithfulness: Score = dspy.OutputField()
    informativeness: Score = dspy.OutputField()
    correctness: Score = dspy.OutputField()


class JudgeAsksForInfo(dspy.Signature):
    """Does the reply ask the user for at least one of the missing pieces of information listed? A reply
    that answers directly, refuses, or asks about something else does not."""

    question: str = dspy.InputField()
    missing_information: str = dspy.InputField(desc="What a good clarifying question would ask for, one per line")
    reply: str = dspy.InputField()
    asks_for_missing_information: bool = dspy.OutputField()
