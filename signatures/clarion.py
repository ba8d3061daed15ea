"""CLARION (ambiguity planning, then per-interpretation acting) as Signatures; prompts after the paper's Figures 15-17."""

from typing import Literal

import dspy

from askfirst.signatures.bounds import NoteList, OptionList

AmbiguityType = Literal["syntactic", "constraint", "semantic", "none"]


class AnalyzeAmbiguity(dspy.Signature):
    """You are an expert at analyzing query ambiguity. Decide whether the query is ambiguous and classify it.
    syntactic: several plausible grammatical parses (attachment, scope, coordination, pronoun reference).
    constraint: an over-specific query where a broader, closely related formulation better matches the need.
    semantic: the syntax is clear but the meaning admits several valid interpretations (one name, several
    entities; "the fare" when there are several fares).
    none: one clear reading."""

    query: str = dspy.InputField()
    passages: str = dspy.InputField(desc="What the document collection holds on the query, as '[id] title: text'; may be empty")
    is_ambiguous: bool = dspy.OutputField()
    ambiguity_type: AmbiguityType = dspy.OutputField()
    ambiguous_aspects: NoteList = dspy.OutputField(desc="What makes it ambiguous")
    clarification_needed: str = dspy.OutputField(desc="What extra information would clarify it")


class ClarifyQuery(dspy.Signature):
    """You are an expert at clarifying ambiguous queries. Rewrite the query into at least two specific,
    faithful clarified versions, each resolving the ambiguity one way while keeping the information need.
    For a semantic ambiguity name the distinct entity or sense in each version; for a syntactic one fix one
    parse per version; for a constraint ambiguity relax the over-specific modifier in one version."""

    query: str = dspy.InputField()
    analysis: str = dspy.InputField(desc="The ambiguity analysis: type, aspects, what would clarify it")
    passages: str = dspy.InputField(desc="What the document collection holds on the query; base the versions on the distinct things it shows")
    clarified_queries: OptionList = dspy.OutputField(desc="Two or more clarified queries")


class ActStep(dspy.Signature):
    """You are a research assistant following ReAct over a set of interpretations of the user's query.
    Choose the next action: SEARCH with a very specific query for one interpretation that still lacks
    evidence; PLAN to add a missing interpretation that the evidence reveals; ANSWER when every
    interpretation has evidence or cannot get more. Never repeat a search query already in the context."""

    query: str = dspy.InputField()
    interpretations: str = dspy.InputField(desc="Numbered interpretations with the evidence found for each")
    context: str = dspy.InputField(desc="Previous actions and observations")
    searches_left: int = dspy.InputField()
    action: Literal["SEARCH", "PLAN", "ANSWER"] = dspy.OutputField()
    interpretation_number: int = dspy.OutputField(desc="Which interpretation a SEARCH is for (1-based)")
    argument: str = dspy.OutputField(desc="The search query (SEARCH), the new interpretation (PLAN), or empty (ANSWER)")


class WriteLongAnswer(dspy.Signature):
    """Write a long-form answer that covers every interpretation the evidence supports: for each, a short
    answer taken from its evidence. Say plainly which interpretations the evidence does not resolve."""

    query: str = dspy.InputField()
    interpretations: str = dspy.InputField(desc="Numbered interpretations, each with its evidence passages")
    short_answers: OptionList = dspy.OutputField(desc="One short answer per interpretation, in order ('unresolved' if none)")
    long_answer: str = dspy.OutputField()


class ExtractShortAnswer(dspy.Signature):
    """Extract from the long answer the short answer (a few words, copied) to the question."""

    question: str = dspy.InputField()
    long_answer: str = dspy.InputField()
    short_answer: str = dspy.OutputField()
