"""LLM judges of MTRAGEval (SemEval-2026 Task 8), as Signatures so a judge LM can be swapped or compiled."""

from typing import Literal

import dspy

from askfirst.signatures.bounds import NoteList


# MTRAGEval's IDK judge instruction, unchanged (IBM/mt-rag-benchmark scripts/evaluation/judge_utils.py, Apache-2.0);
# its examples are askfirst/evaluation/mtrag_idk_prompt.py.
class JudgeIDK(dspy.Signature):
    """Read an inquiry and a response to it.  Decide if the response contains, in part or in whole, an indication that there is not sufficient information to fully answer the inquiry.  Use only one of the following labels: yes, no, partial.  Answer "yes" if the response indicates that the inquiry cannot be answered, for example, due to lack of information (in a reference document or text).  Answer "partial" if the response indicates insufficient information (in a reference document or text) to answer part of the inquiry, but still attempts to answer other part of the inquiry that can be answered.  Answer "no" if the response does not indicate a lack of information preventing answering part of the inquiry, even if some reasoning steps or general knowledge are needed to address the inquiry."""

    inquiry: str = dspy.InputField(desc="The conversation so far, one 'speaker: text' line a turn.")
    response: str = dspy.InputField()
    verdict: Literal["yes", "no", "partial"] = dspy.OutputField()


# MTRAGEval's clarification judge (UNDERSPECIFIED_PROMPT of IBM/mt-rag-benchmark scripts/evaluation/underspecified_eval.py,
# Apache-2.0): its role, definition and counter-examples unchanged; it reads the response alone. Its JSON output
# format gives way to the typed field (its "explanation" comes after the decision and is not scored).
class JudgeClarification(dspy.Signature):
    """You are an assistant that determines whether a given response is asking for clarification.

    A clarification response is a response whose primary purpose is to request additional information needed to resolve an ambiguity, underspecification, or unclear reference in the user's original message.

    Clarification responses may appear in two forms:
    1. **Direct clarification questions**
       – Explicit questions asking the user to specify or choose among options.
       Example: “Which one are you referring to?”

    2. **Directive clarification requests**
       – Imperative or polite statements that ask the user to *provide specific missing information*.
       – These still count even if they contain no question mark.
       Example: “Please provide the book you are referring to.”

    ## Not clarification responses:
    - Statements that merely express inability to answer **without requesting the missing info**.
    - Responses that mention missing information but do **not** directly ask the user to provide it.
      Example: “I can't answer because I don't have your location.”
    - Responses that ask unrelated questions or introduce new topics."""

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
