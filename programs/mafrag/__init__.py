"""MAF-RAG (``program.kind=mafrag``): VOR, then EVR, then a multi-agent debate, then a fallback; section ``mafrag``."""

from askfirst.programs.base import ProgramSpec
from askfirst.programs.mafrag.config import MafragConfig


def _build(config, resources, registry):
    from askfirst.programs.mafrag.program import MAFRAGProgram

    return MAFRAGProgram(resources, config.mafrag, config.program, retries=config.lm.parse_retries)


SPEC = ProgramSpec(
    name="mafrag", build=_build, section="mafrag", config_model=MafragConfig,
    description="MAF-RAG: dense retrieval, then expanded re-scored retrieval, then a debate of passage agents, then a fallback search",
    lm_roles={"retrieval_lm": ("expand",)},
)
