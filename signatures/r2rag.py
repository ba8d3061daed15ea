"""R2RAG (RMIT-ADM+S at MMU-RAG): the complexity router, query variants, pointwise re-ranking, the reviewer, the answer."""

from typing import Literal

import dspy

from askfirst.signatures.bounds import IdList, OneQuery, QueryList


class RouteComplexity(dspy.Signature):
    """Decide whether the user's question is simple or complex.
    Simple: one search of the documents would find the answer.
    Complex: the question is ambiguous, has several parts or two or more sub-questions, or needs several steps
    of reasoning or searching to answer."""

    conversation_history: str = dspy.InputField(desc="Earlier turns, oldest first; empty for a first question")
    question: str = dspy.InputField(desc="The user's latest question")
    complexity: Literal["simple", "complex"] = dspy.OutputField()
    reason: str = dspy.OutputField(desc="One short sentence on why")


class QueryVariants(dspy.Signature):
    """Write search queries that together find the documents answering the query. Vary them: rephrase it,
    expand it with related terms, relax overly specific constraints, split it into its parts, use synonyms."""

    query: str = dspy.InputField(desc="What to search for, with the conversation context it needs")
    variants: QueryList = dspy.OutputField(desc="Distinct search queries, each a few keywords or a short question")


class JudgeRelevance(dspy.Signature):
    """Judge whether the passage is relevant to the query: does it contain information that helps answer it?"""

    query: str = dspy.InputField()
    passage: str = dspy.InputField(desc="One passage as '[id] title: text'")
    relevant: bool = dspy.OutputField()
    confidence: float = dspy.OutputField(desc="How sure you are of that judgement, from 0.0 to 1.0")


class ReviewEvidence(dspy.Signature):
    """You gather evidence to answer the user's question. Review the newly retrieved passages: name the ones
    that are useful (one of each set of near-duplicates) and summarise what they add. Then decide whether
    the useful evidence so far is sufficient to answer the whole question. If it is not, write one new search
    query for what is still missing; never repeat a query already used."""

    question: str = dspy.InputField(desc="The user's question, with the conversation context it needs")
    current_query: str = dspy.InputField(desc="The sub-query these passages were retrieved for")
    used_queries: str = dspy.InputField(desc="Queries already searched, one per line")
    evidence_so_far: str = dspy.InputField(desc="Summaries of the useful passages found in earlier iterations")
    passages: str = dspy.InputField(desc="Newly retrieved passages as '[id] title: text', most relevant first")
    useful_ids: IdList = dspy.OutputField(desc="Ids of the new passages that help answer the question")
    summary: str = dspy.OutputField(desc="What the useful new passages say that bears on the question")
    is_sufficient: bool = dspy.OutputField(desc="Whether all the useful evidence so far answers the whole question")
    new_query: OneQuery = dspy.OutputField(desc="When not sufficient: one new search query for what is missing; else an empty list")


class AnswerWithCitations(dspy.Signature):
    """Answer the user's question using ONLY the search results. Fit the form of the answer to the question,
    and put the id of the supporting result in square brackets after every sentence, like [doc-1]. If the
    results do not contain enough information to answer, say so instead of guessing."""

    conversation_history: str = dspy.InputField(desc="Earlier turns, oldest first; empty for a first question")
    question: str = dspy.InputField(desc="The user's latest question")
    passages: str = dspy.InputField(desc="Search results as '[id] title: text'")
    answer: str = dspy.OutputField(desc="The answer with a [id] citation after every sentence, or a statement that there is not enough information")
    cited_ids: IdList = dspy.OutputField(desc="Ids of the results the answer cites")
    enough_information: bool = dspy.OutputField(desc="Whether the answer is supported by the results (false when it says there is not enough information)")
