"""The composed askfirst program's own steps: a standalone question, the evidence assessment, and per-passage answers."""

import dspy

from askfirst.signatures.answerability import AnswerabilityLabel
from askfirst.signatures.bounds import NoteList, PassageAnswerList


class StandaloneQuestion(dspy.Signature):
    """Rewrite the user's latest question so that it can be understood without the conversation: resolve
    pronouns and references ("it", "that course", "the second one") from the earlier turns, keep every
    constraint the user gave, and add nothing else. If it already stands alone, return it unchanged."""

    conversation_history: str = dspy.InputField(desc="Earlier turns, oldest first")
    question: str = dspy.InputField(desc="The user's latest question")
    standalone_question: str = dspy.OutputField(desc="One self-contained question")


class AssessEvidence(dspy.Signature):
    """Decide whether the passages answer the user's latest question.
    First copy the sentences from the passages that answer the question, each with its [passage id]
    (copy none if no passage answers it). Then choose the label:
    ANSWERABLE: the copied sentences answer the whole question.
    PARTIAL: they answer only part of the question; another part is not in the passages.
    UNDERSPECIFIED: the question is vague and could mean several different things in the passages (for
    example "the fee" when there are tuition, lab and registration fees), so the user must say which one.
    UNANSWERABLE: no passage states what is asked.
    Judge only from the passages, never from outside knowledge.
    Then name what the question asks about, in the question's own words (the thing or person, not the
    quantity: "parking permit", "single room in Birchwood Hall", "prerequisite for CS 201")."""

    conversation_history: str = dspy.InputField(desc="Earlier turns, oldest first; empty for a first question")
    question: str = dspy.InputField(desc="The user's latest question")
    passages: str = dspy.InputField(desc="Retrieved passages as '[id] title: text'")
    answering_sentences: NoteList = dspy.OutputField(desc="Sentences copied from the passages that answer the question, each with its [id]")
    label: AnswerabilityLabel = dspy.OutputField()
    confidence: float = dspy.OutputField(desc="Probability between 0 and 1 that the label is right")
    asked_about: str = dspy.OutputField(desc="What the question asks about, in its own words, a few words")


class PassageAnswers(dspy.Signature):
    """For each passage, write the answer that passage alone gives to the user's question, in a few words (an
    amount, a date, a course code, a name), or "none" if it does not answer it. Give one entry per passage, in
    the passages' order."""

    question: str = dspy.InputField(desc="The user's latest question")
    passages: str = dspy.InputField(desc="Passages as '[id] title: text'")
    passage_answers: PassageAnswerList = dspy.OutputField(desc="One {passage_id, answer} per passage: its answer in a few words, or 'none'")
