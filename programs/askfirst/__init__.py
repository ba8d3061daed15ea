"""The askfirst program (``program.kind=askfirst``): the other programs' strategies as stages of one program; section ``askfirst``."""

from askfirst.programs.askfirst.config import AskfirstConfig
from askfirst.programs.base import ProgramSpec


def _build(config, resources, registry):
    from askfirst.programs.askfirst.program import AskFirstProgram

    # Composed through the registry: the notes program's loop, re-ranker, classifier and responders are its stages.
    notes = registry.build("notes_rag", config)
    debate = None
    if config.askfirst.debate:  # MAF-RAG's debate stage, with the mafrag section's settings
        from askfirst.programs.mafrag.debate import Debate

        debate = Debate(max_rounds=config.mafrag.debate_rounds, passage_chars=config.program.passage_chars, retries=config.lm.parse_retries)
    return AskFirstProgram(resources, config.askfirst, config.program, notes=notes, debate=debate, debate_settings=config.mafrag,
                           retries=config.lm.parse_retries)


SPEC = ProgramSpec(
    name="askfirst", build=_build, section="askfirst", config_model=AskfirstConfig,
    description="askfirst: standalone question, complexity router, notes loop, evidence assessment (per-passage answers, key terms), "
                "asking first on divergence or the detector, escalation, MAF-RAG's debate, responders",
    lm_roles={"retrieval_lm": ("rewrite", "retrieval.", "reranker.", "expand")},
)
