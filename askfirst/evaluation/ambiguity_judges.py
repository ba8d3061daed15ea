"""The judges for ambiguous questions as DSPy modules on the judge LM (an unparseable verdict scores nothing)."""

from __future__ import annotations

import dspy

from askfirst.programs.common.robust import StepFailed, call_predictor
from askfirst.signatures.ambiguity_judges import JudgeAsksForInfo, JudgeLongAnswer

CRITERIA = ("relevance", "faithfulness", "informativeness", "correctness")


class AmbiguityJudges(dspy.Module):
    """``long_answer(...)``: CLARION's four 0-5 scores and their mean; ``asks_for_info(...)``: URASys's clarification check."""

    def __init__(self, *, retries: int = 1):
        super().__init__()
        self.retries = retries
        self.rate = dspy.Predict(JudgeLongAnswer)
        self.asks = dspy.Predict(JudgeAsksForInfo)

    def long_answer(self, *, question: str, qa_pairs, passages: list[str], answer: str) -> dict[str, float | None]:
        references = "\n".join(f"{q} -> {', '.join(a)}" for q, a in qa_pairs)
        try:
            out = call_predictor(self.rate, "long_answer_judge", retries=self.retries, question=question, reference_answers=references,
                                 passages="\n".join(passages) or "(none)", answer=answer)
        except StepFailed:
            return dict.fromkeys((*CRITERIA, "judge_mean"))
        scores = {c: float(getattr(out, c)) for c in CRITERIA}
        return scores | {"judge_mean": sum(scores.values()) / len(CRITERIA)}

    def asks_for_info(self, *, question: str, info: list[str], reply: str) -> bool | None:
        try:
            out = call_predictor(self.asks, "asks_for_info_judge", retries=self.retries, question=question,
                                 missing_information="\n".join(info), reply=reply)
        except StepFailed:
            return None
        return bool(out.asks_for_missing_information)
