"""The steps both R2RAG paths share: query variants, pointwise LM re-ranking, evidence filled up to a budget."""

from __future__ import annotations

import logging

import dspy

from askfirst.programs.common.conversation import format_passages
from askfirst.programs.common.robust import StepFailed, call_predictor
from askfirst.retrieval.chunking import Passage
from askfirst.signatures.r2rag import JudgeRelevance, QueryVariants

logger = logging.getLogger(__name__)


def estimate_tokens(text: str) -> int:
    """About four characters a token: the budgets are sizes of context, not exact counts."""
    return len(text) // 4 + 1


def fill_budget(ranked: list[Passage], budget_tokens: int, *, passage_chars: int) -> list[Passage]:
    """Passages in rank order while they fit the budget (as the LM is shown them); the first always goes in."""
    chosen, used = [], 0
    for passage in ranked:
        cost = estimate_tokens(format_passages([passage], max_chars=passage_chars))
        if chosen and used + cost > budget_tokens:
            break
        chosen.append(passage)
        used += cost
    return chosen


class Variants(dspy.Module):
    """The query itself plus up to ``n`` LM-written variants, none of them already used."""

    def __init__(self, *, retries: int = 2):
        super().__init__()
        self.retries = retries
        self.generate = dspy.Predict(QueryVariants)

    def forward(self, query: str, *, n: int, used: set[str]) -> list[str]:
        out = [query] if query.strip().lower() not in used else []
        if n:
            written = call_predictor(self.generate, "r2rag_variants", retries=self.retries, query=query).variants
            out += [v.strip() for v in written or [] if v.strip()][:n]
        return [q for q in dict.fromkeys(out) if q.lower() not in used]


class PointwiseReranker(dspy.Module):
    """Judge each candidate against the query on its own and order by the estimated P(relevant).

    P(relevant) is the confidence of a "relevant" judgement and one minus the confidence of a "not relevant"
    one (the paper reads P("yes") off a re-ranker model's logits). A judgement that never parses scores 0 and
    is reported, so one passage cannot fail the question.
    """

    def __init__(self, *, passage_chars: int, retries: int = 2):
        super().__init__()
        self.passage_chars, self.retries = passage_chars, retries
        self.judge = dspy.Predict(JudgeRelevance)

    def forward(self, query: str, candidates: list[Passage], *, max_candidates: int) -> tuple[list[Passage], dict[str, float], list[str]]:
        head, tail = candidates[:max_candidates], candidates[max_candidates:]
        scores, warnings = {}, []
        for passage in head:
            try:
                j = call_predictor(self.judge, "r2rag_rerank", retries=self.retries, query=query,
                                   passage=format_passages([passage], max_chars=self.passage_chars))
                confidence = min(max(float(j.confidence), 0.0), 1.0)
                scores[passage.passage_id] = confidence if j.relevant else 1.0 - confidence
            except StepFailed as exc:
                warnings.append(str(exc))
                scores[passage.passage_id] = 0.0
        ranked = sorted(head, key=lambda p: -scores[p.passage_id])  # stable: ties keep the fused order
        return ranked + tail, scores, warnings
