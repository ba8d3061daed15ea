"""Shared fixtures: a small in-memory retriever for program tests, a real index for retrieval tests, and the test LM
engines (a schema-following one and one that also reports label log-probabilities, as llama.cpp does)."""

from __future__ import annotations

import math

import dspy
import pytest

from askfirst.config import load_config
from askfirst.retrieval.bm25 import BM25Index
from askfirst.retrieval.chunking import Passage
from askfirst.retrieval.hybrid import Hit

PASSAGES = [
    Passage("fees-lab", "fees-lab", "Laboratory fee", "A laboratory fee of EUR 85 is charged for each laboratory course."),
    Passage("fees-registration", "fees-registration", "Registration fee", "Every student pays a registration fee of EUR 60 each semester."),
    Passage("course-cs201", "course-cs201", "CS 201", "The prerequisite for CS 201 is CS 101 with a grade of C or better."),
]


class ListRetriever:
    """Returns fixed passages for every query and records the queries it was given."""

    def __init__(self, passages=PASSAGES):
        self.passages = list(passages)
        self.calls: list[list[str]] = []

    def search_many(self, queries, k):
        self.calls.append(list(queries))
        return [Hit(p, 1.0 / (i + 1)) for i, p in enumerate(self.passages[:k])]


class LexicalRetriever(ListRetriever):
    """The fixed passages, plus a real BM25 index over a collection (by default the passages themselves), which the
    askfirst program's collection checks ask."""

    def __init__(self, passages=PASSAGES, *, collection=None):
        super().__init__(passages)
        collection = list(passages) if collection is None else collection
        self.lexical = BM25Index([p.passage_id for p in collection], [f"{p.title} {p.text}" for p in collection])


@pytest.fixture
def retriever():
    return ListRetriever()


@pytest.fixture
def empty_retriever():
    return ListRetriever([])


@pytest.fixture
def use_dummy_lm():
    """``use_dummy_lm(answers)`` configures DSPy with a DummyLM on the JSON adapter for the test's duration."""
    contexts = []

    def _use(answers):
        lm = dspy.utils.DummyLM(answers, adapter=dspy.JSONAdapter())
        ctx = dspy.context(lm=lm, adapter=dspy.JSONAdapter())
        ctx.__enter__()
        contexts.append(ctx)
        return lm

    yield _use
    for ctx in reversed(contexts):
        ctx.__exit__(None, None, None)


@pytest.fixture(scope="session")
def demo_index(tmp_path_factory):
    """The demo corpus indexed once per test session into a temporary Qdrant folder (real embedder, real Qdrant)."""
    from askfirst.retrieval.factory import index_corpus, open_retriever, open_store

    runs = tmp_path_factory.mktemp("runs")
    config = load_config(overrides=[f"runs_dir={runs}"])
    store = open_store(config)
    report = index_corpus(config, store)
    retriever = open_retriever(config, store)
    yield config, store, retriever, report
    store.close()


LABEL_LOGPROBS = {"ANSWERABLE": math.log(0.6), "PARTIAL": math.log(0.1), "UNDERSPECIFIED": math.log(0.1), "UNANSWERABLE": math.log(0.2)}


class SchemaFollowingEngine:
    """A test LM engine that answers any Signature: scripted replies chosen by output field, else placeholders.

    A scripted reply is a dict, or a callable that gets the user message's text and returns one.

    It reads the output field names and types from DSPy's system prompt, so every module, optimiser
    proposer and judge gets a well-formed JSON reply without a real model. Calls with no output fields
    (GEPA's reflection prompt) get a fenced new instruction.
    """

    supports_response_schema = False
    supported_params = frozenset({"temperature", "max_tokens", "response_format"})

    def __init__(self, scripted: dict[str, dict] | None = None):
        self.scripted = scripted or {}
        self.calls = 0

    def complete(self, request):
        from dspy.lm15 import Message, Response, TextPart, Usage

        from askfirst.lm.schema_reply import output_fields, schema_reply

        self.calls += 1
        system = request.system if isinstance(request.system, str) else "".join(p.text for p in request.system or [])
        names = [n for n, _ in output_fields(system)]
        reply = next((r for key, r in self.scripted.items() if key in names), {})
        if callable(reply):  # a reply that depends on the request: called with the user message's text
            reply = reply(request.messages[-1].text or "")
        text = schema_reply(system, reply)
        return Response(id=None, model="schema-following", message=Message.assistant([TextPart(text)]), finish_reason="stop",
                        usage=Usage(input_tokens=0, output_tokens=0, total_tokens=0))

    def stream(self, request):
        from dspy.lm15 import response_to_events

        return response_to_events(self.complete(request))

    def close(self):
        pass


class LabelScoringEngine(SchemaFollowingEngine):
    """The test engine, declaring that it scores label fields and reporting them as the llama.cpp engine does."""

    scores_labels = True
    supported_params = frozenset({"temperature", "max_tokens", "response_format", "logprobs", "top_logprobs"})

    def __init__(self, scripted=None, *, logprobs: dict[str, float] = LABEL_LOGPROBS):
        super().__init__(scripted)
        self.logprobs = logprobs

    def complete(self, request):
        from dspy._vendor.lm15.types import TokenLogprob, TopLogprob

        response = super().complete(request)
        self.asked_for_logprobs = request.config.logprobs is not None
        if not self.asked_for_logprobs:
            return response
        top = tuple(TopLogprob(token=k, logprob=v) for k, v in self.logprobs.items())
        first = next(iter(self.logprobs))
        entry = TokenLogprob(token=first, logprob=self.logprobs[first], top=top)
        return response.__class__(id=response.id, model=response.model, message=response.message, finish_reason=response.finish_reason,
                                  usage=response.usage, logprobs=(entry,))


@pytest.fixture
def schema_lm():
    """``schema_lm(scripted)`` -> a ``dspy.LM`` over ``SchemaFollowingEngine`` (cache off)."""
    def _make(scripted=None):
        return dspy.LM("test/schema-following", engine=SchemaFollowingEngine(scripted), cache=False)

    return _make


@pytest.fixture(autouse=True)
def _own_checkpoint_key(monkeypatch, tmp_path_factory):
    """Checkpoint signing keys live in a folder of the test session, never in the user's home."""
    monkeypatch.setenv("ASKFIRST_CONFIG_DIR", str(tmp_path_factory.getbasetemp() / "askfirst-config"))


@pytest.fixture(autouse=True)
def _no_inherited_tracking_uri(monkeypatch):
    """``mlflow.set_tracking_uri`` also exports MLFLOW_TRACKING_URI (for child processes), which askfirst
    honours; without this, one test's store would become the next test's."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)


def configure_with(monkeypatch, engine, *, where: str) -> None:
    """Make ``configure_dspy`` (as imported at ``where``) configure DSPy with ``engine`` instead of a real model."""
    def configure(config):
        lm = dspy.LM("test/schema-following", engine=engine, cache=False)
        dspy.configure(lm=lm, adapter=dspy.JSONAdapter())
        return lm

    monkeypatch.setattr(where, configure)
