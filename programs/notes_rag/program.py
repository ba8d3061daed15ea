"""The full iterative-notes program: retrieve with notes -> re-rank -> classify -> route -> respond."""

from __future__ import annotations

import dspy

from askfirst.config import ProgramConfig
from askfirst.programs.base import Reply, Resources
from askfirst.programs.common.answerability import AnswerabilityRouter
from askfirst.programs.common.conversation import format_passages, question_and_history, with_history
from askfirst.programs.notes_rag.config import NotesConfig
from askfirst.programs.notes_rag.iterative_retrieval import IterativeRetrieval
from askfirst.programs.common.reranker import ListwiseReranker
from askfirst.programs.common.responders import Responders
from askfirst.programs.common.robust import StepFailed
from askfirst.retrieval.chunking import Passage


class IterativeNotesRAG(dspy.Module):
    """SemEval-2026 Task 8's iterative retrieval with notes, answerability classification and routing.

    Each component follows ``notes``: ``iterations`` (K), ``build``, ``reranker`` and ``router`` can be switched
    without code changes, which is what an ablation grid varies.

    Args:
        resources: The shared :class:`Resources` (or a bare retriever with ``search_many(queries, k) -> list[Hit]``).
        notes: The ``notes`` section of the run configuration (its defaults when ``None``).
        config: The ``program`` section: the limits every program shares (its defaults when ``None``).
        retries: Extra attempts per step when an LM reply cannot be parsed.
    """

    def __init__(self, resources, notes: NotesConfig | None = None, config: ProgramConfig | None = None, *, retries: int = 2):
        super().__init__()
        notes, config = notes or NotesConfig(), config or ProgramConfig()
        self.config = config
        self.resources = Resources.of(resources)
        self.retrieval = IterativeRetrieval(
            self._search, iterations=notes.iterations, queries_per_iteration=notes.queries_per_iteration,
            notes=notes.build, per_round_k=config.rerank_candidates, passage_chars=config.passage_chars, retries=retries,
        )
        self.reranker = ListwiseReranker(passage_chars=max(config.passage_chars // 2, 100), retries=retries) if notes.reranker else None
        self.router = AnswerabilityRouter(unanswerable_route=config.unanswerable_route, answer_threshold=config.answer_threshold,
                                          retries=retries, label_logprobs=config.label_logprobs) if notes.router else None
        self.responders = Responders(retries=retries)

    def _search(self, queries: list[str], k: int) -> list[Passage]:
        return self.resources.search(queries, k)

    def _inputs(self, conversation) -> tuple[str, str, list[str]]:
        """The question (cut to ``max_question_chars``), the formatted history, and warnings about the cut."""
        return question_and_history(conversation, self.config)

    def respond(self, conversation, *, route: str, evidence: list[Passage]) -> dspy.Prediction:
        """The reply the responders give for ``route`` on ``evidence`` (what another routing decision would say)."""
        question, history, _ = self._inputs(conversation)
        return self._respond(route, question, history, evidence, format_passages(evidence, max_chars=self.config.passage_chars))

    def _respond(self, route: str, question: str, history: str, evidence: list[Passage], passages_text: str) -> dspy.Prediction:
        return self.responders(route=route, question=question, conversation_history=history,
                               passages_text=passages_text, passage_ids=[p.passage_id for p in evidence])

    def forward(self, conversation) -> dspy.Prediction:
        question, history, warnings = self._inputs(conversation)
        state: dict = {"queries": [], "notes": "", "evidence": [], "ranking": [], "label": None, "confidence": None, "p_answerable": None,
                       "probability_source": None}
        try:
            return self._answer(question, history, state, warnings)
        except StepFailed as exc:
            # A step that never parsed is a scored failure for this question, not a crash of the run.
            return self._prediction(route="error", answer=f"(failed: {exc})", state=state, warnings=warnings + [str(exc)])

    def _answer(self, question: str, history: str, state: dict, warnings: list[str]) -> dspy.Prediction:
        found = self.retrieval(question=question, conversation_history=history)
        state["queries"], state["notes"] = found.queries, found.notes
        candidates = found.passages[: self.config.rerank_candidates]
        if self.reranker is not None and candidates:
            candidates = self.reranker(question=with_history(question, history), passages=candidates).passages
        evidence = candidates[: self.config.evidence_k]
        shown = {p.passage_id for p in candidates}
        # The whole ranking (re-ranked head, then the fused tail) is what Recall@10 / nDCG@5 are scored on.
        state["evidence"], state["ranking"] = evidence, candidates + [p for p in found.passages if p.passage_id not in shown]
        passages_text = format_passages(evidence, max_chars=self.config.passage_chars)
        if self.router is not None:
            decision = self.router(question=question, conversation_history=history, passages_text=passages_text)
            route, state["label"], state["confidence"] = decision.route, decision.label, decision.confidence
            state["p_answerable"], state["probability_source"] = decision.p_answerable, decision.probability_source
        else:
            route = "answer" if evidence else "idk"
        reply = self._respond(route, question, history, evidence, passages_text)
        return self._prediction(route=route, answer=reply.answer, state=state, warnings=warnings,
                                citations=reply.citations, missing=reply.missing, options=reply.options)

    @staticmethod
    def _prediction(*, route, answer, state, warnings, citations=(), missing="", options=()) -> Reply:
        return Reply(route=route, answer=answer, citations=citations, missing=missing, options=options, evidence=state["evidence"],
                     ranking=state["ranking"], label=state["label"], confidence=state["confidence"], queries=state["queries"],
                     warnings=warnings, notes=state["notes"], p_answerable=state["p_answerable"], probability_source=state["probability_source"])
