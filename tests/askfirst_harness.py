"""The askfirst program on a scripted LM: the script, the scripted dense index and a one-call runner that the askfirst
program's tests share."""

import dspy
import numpy as np

from askfirst.config import load_config
from askfirst.programs.base import Resources
from askfirst.programs.registry import Registry
from askfirst.retrieval.chunking import Passage
from tests.conftest import PASSAGES, LabelScoringEngine, ListRetriever

FEE_ANSWERS = {"fees-lab": "EUR 85", "fees-registration": "EUR 60"}


def assessment(label: str = "ANSWERABLE", asked_about: str = "fee"):
    """The evidence assessment's reply."""
    return {"answering_sentences": [], "label": label, "confidence": 0.9, "asked_about": asked_about}


def passage_answers(text: str) -> dict:
    """Each fee passage the call was shown answers with its own amount."""
    return {"passage_answers": [{"passage_id": pid, "answer": a} for pid, a in FEE_ANSWERS.items() if f"[{pid}]" in text]}


ANSWERABLE, UNANSWERABLE = assessment("ANSWERABLE"), assessment("UNANSWERABLE")
FEES_FOLLOW_UP = [{"role": "user", "content": "Which fees are there?"}, {"role": "assistant", "content": "Lab and registration."},
                  {"role": "user", "content": "And the lab fee?"}]


def scripted(**overrides):
    base = {
        "standalone_question": {"standalone_question": "How much is the laboratory fee?"},
        "complexity": {"complexity": "simple", "reason": "one fact"},
        "queries": {"queries": ["lab fee"]},
        "is_ambiguous": {"is_ambiguous": False, "ambiguity_type": "none", "ambiguous_aspects": [], "clarification_needed": ""},
        "cited_ids": {"answer": "The lab fee is EUR 85.", "cited_ids": ["fees-lab"]},
        "asked_about": ANSWERABLE,
        "passage_answers": passage_answers,
        "expansions": {"expansions": ["laboratory charge"]},
        "clarifying_question": {"clarifying_question": "Which fee do you mean?", "options": ["lab", "registration"]},
    }
    return base | overrides


class QueryCosines:
    """A dense index whose top cosine for a query is scripted (the retrieval gate's signal), and an embedder whose
    vectors are scripted topics: each text is the unit vector of its topic in ``topics`` (0 unless named), so two
    texts have cosine 1 on one topic and 0 on two (the topic-switch check's signal). The store looks the score up for
    the text embedded last, which is the query ``Resources.dense`` searches with. Its collection's probe cosines
    (the scale of ``top_cosine_percentile``) are ``reference``: each sampled passage's probe finds the passage itself,
    then another document's at its reference cosine."""

    revision = "fixed"

    def __init__(self, cosines: dict[str, float], topics: dict[str, int] | None = None, reference=(0.5, 0.7, 0.8, 0.95)):
        self.cosines, self.topics, self.embedded = cosines, topics or {}, []
        self.samples = [(f"sample{i}", np.full(4, cosine)) for i, cosine in enumerate(reference)]
        self.probes = {f"Reference probe {i}.": vector for i, (_, vector) in enumerate(self.samples)}
        self.reference_passages = [Passage(pid, pid, "", text) for (pid, _), text in zip(self.samples, self.probes)]
        self.reference_passages.append(Passage("neighbour", "neighbour", "", "A neighbour."))

    def embed(self, texts):
        self.embedded = list(texts)
        return np.stack([self.probes[text] if text in self.probes else np.eye(4)[self.topics.get(text, 0)] for text in texts])

    def vector_sample(self, n):
        return self.samples[:n]

    def dense_search(self, query_vector, k):
        for passage_id, vector in self.samples:
            if np.array_equal(query_vector, vector):  # a reference passage's probe
                return [(passage_id, 1.0), ("neighbour", float(vector[0]))][:k]
        return [(PASSAGES[0].passage_id, self.cosines.get(self.embedded[-1], 0.9))][:k]

    def get_passages(self, ids):
        return {p.passage_id: p for p in PASSAGES + self.reference_passages if p.passage_id in ids}


def scoring_lm(logprobs: dict[str, float]):
    """A ``schema_lm`` whose engine reports ``logprobs`` for the label fields, as llama.cpp does: for :func:`run`."""
    return lambda script: dspy.LM("test/scoring", engine=LabelScoringEngine(script, logprobs=logprobs), cache=False)


def run(schema_lm, question, *overrides, script=None, retriever=None, cosines=None, topics=None, rewrite_demos=()):
    retriever = retriever or ListRetriever()
    config = load_config(overrides=["program.kind=askfirst", "notes.reranker=false", "notes.iterations=1", *overrides])
    dense = QueryCosines(cosines or {}, topics)
    program = Registry(Resources(retriever=retriever, store=dense, embedder=dense)).build("askfirst", config)
    if rewrite_demos:
        program.rewrite.demos = list(rewrite_demos)
    lm = schema_lm(script or scripted())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        return program(conversation=question), program, retriever, lm


def referent(label: str, unnamed: str = "fee") -> dict:
    """The unnamed-referent check's reply."""
    return {"unnamed": unnamed if label == "UNDERSPECIFIED" else "none", "label": label}
