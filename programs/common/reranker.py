"""LM listwise re-ranking of the pooled candidates."""

from __future__ import annotations

import dspy

from askfirst.programs.common.conversation import format_passages
from askfirst.programs.common.robust import call_predictor
from askfirst.retrieval.chunking import Passage
from askfirst.signatures.reranking import RerankPassages


class ListwiseReranker(dspy.Module):
    """Reorder candidates by the LM's ranking; ids it leaves out keep their fused order after the ranked ones,
    and ids it invents are ignored, so re-ranking can only reorder, never lose or add evidence."""

    def __init__(self, *, passage_chars: int = 300, retries: int = 2):
        super().__init__()
        self.passage_chars = passage_chars
        self.retries = retries
        self.rank = dspy.Predict(RerankPassages)

    def forward(self, question: str, passages: list[Passage]) -> dspy.Prediction:
        if len(passages) <= 1:
            return dspy.Prediction(passages=list(passages))
        out = call_predictor(self.rank, "reranker", retries=self.retries, question=question,
                             passages=format_passages(passages, max_chars=self.passage_chars))
        by_id = {p.passage_id: p for p in passages}
        order = [str(i).strip().strip("[]") for i in (out.ranked_ids or [])]
        ranked = list(dict.fromkeys(i for i in order if i in by_id))
        ranked += [pid for pid in by_id if pid not in ranked]
        return dspy.Prediction(passages=[by_id[pid] for pid in ranked])
