"""URASys's config section (``urasys``)."""

from __future__ import annotations

from pydantic import Field

from askfirst.config import LMConfig, ConfigSection


class UrasysConfig(ConfigSection):
    """URASys (program.kind=urasys): two-phase indexing, FAQ + document agents, the manager's just-enough decision.

    Defaults follow the paper and its authors' code (m=5 FAQs per chunk, k=3 paraphrases, 100-1000 character
    chunks broken at the 80th percentile of sentence distances, T=4 attempts). The four switches are the
    paper's Table 4 ablations.
    """

    faq_agent: bool = Field(True, description="Search the FAQ collection (off: 'w/o FAQ agent').")
    document_agent: bool = Field(True, description="Search the document collection (off: 'w/o document agent').")
    decomposition: bool = Field(True, description="Split the question into sub-queries (off: 'w/o decomposition').")
    chunk_and_title: bool = Field(True, description="Documents as rewritten, titled semantic chunks (off: the plain index of the corpus, 'w/o proposed indexing').")
    max_attempts: int = Field(4, ge=1, le=10, description="T: search-and-judge rounds before saying no information was found.")
    ask_when_vague: bool = Field(False, description="After T rounds, a question the manager still judges vague gets a clarifying "
                                 "question (the paper's ask-before-answer) instead of Algorithm 1's 'no information found'.")
    faq_k: int = Field(5, ge=1, description="FAQ entries per search.")
    document_k: int = Field(3, ge=1, description="Document chunks per search.")
    faq_agent_attempts: int = Field(2, ge=1, le=5, description="FAQ agent: searches per sub-query (a few reformulations).")
    document_agent_attempts: int = Field(3, ge=1, le=8, description="Document agent: searches per sub-query.")
    faqs_per_chunk: int = Field(5, ge=1, le=8, description="m: FAQ pairs the FAQ Creator writes per chunk.")
    paraphrases: int = Field(3, ge=0, le=5, description="k: paraphrases the FAQ Expander writes per question (0: no expansion).")
    chunk_min_chars: int = Field(100, ge=1, description="Indexing: the shortest chunk the LM-guided chunker keeps, in characters.")
    chunk_max_chars: int = Field(1000, ge=2, description="Indexing: the longest chunk, in characters.")
    break_percentile: float = Field(80.0, gt=0, lt=100, description="Semantic chunker: break above this percentile of adjacent-sentence distances.")
    threads: int = Field(4, ge=1, description="dspy.Parallel threads for the agents (a local LM still answers one call at a time).")
    indexing_lm: LMConfig | None = Field(None, description="LM for the chunk rewriter, title assigner, FAQ creator and expander; default: lm.")
