"""The iterative-notes program's config section (``notes``), also read where another program runs its loop."""

from __future__ import annotations

from pydantic import Field

from askfirst.config import ConfigSection


class NotesConfig(ConfigSection):
    """SemEval-2026 Task 8's notes loop: query generation -> retrieval -> notes for K rounds, re-ranking and routing."""

    iterations: int = Field(3, ge=1, le=10, description="K: rounds of query generation -> retrieval -> notes.")
    queries_per_iteration: int = Field(3, ge=1, le=6, description="Queries the query generator writes per round.")
    build: bool = Field(True, description="Build notes between rounds; off means queries see only the question.")
    reranker: bool = Field(True, description="LM listwise re-ranking of the pooled candidates.")
    router: bool = Field(True, description="Answerability classifier + router; off means always the complete-answer responder.")
