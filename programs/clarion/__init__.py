"""CLARION (``program.kind=clarion``): ambiguity planning, then an acting loop per reading; section ``clarion``."""

from askfirst.programs.base import ProgramSpec
from askfirst.programs.clarion.config import ClarionConfig


def _build(config, resources, registry):
    from askfirst.programs.clarion.program import ClarionProgram

    return ClarionProgram(resources, config.clarion, config.program, retries=config.lm.parse_retries)


SPEC = ProgramSpec(
    name="clarion", build=_build, section="clarion", config_model=ClarionConfig,
    description="CLARION: detect and type ambiguity, clarify into readings, ReAct search per reading, one long answer",
    lm_roles={"retrieval_lm": ("act",)},
)
