"""The SemEval-2026 Task 8 iterative-notes program (``program.kind=notes_rag``); section ``notes``."""

from askfirst.programs.base import ProgramSpec
from askfirst.programs.notes_rag.config import NotesConfig


def _build(config, resources, registry):
    from askfirst.programs.notes_rag.program import IterativeNotesRAG

    return IterativeNotesRAG(resources, config.notes, config.program, retries=config.lm.parse_retries)


SPEC = ProgramSpec(
    name="notes_rag", build=_build, section="notes", config_model=NotesConfig,
    description="SemEval-2026 Task 8: query generator <-> notes builder for K rounds, hybrid retrieval, re-ranker, answerability router",
    lm_roles={"retrieval_lm": ("retrieval.", "reranker.")},
)
