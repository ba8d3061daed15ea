"""MAF-RAG's config section (``mafrag``)."""

from __future__ import annotations

from pydantic import Field

from askfirst.config import ConfigSection, operator_only


class MafragConfig(ConfigSection):
    """MAF-RAG (program.kind=mafrag): escalating retrieval (VOR -> EVR -> debate -> fallback).

    Values are the paper's Table III. Where its text says otherwise, the text's value is named in the
    field's description; none of them is used by default.
    """

    vor_k: int = Field(12, ge=1, description="VOR: dense top-k (Table III; the text says top 5).")
    vor_accept: float = Field(0.75, ge=0, le=1, description="VOR: accept when the top cosine is at least this (the text escalates below 0.6).")
    evr_k: int = Field(24, ge=1, description="EVR: dense top-k on the expanded query.")
    cosine_weight: float = Field(0.7, ge=0, le=1, description="EVR: S = cosine_weight * cos + keymatch_weight * KeyMatch.")
    keymatch_weight: float = Field(0.3, ge=0, le=1, description="EVR: the weight of KeyMatch in S (see cosine_weight).")
    evr_keep: float = Field(0.35, ge=0, le=1, description="EVR: keep passages with S above this.")
    evr_accept: float = Field(0.60, ge=0, le=1, description="EVR: accept when the top S is at least this (the text says 0.5).")
    synonyms_file: str | None = Field(None, description="YAML mapping of a term to its expansions ('SIUP: [Surat Izin Usaha Perdagangan]'), the domain dictionary of EVR.",
                               **operator_only())
    lm_expansion: bool = Field(True, description="EVR: also let the LM add expansion terms.")
    debate_agents: int = Field(4, ge=1, le=8, description="Debate: agents, each on one of the top EVR passages.")
    debate_rounds: int = Field(3, ge=1, le=6, description="Debate: at most this many rounds; it stops earlier when the aggregate stops changing.")
    debate_accept: float = Field(0.65, ge=0, le=1, description="Debate: accept a known aggregate whose confidence is at least this.")
    fallback_search: str | None = Field(None, description="'module:function' with (query, k) -> list[Passage], e.g. a web search; "
                                        "unset (offline): the 'I don't know' route, where the paper searched the internet.",
                                        **operator_only())
    fallback_k: int = Field(5, ge=1, description="Passages the fallback search returns.")
    evidence_k: int = Field(5, ge=1, description="Passages of an accepted phase shown to the responder.")
