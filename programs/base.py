"""The contract every program keeps: the reply it returns, the resources it is built on, and its spec.

A program is a plugin. Its package defines a ``SPEC`` (:class:`ProgramSpec`) that names it, declares its
config section and the LM roles of its steps, and builds it from the run config and a :class:`Resources`
bundle; the registry (``programs/registry.py``) finds it. Every program's ``forward`` returns a
:class:`Reply`, whose :meth:`Reply.to_record` is what ``predictions.jsonl`` holds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import dspy

from askfirst.evaluation.retrieval_metrics import unique_in_order
from askfirst.retrieval.chunking import Passage

if TYPE_CHECKING:
    from pydantic import BaseModel

    from askfirst.config import AskFirstConfig

RANKING_DEPTH = 20  # documents of the full ranking kept per record (Recall@10 needs 10)
CORE_FIELDS = ("route", "answer", "citations", "evidence", "ranking", "label", "confidence", "options", "missing", "queries", "warnings")


def _jsonable(value: Any) -> Any:
    """``value`` as JSON data: passages become their ids, unknown objects their text."""
    if isinstance(value, Passage):
        return value.passage_id
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


class Reply(dspy.Prediction):
    """What every program returns: a ``dspy.Prediction`` with the shared fields, plus program-specific extras.

    Args:
        route: ``answer``, ``partial``, ``clarify``, ``idk`` or ``error``.
        answer: The reply's text.
        citations: Ids of the passages the answer cites (only ones it was shown).
        evidence: The passages the reply was written from.
        ranking: The program's whole ranking (default: the evidence), scored by the ranking metrics.
        label: The answerability label behind the route, when the program has one.
        confidence: A confidence or probability of answerability, when the program has one.
        options: The choices a clarification offers.
        missing: What a partial answer says the documents do not contain.
        queries: The searches the program ran.
        warnings: Things the user should know (a cut question, an agent that failed).
        **extras: Program-specific outputs (CLARION's readings, MAF-RAG's phase, ...); kept in the record under
            ``extras`` and readable as attributes.
    """

    def __init__(self, *, route: str, answer: str, citations=(), evidence=(), ranking=None, label: str | None = None,
                 confidence: float | None = None, options=(), missing: str = "", queries=(), warnings=(), **extras):
        evidence = list(evidence)
        super().__init__(route=route, answer=answer, citations=list(citations), evidence=evidence,
                         ranking=list(ranking) if ranking is not None else evidence, retrieved_ids=[p.passage_id for p in evidence],
                         label=label, confidence=confidence, options=[str(o) for o in options], missing=missing or "",
                         queries=list(queries), warnings=list(warnings), extras=dict(extras), **extras)

    @classmethod
    def failed(cls, error: Exception, **state) -> Reply:
        """The reply of a question whose step failed (a scored failure, not a crash)."""
        warnings = [*state.pop("warnings", []), str(error)]
        return cls(route="error", answer=f"(failed: {error})", warnings=warnings, **state)

    @classmethod
    def of(cls, pred) -> Reply:
        """``pred`` as a Reply (a program outside this package may return a plain ``dspy.Prediction``)."""
        if isinstance(pred, Reply):
            return pred
        data = dict(pred.items())
        core = {k: data.pop(k) for k in CORE_FIELDS if k in data}
        data.pop("retrieved_ids", None)
        extras = data.pop("extras", {}) or {}
        return cls(**{"route": "error", "answer": ""} | core, **(data | extras))

    def to_record(self) -> dict:
        """The JSON-able record of this reply (without the question's id and timing, which the caller adds)."""
        evidence, citations = self.evidence, self.citations
        doc_of = {p.passage_id: p.doc_id for p in evidence}
        first = _first_passages(self.ranking or evidence)  # document -> its best-ranked passage, in rank order
        return {
            "route": self.route, "answer": self.answer, "citations": citations,
            "citations_docs": unique_in_order([doc_of.get(c, c) for c in citations]),
            "retrieved": [p.passage_id for p in evidence], "retrieved_docs": unique_in_order([p.doc_id for p in evidence]),
            "ranked_docs": list(first)[:RANKING_DEPTH],
            "ranked_passages": list(first.values())[:RANKING_DEPTH],  # each ranked document's best-ranked passage
            "label": self.label, "confidence": self.confidence, "options": self.options, "missing": self.missing,
            "queries": self.queries, "warnings": self.warnings, "extras": _jsonable(self.extras),
        }


def _first_passages(passages) -> dict[str, str]:
    """Each document's first passage id in ``passages`` (a ranking)."""
    first: dict[str, str] = {}
    for p in passages:
        first.setdefault(p.doc_id, p.passage_id)
    return first


class Shared:
    """A resource every copy of a program shares: ``copy.deepcopy`` returns the same object.

    DSPy copies a program for every optimiser candidate; a store, retriever or LM must not be copied with it.
    """

    def __deepcopy__(self, memo):
        return self


@dataclass
class Resources(Shared):
    """What a program is built on, opened once per process and shared by every copy of it.

    Attributes:
        retriever: The hybrid retriever over the corpus (``search_many(queries, k) -> list[Hit]``).
        store: The corpus's Qdrant collection (programs with an index of their own open siblings of it).
        embedder: The dense embedder (``embed(texts) -> unit vectors``).
        lms: The LMs built so far, by role (``"lm"``) or by their config (see :meth:`lm_for`).
    """

    retriever: Any
    store: Any = None
    embedder: Any = None
    lms: dict[str, dspy.LM] = field(default_factory=dict)

    def lm_for(self, lm_config, *, seed: int = 0) -> dspy.LM:
        """The LM an ``LMConfig`` describes, built once per distinct config (programs and cells share it)."""
        from askfirst.lm.factory import build_lm

        key = lm_config.model_dump_json()
        if key not in self.lms:
            self.lms[key] = build_lm(lm_config, seed=seed)
        return self.lms[key]

    @classmethod
    def of(cls, resources_or_retriever) -> Resources:
        """``Resources`` as given, or a bare retriever (tests, scripts) wrapped as one."""
        return resources_or_retriever if isinstance(resources_or_retriever, Resources) else cls(retriever=resources_or_retriever)

    def search(self, queries: list[str], k: int) -> list[Passage]:
        """The one search shape programs use: queries in, fused passages out."""
        return [h.passage for h in self.retriever.search_many(list(queries), k)]

    def dense(self, query: str, k: int) -> list[tuple[Passage, float]]:
        """Dense hits with their cosine similarity (the embeddings are normalised), best first."""
        if self.embedder is None or self.store is None or not query.strip():
            return []
        hits = self.store.dense_search(self.embedder.embed([query])[0], k)
        passages = self.store.get_passages([pid for pid, _ in hits])
        return [(passages[pid], float(score)) for pid, score in hits if pid in passages]


@dataclass(frozen=True)
class ProgramSpec:
    """A program as a plugin.

    Attributes:
        name: The ``program.kind`` that selects it.
        build: ``build(config, resources, registry) -> dspy.Module``; ``registry.build(kind, ...)`` builds another
            program over the same resources, which is how a program composes others.
        description: One line for ``askfirst programs`` and error messages.
        section: Its top-level config section (``None``: it reads only the shared ``program`` section).
        config_model: The pydantic model of that section.
        lm_roles: Config LM fields (``retrieval_lm``, ...) mapped to the predictor-name prefixes that run on it
            when it is set; every other predictor runs on ``lm``.
        prepare_index: ``prepare_index(config, store, docs, progress)``: build what the program needs beyond the
            plain index (URASys's units and FAQ collection); returns a report or ``None``.
        index_switch: The ``--set`` under which ``prepare_index`` has something to build, named when it returns ``None``.
    """

    name: str
    build: Callable[..., dspy.Module]
    description: str = ""
    section: str | None = None
    config_model: type[BaseModel] | None = None
    lm_roles: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    prepare_index: Callable[..., Any] | None = None
    index_switch: str = ""

    def config_of(self, config: AskFirstConfig):
        """This program's own config section of ``config``."""
        return getattr(config, self.section) if self.section else config.program



def probe(program, name: str, question: str, history: str, **options) -> dict:
    """A label-free measurement of one question by ``program``'s own stages (the query its retrieval gate measures and
    that gate's cosine, a check's probability, ...), which a compile step fits a setting to without running the program.

    A program offers probes by naming them in ``PROBES`` and answering ``program.probe(name, question, history, **options)``
    with a dict; this is the one way compile steps read a program's signals.

    Raises:
        ValueError: ``program`` offers no probe ``name``.
    """
    offered = getattr(program, "PROBES", ())
    if name not in offered:
        raise ValueError(f"{type(program).__name__} offers no probe {name!r}"
                         + (f" (it offers: {', '.join(offered)})" if offered else " (it offers none)"))
    return program.probe(name, question, history, **options)
