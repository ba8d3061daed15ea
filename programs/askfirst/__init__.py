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
    faq_search = None
    if config.askfirst.faq:  # URASys's FAQ collection, built beside the corpus's by prepare_index
        from askfirst.programs.urasys.index import FAQ, augmented_search

        if resources.store is None:
            raise ValueError("askfirst.faq needs the corpus's store, to open its FAQ collection")
        faq_search = augmented_search(config, resources.store, FAQ)
    return AskFirstProgram(resources, config.askfirst, config.program, notes=notes, debate=debate, debate_settings=config.mafrag,
                           faq_search=faq_search, rrf_k=config.retriever.rrf_k, retries=config.lm.parse_retries)


def _prepare_index(config, store, *, docs=None, progress=None):
    """URASys's FAQ collection when ``askfirst.faq`` is on (its units are built too: they share the ledger); else nothing."""
    if not config.askfirst.faq:
        return None
    from askfirst.programs.urasys.index import augment_index

    return augment_index(config, store, docs=docs, progress=progress)


SPEC = ProgramSpec(
    name="askfirst", build=_build, section="askfirst", config_model=AskfirstConfig, prepare_index=_prepare_index,
    description="askfirst: standalone question, complexity router, notes loop, URASys FAQ fusion, evidence assessment (per-passage answers, key terms), "
                "asking first on divergence or the detector (or answering every reading with CLARION's planner and writer), escalation, "
                "MAF-RAG's debate, responders",
    lm_roles={"retrieval_lm": ("rewrite", "retrieval.", "reranker.", "expand")}, index_switch="askfirst.faq=true",
)
