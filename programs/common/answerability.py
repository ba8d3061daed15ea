"""The Answerability Classifier and the router that turns its label into a route."""

from __future__ import annotations

import dspy

from askfirst.programs.common.robust import call_predictor
from askfirst.programs.common.routes import LABEL_TO_ROUTE
from askfirst.signatures.answerability import ClassifyAnswerability


def p_answerable(label: str, confidence: float) -> float:
    """The classifier's probability that the question can be (at least partly) answered from the passages."""
    return confidence if label in ("ANSWERABLE", "PARTIAL") else 1.0 - confidence


def route_for(label: str, confidence: float, *, threshold: float | None) -> str:
    """The label's route, or with a threshold: answer (partial for PARTIAL) when P(answerable) >= threshold,
    else "I don't know". UNDERSPECIFIED always asks for clarification."""
    if threshold is None or label == "UNDERSPECIFIED":
        return LABEL_TO_ROUTE[label]
    if p_answerable(label, confidence) < threshold:
        return "idk"
    return "partial" if label == "PARTIAL" else "answer"


class AnswerabilityRouter(dspy.Module):
    """Classify answerability and choose a route.

    With no passages the route is ``idk`` with no LM call (nothing retrieved cannot support an answer).

    Args:
        unanswerable_route: ``idk`` (say so plainly) or ``clarify`` (the SemEval system's choice).
        answer_threshold: When set, routing is probabilistic: see ``route_for``.
        retries: Extra attempts on an unparseable LM reply.
    """

    def __init__(self, *, unanswerable_route: str = "idk", answer_threshold: float | None = None, retries: int = 2):
        super().__init__()
        self.unanswerable_route = unanswerable_route
        self.answer_threshold = answer_threshold
        self.retries = retries
        self.classify = dspy.Predict(ClassifyAnswerability)

    def forward(self, question: str, conversation_history: str, passages_text: str) -> dspy.Prediction:
        if not passages_text.strip():
            return dspy.Prediction(label="UNANSWERABLE", confidence=1.0, route="idk")
        out = call_predictor(self.classify, "answerability", retries=self.retries, conversation_history=conversation_history,
                             question=question, passages=passages_text)
        confidence = min(max(float(out.confidence), 0.0), 1.0)
        route = route_for(out.label, confidence, threshold=self.answer_threshold)
        if route == "idk":
            route = self.unanswerable_route
        return dspy.Prediction(label=out.label, confidence=confidence, route=route, p_answerable=p_answerable(out.label, confidence))
