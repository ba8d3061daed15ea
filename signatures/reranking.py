"""Listwise re-ranking by the LM (stands in for the seed's jina-reranker-v3 cross-encoder)."""

import dspy

from askfirst.signatures.bounds import IdList


class RerankPassages(dspy.Signature):
    """Rank the candidate passages by how useful each is for answering the user's question.
    Put first the passages that directly state the facts the answer needs; leave out passages that are
    off-topic. Return passage ids exactly as written in the candidates."""

    question: str = dspy.InputField(desc="The user's question, with the conversation context it needs")
    passages: str = dspy.InputField(desc="Candidate passages as '[id] title: text'")
    ranked_ids: IdList = dspy.OutputField(desc="Passage ids, most useful first")
