"""The query generator <-> notes builder loop: K rounds of search, each steered by the previous round's notes."""

from __future__ import annotations

import dspy

from askfirst.programs.common.conversation import format_passages
from askfirst.programs.common.robust import call_predictor
from askfirst.retrieval.chunking import Passage
from askfirst.retrieval.fusion import reciprocal_rank_fusion
from askfirst.signatures.iterative_notes import BuildNotes, GenerateSearchQueries


def format_notes(notes: dspy.Prediction | None) -> str:
    if notes is None:
        return ""
    parts = []
    for label, key in (("Key findings", "key_findings"), ("Missing information", "missing_info"), ("Search suggestions", "search_suggestions")):
        items = [str(i) for i in (getattr(notes, key, None) or []) if str(i).strip()]
        if items:
            parts.append(f"{label}:\n" + "\n".join(f"- {i}" for i in items))
    return "\n".join(parts)


class IterativeRetrieval(dspy.Module):
    """Run K rounds of query generation and hybrid search; pool every round's hits and fuse them globally.

    Args:
        search: ``search(queries, k) -> list[Passage]`` fusing the queries' BM25 and dense rankings.
        iterations: K; 1 means a single round with no self-correction.
        queries_per_iteration: Queries kept from each round's generator output.
        notes: Whether to build notes between rounds (off: every round sees only the question).
        per_round_k: Passages kept from each round's fused ranking.
        passage_chars: Passage text shown to the notes builder is cut to this length.
        retries: Extra attempts on an unparseable LM reply.
    """

    def __init__(self, search, *, iterations: int = 3, queries_per_iteration: int = 3, notes: bool = True,
                 per_round_k: int = 10, passage_chars: int = 600, retries: int = 2):
        super().__init__()
        self.search = search
        self.iterations = iterations
        self.queries_per_iteration = queries_per_iteration
        self.use_notes = notes
        self.per_round_k = per_round_k
        self.passage_chars = passage_chars
        self.retries = retries
        self.query_generator = dspy.Predict(GenerateSearchQueries)
        self.notes_builder = dspy.Predict(BuildNotes)

    def _queries(self, question: str, history: str, notes_text: str, seen: set[str]) -> list[str]:
        out = call_predictor(self.query_generator, "query_generator", retries=self.retries,
                             conversation_history=history, question=question, notes=notes_text)
        queries = []
        for q in out.queries or []:
            q = str(q).strip()
            if q and q.lower() not in seen and q.lower() not in (x.lower() for x in queries):
                queries.append(q)
        return queries[: self.queries_per_iteration]

    def forward(self, question: str, conversation_history: str = "") -> dspy.Prediction:
        rounds: list[list[str]] = []
        round_queries: list[list[str]] = []
        seen: set[str] = set()
        notes = None
        pooled: dict[str, Passage] = {}
        # The question itself is always searched in round one: it anchors recall when generated queries drift.
        for k in range(self.iterations):
            notes_text = format_notes(notes) if self.use_notes else ""
            queries = self._queries(question, conversation_history, notes_text, seen)
            if k == 0:
                queries = [question] + queries
            if not queries:
                break
            seen.update(q.lower() for q in queries)
            hits = self.search(queries, self.per_round_k)
            rounds.append([p.passage_id for p in hits])
            round_queries.append(queries)
            pooled.update({p.passage_id: p for p in hits})
            if self.use_notes and k < self.iterations - 1:
                notes = call_predictor(self.notes_builder, "notes_builder", retries=self.retries, question=question,
                                       passages=format_passages(hits, max_chars=self.passage_chars), prior_notes=format_notes(notes))
        fused = reciprocal_rank_fusion(rounds)
        return dspy.Prediction(passages=[pooled[pid] for pid, _ in fused], queries=round_queries, notes=format_notes(notes))
