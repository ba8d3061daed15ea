"""R2RAG (``program.kind=r2rag``): a complexity router between vanilla RAG and a vanilla agent; section ``r2rag``."""

from askfirst.programs.base import ProgramSpec
from askfirst.programs.r2rag.config import R2ragConfig


def _build(config, resources, registry):
    from askfirst.programs.r2rag.program import R2RAGProgram

    return R2RAGProgram(resources, config.r2rag, config.program, retries=config.lm.parse_retries)


SPEC = ProgramSpec(
    name="r2rag", build=_build, section="r2rag", config_model=R2ragConfig,
    description="R2RAG: complexity router; simple -> query variants, pointwise re-ranking, budgeted evidence; complex -> a reviewing agent",
    lm_roles={"retrieval_lm": ("variants.", "rerank.", "review")},
)
