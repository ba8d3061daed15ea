"""URASys retrieval agents and the Manager's steps (Algorithm 1 of the paper)."""

from typing import Literal

import dspy

from askfirst.signatures.bounds import OptionList, QueryList

QuestionKind = Literal["specific", "broad", "vague"]
EvidenceState = Literal["direct_answer", "partial_answer", "several_categories", "insufficient"]


class DecomposeQuestion(dspy.Signature):
    """Split the user's question into the separate, self-contained search queries needed to answer it: one
    query per distinct piece of information asked for. A question that asks for one thing stays one query.
    Resolve references to earlier turns so that each query makes sense on its own."""

    conversation_history: str = dspy.InputField(desc="Earlier turns, oldest first; empty for a first question")
    question: str = dspy.InputField()
    sub_queries: QueryList = dspy.OutputField()


class SearchFAQs(dspy.Signature):
    """You look up a question in an FAQ collection. First write down what the FAQ entries found say about
    the query, citing their [ids]. Then judge whether an entry answers the query directly and adequately:
    an entry that asks the same thing in other words does. If none does, write one different query to try
    next (synonyms, rephrasing, adding or removing context). Never answer from your own knowledge."""

    query: str = dspy.InputField()
    faq_entries: str = dspy.InputField(desc="Entries found, as '[id] Q: question A: answer'")
    findings: str = dspy.OutputField(desc="The answer taken from the entries with [ids], or what is missing")
    adequate: bool = dspy.OutputField(desc="True if an entry asks the same thing as the query in other words and so answers it")
    next_query: str = dspy.OutputField(desc="A different query to try when not adequate; empty otherwise")


class SearchDocuments(dspy.Signature):
    """You search official documents for a query, step by step. Analyse what the query needs, then judge
    whether the passages found provide it directly and adequately. If they do, report the relevant facts
    using only the passages, citing their [ids]. If they do not, refine the search expression: keep what
    worked in earlier attempts, change what did not (other terms, narrower or broader scope). Never answer
    from your own knowledge."""

    query: str = dspy.InputField(desc="What the user needs")
    earlier_attempts: str = dspy.InputField(desc="Search expressions already tried and what they found; empty at first")
    search_expression: str = dspy.InputField(desc="The expression these passages were found with")
    passages: str = dspy.InputField(desc="Passages found, as '[id] title: text'")
    analysis: str = dspy.OutputField(desc="What the query needs and what the passages give")
    findings: str = dspy.OutputField(desc="The relevant facts from the passages with [ids], or what is missing")
    adequate: bool = dspy.OutputField(desc="True only if the passages directly provide what the query needs")
    next_search_expression: str = dspy.OutputField(desc="A refined expression to try when not adequate; empty otherwise")


class JudgeEvidence(dspy.Signature):
    """Decide whether the evidence is just enough to answer. Judge the question:
    specific: it asks for one clear thing; broad: it could be about several different things (for example
    "the fare" when the evidence shows single, day-pass and monthly fares); vague: it is unclear what is asked.
    Judge the evidence: direct_answer: it states the answer to the question; partial_answer: it answers only
    part; several_categories: it shows several different things the question could be about;
    insufficient: it does not answer. When the question is broad, list the categories the evidence reveals.
    When the evidence is insufficient, rewrite the question so that a new search can find the answer.
    Judge only from the evidence, never from your own knowledge."""

    conversation_history: str = dspy.InputField(desc="Earlier turns, oldest first; empty for a first question")
    question: str = dspy.InputField()
    evidence: str = dspy.InputField(desc="What the FAQ and document agents found for each sub-query, with [ids]")
    question_kind: QuestionKind = dspy.OutputField()
    evidence_state: EvidenceState = dspy.OutputField()
    categories: OptionList = dspy.OutputField(desc="For a broad question: the distinct things the evidence reveals")
    refined_question: str = dspy.OutputField(desc="For insufficient evidence: a clearer question to search again")
