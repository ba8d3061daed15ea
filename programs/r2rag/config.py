"""R2RAG's config section (``r2rag``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from askfirst.config import ConfigSection


class R2ragConfig(ConfigSection):
    """R2RAG (program.kind=r2rag): a complexity router between vanilla RAG and a vanilla agent.

    The paper's budgets are in Qwen3 tokens of whole web documents (5,000 for vanilla RAG; 25,000 - 5,120 =
    19,880 of useful documents for the agent, per its code). Our passages are ~180-word chunks shown to a
    4,096-token local model, so both budgets are scaled down here and are settings.
    """

    router: Literal["lm", "simple", "complex"] = Field("lm", description="'lm': the complexity router decides; 'simple' / 'complex' force a path (ablations).")
    variants: int = Field(3, ge=0, le=4, description="LM query variants per search round; the query itself is searched too.")
    per_query_k: int = Field(10, ge=1, description="Passages retrieved per query variant before de-duplication.")
    rerank_candidates: int = Field(10, ge=0, description="Top fused candidates judged pointwise by the LM (one call each); the rest keep their fused order after them.")
    evidence_tokens: int = Field(1200, ge=50, description="Vanilla RAG: evidence filled greedily in rank order up to this many tokens (~4 characters a token).")
    max_iterations: int = Field(5, ge=1, le=10, description="Agent: most variants -> retrieval -> re-ranking -> review iterations.")
    agent_evidence_tokens: int = Field(2400, ge=50, description="Agent: stop once the useful passages gathered reach this many tokens.")
    review_passages: int = Field(6, ge=1, description="Agent: top re-ranked new passages the reviewer sees per iteration.")
