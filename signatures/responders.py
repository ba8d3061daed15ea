"""The three responders the router chooses between (Complete, Partial, Clarification)."""

import dspy

from askfirst.signatures.bounds import IdList, OptionList


class CompleteAnswer(dspy.Signature):
    """Answer the user's latest question using ONLY the provided passages and the conversation.
    Synthesise across passages when the answer spans several, keep a conversational tone, be specific
    (amounts, dates, codes), and cite the id of every passage you used."""

    conversation_history: str = dspy.InputField(desc="Earlier turns, oldest first; empty for a first question")
    question: str = dspy.InputField(desc="The user's latest question")
    passages: str = dspy.InputField(desc="Passages as '[id] title: text'")
    answer: str = dspy.OutputField(desc="A direct answer in one to four sentences")
    cited_ids: IdList = dspy.OutputField(desc="Ids of the passages the answer uses")


class PartialAnswer(dspy.Signature):
    """The passages answer only part of the user's question. Answer the part they support, citing the
    passages used, and say plainly which part of the question they do not answer."""

    conversation_history: str = dspy.InputField(desc="Earlier turns, oldest first; empty for a first question")
    question: str = dspy.InputField(desc="The user's latest question")
    passages: str = dspy.InputField(desc="Passages as '[id] title: text'")
    answer: str = dspy.OutputField(desc="What the passages do answer, in one to three sentences")
    missing: str = dspy.OutputField(desc="The part of the question the passages do not answer")
    cited_ids: IdList = dspy.OutputField(desc="Ids of the passages the answer uses")


class ClarificationRequest(dspy.Signature):
    """The user's question is ambiguous: it could refer to several different things in the passages.
    Ask one short clarifying question that lists the concrete options the passages reveal, so the user
    can pick one (for example: "Do you mean the single fare, the day pass or the monthly pass?")."""

    conversation_history: str = dspy.InputField(desc="Earlier turns, oldest first; empty for a first question")
    question: str = dspy.InputField(desc="The user's latest question")
    passages: str = dspy.InputField(desc="Passages as '[id] title: text'")
    options: OptionList = dspy.OutputField(desc="The distinct things the question could refer to")
    clarifying_question: str = dspy.OutputField(desc="One question to the user that lists those options")
