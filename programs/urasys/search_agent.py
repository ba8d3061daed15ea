"""URASys retrieval sub-agents: search, judge adequacy, reformulate or stop; answer only from what was found."""

from __future__ import annotations

from dataclasses import dataclass, field

import dspy

from askfirst.programs.common.conversation import format_passages
from askfirst.programs.common.robust import StepFailed, call_predictor
from askfirst.retrieval.chunking import Passage
from askfirst.signatures.urasys_agents import SearchDocuments, SearchFAQs

NOT_FOUND = "No relevant information was found."


@dataclass
class AgentReport:
    """What one agent found for one sub-query: its grounded findings and the passages they come from."""

    source: str  # "faq" or "document"
    query: str
    adequate: bool
    findings: str
    passages: list[Passage] = field(default_factory=list)
    searches: list[str] = field(default_factory=list)
    warning: str = ""


def failed_report(source: str, query: str, error: StepFailed) -> AgentReport:
    """An agent whose step never parsed found nothing; the manager goes on with the other agents' evidence."""
    return AgentReport(source, query, False, NOT_FOUND, warning=str(error))


class _SearchAgent(dspy.Module):
    source = ""

    def forward(self, query: str) -> AgentReport:
        try:
            return self._search_loop(query)
        except StepFailed as exc:
            return failed_report(self.source, query, exc)

    def _search_loop(self, query: str) -> AgentReport:
        raise NotImplementedError


class FAQSearchAgent(_SearchAgent):
    """High-precision lookup in the FAQ collection with at most ``max_attempts`` searches (a few reformulations).

    Args:
        search: ``search(query, k) -> list[Passage]`` over the FAQ collection.
    """

    source = "faq"

    def __init__(self, search, *, k: int = 5, max_attempts: int = 2, passage_chars: int = 400, retries: int = 2):
        super().__init__()
        self._search, self.k, self.max_attempts, self.passage_chars, self.retries = search, k, max_attempts, passage_chars, retries
        self.judge = dspy.Predict(SearchFAQs)

    def _search_loop(self, query: str) -> AgentReport:
        tried, expression = [], query
        for _ in range(self.max_attempts):
            hits = self._search(expression, self.k)
            tried.append(expression)
            out = call_predictor(self.judge, "faq_search", retries=self.retries, query=query,
                                 faq_entries=format_passages(hits, max_chars=self.passage_chars) or "(nothing found)")
            if out.adequate and hits:
                return AgentReport(self.source, query, True, out.findings, hits, tried)
            expression = (out.next_query or "").strip()
            if not expression or expression in tried:
                break
        return AgentReport(self.source, query, False, NOT_FOUND, [], tried)


class DocumentSearchAgent(_SearchAgent):
    """The more elaborate loop over the document collection: analyse, refine the search expression, judge
    adequacy, continue or stop, for at most ``max_attempts`` searches.

    Args:
        search: ``search(query, k) -> list[Passage]`` over the (chunk-and-title) document collection.
    """

    source = "document"

    def __init__(self, search, *, k: int = 3, max_attempts: int = 3, passage_chars: int = 600, retries: int = 2):
        super().__init__()
        self._search, self.k, self.max_attempts, self.passage_chars, self.retries = search, k, max_attempts, passage_chars, retries
        self.step = dspy.Predict(SearchDocuments)

    def _search_loop(self, query: str) -> AgentReport:
        tried, history, expression = [], [], query
        for _ in range(self.max_attempts):
            hits = self._search(expression, self.k)
            tried.append(expression)
            out = call_predictor(self.step, "document_search", retries=self.retries, query=query, earlier_attempts="\n".join(history),
                                 search_expression=expression, passages=format_passages(hits, max_chars=self.passage_chars) or "(nothing found)")
            if out.adequate and hits:
                return AgentReport(self.source, query, True, out.findings, hits, tried)
            history.append(f"- {expression!r}: {out.findings}")
            expression = (out.next_search_expression or "").strip()
            if not expression or expression in tried:
                break
        return AgentReport(self.source, query, False, NOT_FOUND, [], tried)
