"""Build the judges and extractors that score a program, on their LMs (the program itself: ``registry.build_program``)."""

from askfirst.config import AskFirstConfig
from askfirst.lm.factory import build_lm
from askfirst.evaluation.mtrag_judges import MTRAGJudges


def build_judges(config: AskFirstConfig, embedder) -> MTRAGJudges:
    """MTRAGEval's judges, on ``judge_lm`` when set (else the configured ``lm``)."""
    judges = MTRAGJudges(embedder, retries=config.lm.parse_retries, similarity=config.eval.rb_agg_similarity)
    _on_judge_lm(judges, config)
    return judges


def build_extractor(config: AskFirstConfig):
    """Disambig-F1's short-answer extractor on ``judge_lm`` (else ``lm``); an unparseable reply extracts nothing."""
    import dspy

    from askfirst.evaluation.ambiguity_metrics import lm_extractor
    from askfirst.programs.common.robust import StepFailed, call_predictor
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
    from askfirst.evaluation.ambiguity_judges import AmbiguityJudges

    judges = AmbiguityJudges(retries=config.lm.parse_retries)
    _on_judge_lm(judges, config)
    return judges


def _on_judge_lm(module, config: AskFirstConfig) -> None:
    """Run ``module`` on ``judge_lm`` when one is configured (else it uses the configured ``lm``)."""
    if config.judge_lm is not None:
        module.set_lm(build_lm(config.judge_lm, seed=config.seed))
