"""The retrieval loop's two steps: the Iterative Query Generator and the Notes Builder (SemEval-2026 Task 8, NLP-CEIA-UFG)."""

import dspy

from askfirst.signatures.bounds import NoteList, QueryList


class GenerateSearchQueries(dspy.Signature):
    """You plan searches for a hybrid retrieval system (BM25 + dense) over a document collection.
    Write new search queries that together find every passage needed to answer the user's latest question.
    Resolve pronouns and ellipsis from the conversation history so that each query stands on its own.
    Use the notes from the previous round: follow the search suggestions, target each piece of missing
    information, and never spend a query on a fact already listed in the key findings.
    Make the queries differ from each other: each one targets a different facet, and each names the exact
    entities (codes, product names, places) that a keyword search needs."""

    conversation_history: str = dspy.InputField(desc="Earlier turns, oldest first; empty for a first question")
    question: str = dspy.InputField(desc="The user's latest question")
    notes: str = dspy.InputField(desc="Notes from the previous search round; empty in the first round")
    queries: QueryList = dspy.OutputField(desc="Distinct, self-contained search queries of 5-15 words")


class BuildNotes(dspy.Signature):
    """Analyse the retrieved passages and build notes that guide the next retrieval round.
    Be specific and actionable: state what relevant facts were found (with their passage ids), what
    information is still missing to answer the question fully, and which searches would find it."""

    question: str = dspy.InputField(desc="The user's question, with the conversation context it needs")
    passages: str = dspy.InputField(desc="Retrieved passages as '[id] title: text'")
    prior_notes: str = dspy.InputField(desc="Notes from earlier rounds; empty in the first round")
    key_findings: NoteList = dspy.OutputField(desc="Facts found that bear on the question, each ending with its [passage id]")
    missing_info: NoteList = dspy.OutputField(desc="Information still needed; empty if nothing is missing")
    search_suggestions: NoteList = dspy.OutputField(desc="Concrete queries for the next round")
