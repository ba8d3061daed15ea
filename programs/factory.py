"""Build the configured program, with its per-step LMs."""

from askfirst.config import AskFirstConfig
from askfirst.lm.factory import build_lm
from askfirst.programs.mtrag_judges import MTRAGJudges
from askfirst.programs.notes_rag import IterativeNotesRAG


def build_program(config: AskFirstConfig, retriever):
    """The configured program (``program.kind``). For the iterative-notes program with ``retrieval_lm`` set,
    its retrieval-side steps run on that LM (e.g. a small fast model) while classification and answering use ``lm``."""
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


def build_judges(config: AskFirstConfig, embedder) -> MTRAGJudges:
    """MTRAGEval's judges, on ``judge_lm`` when set (else the configured ``lm``)."""
    judges = MTRAGJudges(embedder, retries=config.lm.parse_retries)
    if config.judge_lm is not None:
        judges.set_lm(build_lm(config.judge_lm, seed=config.seed))
    return judges
