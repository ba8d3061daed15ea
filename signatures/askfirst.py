"""The composed askfirst program's own steps: a standalone question, and a candidate answer from one passage."""

import dspy


class StandaloneQuestion(dspy.Signature):
    """Rewrite the user's latest question so that it can be understood without the conversation: resolve
    pronouns and references ("it", "that course", "the second one") from the earlier turns, keep every
    constraint the user gave, and add nothing else. If it already stands alone, return it unchanged."""

    conversation_history: str = dspy.InputField(desc="Earlier turns, oldest first")
    question: str = dspy.InputField(desc="The user's latest question")
    standalone_question: str = dspy.OutputField(desc="One self-contained question")


class CandidateAnswer(dspy.Signature):
    """Answer the question from this one passage alone, in a few words (a name, an amount, a date, a short
    phrase). If the passage does not answer it, answer exactly "none"."""

    question: str = dspy.InputField()
    passage: str = dspy.InputField(desc="One passage as '[id] title: text'")
    answer: str = dspy.OutputField(desc="A few words from the passage, or 'none'")
