"""MAF-RAG's multi-agent debate: one agent per passage, an aggregator, rounds until the aggregate settles."""

from __future__ import annotations

import re
from dataclasses import dataclass

import dspy

from askfirst.programs.common.conversation import format_passages
from askfirst.programs.common.responders import clean_citations
from askfirst.programs.common.robust import call_predictor
from askfirst.retrieval.chunking import Passage
from askfirst.signatures.mafrag import AggregateDebate, DebateAgentAnswer


_BRACKETED = re.compile(r"\[([^\[\]]+)\]")


@dataclass(frozen=True)
class DebateResult:
    answer: str
    unknown: bool
    confidence: float
    rounds: int
    converged: bool

    def citations(self, passages: list[Passage]) -> list[str]:
        """The ids of ``passages`` the aggregate cites in brackets (the agents' answers carry their passage's id)."""
        return clean_citations(_BRACKETED.findall(self.answer), [p.passage_id for p in passages])


def _settled(previous: str, current: str) -> bool:
    return " ".join(previous.lower().split()) == " ".join(current.lower().split())


class Debate(dspy.Module):
    """Round 1: every agent answers from its own passage. Each later round shows every agent the previous
    aggregate (the paper's formula; its text says the peers' answers instead). The debate stops when the
    aggregate's text stops changing (the paper's epsilon is left open; equal text is the strictest reading)
    or after ``max_rounds``.
    """

    def __init__(self, *, max_rounds: int, passage_chars: int, retries: int = 2):
        super().__init__()
        self.max_rounds, self.passage_chars, self.retries = max_rounds, passage_chars, retries
        self.agent = dspy.Predict(DebateAgentAnswer)
        self.aggregate = dspy.Predict(AggregateDebate)

    def forward(self, question: str, passages: list[Passage]) -> DebateResult:
        group, out = "", None
        for round_ in range(1, self.max_rounds + 1):
            answers = [call_predictor(self.agent, "mafrag_debate_agent", retries=self.retries, question=question,
                                      passage=format_passages([p], max_chars=self.passage_chars), group_answer=group).answer
                       for p in passages]
            text = "\n".join(f"[{p.passage_id}] {a}" for p, a in zip(passages, answers, strict=True))
            out = call_predictor(self.aggregate, "mafrag_debate_aggregate", retries=self.retries, question=question, agent_answers=text)
            settled = round_ > 1 and _settled(group, out.answer)
            group = out.answer
            if settled:
                break
        confidence = min(max(float(out.confidence), 0.0), 1.0)
        unknown = bool(out.is_unknown) or out.answer.strip().lower().strip(".") in ("", "unknown")
        return DebateResult(answer=out.answer, unknown=unknown, confidence=confidence, rounds=round_, converged=bool(out.converged))
