"""The Answerability Classifier and the router that turns its label into a route."""

from __future__ import annotations

import dspy

from askfirst.programs.robust import call_predictor
from askfirst.programs.routes import LABEL_TO_ROUTE
from askfirst.signatures.answerability import ClassifyAnswerability


class AnswerabilityRouter(dspy.Module):
    """Classify answerability and choose a route.

    With no passages the route is ``idk`` with no LM call (nothing retrieved cannot support an answer).

    Args:
        unanswerable_route: ``idk`` (say so plainly) or ``clarify`` (the SemEval system's choice).
        retries: Extra attempts on an unparseable LM reply.
    """

    def __init__(self, *, unanswerable_route: str = "idk", retries: int = 2):
        super().__init__()
        self.unanswerable_route = unanswerable_route
        self.retries = retries
        self.classify = dspy.Predict(ClassifyAnswerability)

    def forward(self, question: str, conversation_history: str, passages_text: str) -> dspy.Prediction:
        if not passages_text.strip():
            return dspy.Prediction(label="UNANSWERABLE", confidence=1.0, route="idk")
        out = call_predictor(self.classify, "answerability", retries=self.retries, conversation_history=conversation_history,
                             question=question, passages=passages_text)
        route = LABEL_TO_ROUTE[out.label]
        if route == "idk":
            route = self.unanswerable_route
        confidence = min(max(float(out.confidence), 0.0), 1.0)
        return dspy.Prediction(label=out.label, confidence=confidence, route=route)
