"""URASys (``program.kind=urasys``): two-phase index, FAQ and document agents, the manager; section ``urasys``."""

from askfirst.programs.base import ProgramSpec
from askfirst.programs.urasys.config import UrasysConfig


def _build(config, resources, registry):
    from askfirst.programs.urasys.program import build_urasys

    return build_urasys(config, resources)


def _prepare_index(config, store, *, docs=None, progress=None):
    from askfirst.programs.urasys.index import augment_index, augmented_parts

    # Without the FAQ agent and the chunk-and-title units the agents read only the plain index: building both
    # collections anyway would cost about m + 3 LM calls a chunk (days over MTRAG-UN's 4,361 passages) for nothing.
    if not augmented_parts(config.urasys):
        return None
    return augment_index(config, store, docs=docs, progress=progress)


SPEC = ProgramSpec(
    name="urasys", build=_build, section="urasys", config_model=UrasysConfig, prepare_index=_prepare_index,
    description="URASys: chunk-and-title units and an FAQ collection, FAQ + document agents, a manager that answers, asks or refines",
    lm_roles={"retrieval_lm": ("decompose", "faq_agent.", "document_agent.")}, index_switch="urasys.faq_agent=true",
)
