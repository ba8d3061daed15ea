"""R2RAG: route a question by complexity to vanilla RAG (one search round) or a vanilla agent (iterate and review)."""

from __future__ import annotations

import dspy

from askfirst.config import ProgramConfig
from askfirst.programs.base import Reply, Resources
from askfirst.programs.common.conversation import format_passages, question_and_history, with_history
from askfirst.programs.common.responders import clean_citations
from askfirst.programs.common.robust import StepFailed, call_predictor
from askfirst.programs.common.routes import IDK_MESSAGE
from askfirst.programs.r2rag.config import R2ragConfig
from askfirst.programs.r2rag.steps import PointwiseReranker, Variants, estimate_tokens, fill_budget
from askfirst.retrieval.chunking import Passage
from askfirst.signatures.r2rag import AnswerWithCitations, ReviewEvidence, RouteComplexity


class R2RAGProgram(dspy.Module):
    """R2RAG (RMIT-ADM+S at MMU-RAG, NeurIPS 2025), on a document collection instead of the web.

    - Router: simple (one search finds the answer) or complex (ambiguous, several parts, several steps).
    - Vanilla RAG: the question and its variants searched, de-duplicated, re-ranked pointwise against the
      question, evidence filled in rank order up to ``evidence_tokens``, an answer citing after every sentence
      or "not enough information" (the ``idk`` route).
    - Vanilla agent: per iteration, variants of the current sub-query are searched and re-ranked against it; a
      reviewer names the useful passages, summarises them and says whether the evidence suffices, else gives a
      new query. It stops on sufficiency, on ``max_iterations``, or when the useful passages reach
      ``agent_evidence_tokens``; as in the authors' code a "not sufficient" without a new query counts as
      sufficient, and a new query already used is refused (and ends the loop). The answer is written over the
      useful passages.

    Extras in the reply: ``stage`` (``simple`` / ``complex``), ``router_reason``, ``iterations``, ``stop``,
    ``relevance`` (each judged passage's P(relevant)).
    """

    def __init__(self, resources, config: R2ragConfig, program: ProgramConfig, *, retries: int = 2):
        super().__init__()
        self.resources = Resources.of(resources)
        self.config, self.program_config, self.retries = config, program, retries
        self.router = dspy.Predict(RouteComplexity) if config.router == "lm" else None
        self.variants = Variants(retries=retries)
        self.rerank = PointwiseReranker(passage_chars=program.passage_chars, retries=retries)
        self.review = dspy.Predict(ReviewEvidence)
        self.answer = dspy.Predict(AnswerWithCitations)

    def forward(self, conversation) -> Reply:
        question, history, warnings = question_and_history(conversation, self.program_config)
        state: dict = {"queries": [], "evidence": [], "ranking": [], "relevance": {}, "warnings": warnings}
        try:
            stage, reason = self._route(question, history)
            state |= {"stage": stage, "router_reason": reason}
            if stage == "simple":
                self._vanilla_rag(with_history(question, history), state)
            else:
                self._vanilla_agent(with_history(question, history), state)
            return self._answer(question, history, state)
        except StepFailed as exc:
            return Reply.failed(exc, **self._shared(state), **self._extras(state))

    def _route(self, question: str, history: str) -> tuple[str, str]:
        if self.router is None:
            return self.config.router, f"forced by r2rag.router={self.config.router}"
        out = call_predictor(self.router, "r2rag_router", retries=self.retries, conversation_history=history, question=question)
        return out.complexity, out.reason

    def _retrieve(self, query: str, state: dict, *, exclude: set[str] = frozenset()) -> list[Passage]:
        """Search the query and its variants, de-duplicate, and re-rank the new passages against ``query``."""
        used = {q.lower() for q in state["queries"]}
        queries = self.variants(query, n=self.config.variants, used=used)
        state["queries"] += queries
        found = self.resources.search(queries, self.config.per_query_k * max(len(queries), 1)) if queries else []
        fresh = [p for p in found if p.passage_id not in exclude]
        ranked, scores, warnings = self.rerank(query, fresh, max_candidates=self.config.rerank_candidates)
        state["relevance"] |= scores
        state["warnings"] += warnings
        return ranked

    def _vanilla_rag(self, query: str, state: dict) -> None:
        ranked = self._retrieve(query, state)
        state["ranking"] = ranked
        state["evidence"] = fill_budget(ranked, self.config.evidence_tokens, passage_chars=self.program_config.passage_chars)
        state["iterations"], state["stop"] = 1, "one round"

    def _vanilla_agent(self, question: str, state: dict) -> None:
        useful: dict[str, Passage] = {}
        summaries, seen, query = [], set(), question
        chars = self.program_config.passage_chars
        for iteration in range(1, self.config.max_iterations + 1):
            state["iterations"] = iteration
            ranked = self._retrieve(query, state, exclude=seen)
            state["ranking"] += ranked
            shown = ranked[: self.config.review_passages]
            seen |= {p.passage_id for p in shown}
            if not shown:
                state["stop"] = "nothing new retrieved"
                break
            review = call_predictor(self.review, "r2rag_review", retries=self.retries, question=question, current_query=query,
                                    used_queries="\n".join(state["queries"]), evidence_so_far="\n".join(summaries) or "(none yet)",
                                    passages=format_passages(shown, max_chars=chars))
            by_id = {p.passage_id: p for p in shown}
            useful |= {pid: by_id[pid] for pid in clean_citations(review.useful_ids, list(by_id))}
            if review.summary.strip():
                summaries.append(review.summary.strip())
            state["evidence"] = list(useful.values())
            new_query = next((q.strip() for q in review.new_query or [] if q.strip()), "")
            if review.is_sufficient or not new_query:
                state["stop"] = "sufficient" if review.is_sufficient else "not sufficient, but no new query"
                break
            if estimate_tokens(format_passages(state["evidence"], max_chars=chars)) >= self.config.agent_evidence_tokens:
                state["stop"] = "evidence budget reached"
                break
            if new_query.lower() in {q.lower() for q in state["queries"]}:
                state["stop"] = f"repeated query refused: {new_query!r}"
                break
            query = new_query
        else:
            state["stop"] = "iteration cap"

    def _answer(self, question: str, history: str, state: dict) -> Reply:
        evidence = state["evidence"]
        if not evidence:
            return Reply(route="idk", answer=IDK_MESSAGE, **self._shared(state), **self._extras(state))
        out = call_predictor(self.answer, "r2rag_answer", retries=self.retries, conversation_history=history, question=question,
                             passages=format_passages(evidence, max_chars=self.program_config.passage_chars))
        if not out.enough_information or not out.answer.strip():
            return Reply(route="idk", answer=IDK_MESSAGE, **self._shared(state), **self._extras(state))
        citations = clean_citations(out.cited_ids, [p.passage_id for p in evidence])
        return Reply(route="answer", answer=out.answer, citations=citations, **self._shared(state), **self._extras(state))

    @staticmethod
    def _shared(state: dict) -> dict:
        ranking = list({p.passage_id: p for p in state["evidence"] + state["ranking"]}.values())
        return {"evidence": state["evidence"], "ranking": ranking, "queries": state["queries"], "warnings": state["warnings"]}

    @staticmethod
    def _extras(state: dict) -> dict:
        return {k: state.get(k) for k in ("stage", "router_reason", "iterations", "stop")} | {"relevance": state["relevance"]}
