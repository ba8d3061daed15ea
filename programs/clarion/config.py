"""CLARION's config section (``clarion``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from askfirst.config import ConfigSection


class ClarionConfig(ConfigSection):
    """CLARION: ambiguity planning, then a ReAct acting loop per interpretation (program.kind=clarion)."""

    detection: bool = Field(True, description="Planning agent's ambiguity detection (off: plain ReAct, the paper's 'w/o clarification & detection').")
    clarification: bool = Field(True, description="Rewrite an ambiguous query into clarified interpretations (off: 'w/o clarification').")
    decomposition: bool = Field(False, description="Decompose each (clarified) multi-hop reading into ordered single-hop sub-questions that guide its searches.")
    grounded_planning: bool = Field(True, description="Show the planner the top passages for the question, so readings match what the collection distinguishes (off: the paper's planning from the query alone).")
    mode: Literal["answer_all", "ask_first"] = Field("answer_all", description="answer_all covers every reading (benchmarks); ask_first returns a clarifying question listing them.")
    max_iterations: int = Field(5, ge=1, le=20, description="Acting steps; the last one is always ANSWER.")
    search_k: int = Field(3, ge=1, description="Passages kept per search.")
