"""Build the configured program."""

from askfirst.config import AskFirstConfig
from askfirst.programs.notes_rag import IterativeNotesRAG


def build_program(config: AskFirstConfig, retriever) -> IterativeNotesRAG:
    return IterativeNotesRAG(retriever, config.program, retries=config.lm.parse_retries)
