"""Build the configured program, with its per-step LMs."""

from askfirst.config import AskFirstConfig
from askfirst.lm.factory import build_lm
from askfirst.programs.mtrag_judges import MTRAGJudges
from askfirst.programs.notes_rag import IterativeNotesRAG


def build_program(config: AskFirstConfig, retriever, *, store=None):
    """The configured program (``program.kind``). For the iterative-notes program with ``retrieval_lm`` set,
    its retrieval-side steps run on that LM (e.g. a small fast model) while classification and answering use ``lm``.

    Args:
        store: The corpus's ``PassageStore``; URASys opens its FAQ and unit collections beside it.
    """
    if config.program.kind == "urasys":
        return _urasys(config, retriever, store)
    if config.program.kind == "clarion":
        from askfirst.programs.clarion import ClarionProgram

        return ClarionProgram(retriever, config.clarion, config.program, retries=config.lm.parse_retries)
    program = IterativeNotesRAG(retriever, config.program, retries=config.lm.parse_retries)
    if config.retrieval_lm is not None:
        lm = build_lm(config.retrieval_lm, seed=config.seed)
        program.retrieval.set_lm(lm)
        if program.reranker is not None:
            program.reranker.set_lm(lm)
    return program


def _urasys(config: AskFirstConfig, retriever, store):
    from askfirst.augment import FAQ, UNITS, augmented_collection
    from askfirst.programs.urasys import URASysProgram
    from askfirst.retrieval.factory import open_retriever

    if store is None:
        raise ValueError("the URASys program needs the corpus's store, to open its FAQ and unit collections")

    def search(part: str):
        found = open_retriever(config, store.sibling(augmented_collection(config, part)))
        if not len(found):
            from askfirst.datasets.errors import DataError

            raise DataError(f"the URASys {part} collection of {config.data.corpus!r} is empty; build it with: askfirst index --augment")
        return lambda query, k: found(query, k)

    u = config.urasys
    documents = search(UNITS) if u.chunk_and_title else (lambda query, k: retriever(query, k))
    return URASysProgram(faq_search=search(FAQ) if u.faq_agent else None, document_search=documents if u.document_agent else None,
                         config=u, program=config.program, retries=config.lm.parse_retries)


def build_judges(config: AskFirstConfig, embedder) -> MTRAGJudges:
    """MTRAGEval's judges, on ``judge_lm`` when set (else the configured ``lm``)."""
    judges = MTRAGJudges(embedder, retries=config.lm.parse_retries)
    _on_judge_lm(judges, config)
    return judges


def build_extractor(config: AskFirstConfig):
    """Disambig-F1's short-answer extractor on ``judge_lm`` (else ``lm``); an unparseable reply extracts nothing."""
    import dspy

    from askfirst.optimizers.ambiguity_metrics import lm_extractor
    from askfirst.programs.robust import StepFailed, call_predictor
    from askfirst.signatures.clarion import ExtractShortAnswer

    predictor = dspy.Predict(ExtractShortAnswer)
    _on_judge_lm(predictor, config)

    def robust(**inputs):
        try:
            return call_predictor(predictor, "short_answer_extractor", retries=config.lm.parse_retries, **inputs)
        except StepFailed:
            return dspy.Prediction(short_answer="")

    return lm_extractor(robust)


def build_ambiguity_judges(config: AskFirstConfig):
    """The judges for ambiguous questions (long-answer ratings, asks-for-info) on ``judge_lm`` (else ``lm``)."""
    from askfirst.programs.ambiguity_judges import AmbiguityJudges

    judges = AmbiguityJudges(retries=config.lm.parse_retries)
    _on_judge_lm(judges, config)
    return judges


def _on_judge_lm(module, config: AskFirstConfig) -> None:
    """Run ``module`` on ``judge_lm`` when one is configured (else it uses the configured ``lm``)."""
    if config.judge_lm is not None:
        module.set_lm(build_lm(config.judge_lm, seed=config.seed))
