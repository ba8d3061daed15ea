"""MAF-RAG (multi-agent, escalating retrieval): query expansion, the debate's agents and its aggregator."""

import dspy

from askfirst.signatures.bounds import QueryList


class ExpandQuery(dspy.Signature):
    """Expand the search query for a document search: give the domain terms, full forms of abbreviations and
    synonyms that documents answering it would likely use. Do not repeat the query's own words."""

    query: str = dspy.InputField()
    expansions: QueryList = dspy.OutputField(desc="Extra search terms or short phrases")


class DebateAgentAnswer(dspy.Signature):
    """You are one of several agents, each reading a different passage. Summarise what your passage says about
    the question and answer it from your passage alone. When the group's current answer is given, check it
    against your passage and revise your own answer if your passage supports doing so. If your passage does
    not answer the question, say "unknown"."""

    question: str = dspy.InputField()
    passage: str = dspy.InputField(desc="Your passage as '[id] title: text'")
    group_answer: str = dspy.InputField(desc="The aggregated answer of the previous round; empty in the first round")
    answer: str = dspy.OutputField(desc="Your answer in one or two sentences, or 'unknown'")


class AggregateDebate(dspy.Signature):
    """Synthesise the agents' answers into one answer to the question, keeping what the passages support and
    resolving disagreements by the evidence. Say whether the agents converge on it. If none of the agents
    could answer, the answer is "unknown"."""

    question: str = dspy.InputField()
    agent_answers: str = dspy.InputField(desc="Each agent's answer with the id of its passage")
    answer: str = dspy.OutputField(desc="The synthesised answer citing passage ids in brackets, or 'unknown'")
    is_unknown: bool = dspy.OutputField(desc="True when the passages do not answer the question")
    converged: bool = dspy.OutputField(desc="Whether the agents agree on this answer")
    confidence: float = dspy.OutputField(desc="How well the passages support the answer, from 0.0 to 1.0")
