"""The Answerability Classifier and the router that turns its label into a route."""

from __future__ import annotations

import math
from typing import get_args

import dspy

from askfirst.programs.common.robust import call_predictor
from askfirst.programs.common.routes import LABEL_TO_ROUTE
from askfirst.signatures.answerability import AnswerabilityLabel, ClassifyAnswerability

LABELS: tuple[str, ...] = get_args(AnswerabilityLabel)


ANSWERING_LABELS = ("ANSWERABLE", "PARTIAL")


def p_answerable(label: str, confidence: float) -> float:
    """The classifier's probability that the question can be (at least partly) answered from the passages."""
    return confidence if label in ANSWERING_LABELS else 1.0 - confidence


def scores_labels(predictor: dspy.Predict) -> bool:
    """Whether ``predictor``'s LM measures its label fields' probabilities (the in-process llama.cpp engine does).
    Other LMs are not asked: some providers refuse a ``logprobs`` request outright."""
    lm = predictor.lm or dspy.settings.lm
    try:
        return bool(getattr(lm.engine, "scores_labels", False))
    except Exception:  # noqa: BLE001 - an LM without an engine of this kind does not measure them
        return False


# ``top_logprobs`` (alternatives per label field; the engine reports every allowed value whatever it says) doubles as
# the scoring's version in DSPy's cache key: none was each value's own tokens to its closing quote, whose cached scores
# are wrong (``askfirst.lm.label_scoring``); 2 is the constrained mass, so a cache from before is not served for it.
LABEL_SCORING = 2


def label_scoring_config(predictor: dspy.Predict, *, enabled: bool) -> dict | None:
    """The call config that asks ``predictor``'s LM for its label probabilities, or ``None`` when off or not measured."""
    return {"logprobs": True, "top_logprobs": LABEL_SCORING} if enabled and scores_labels(predictor) else None


def label_distribution(prediction, labels) -> dict[str, float] | None:
    """The probability of each label from the reply's log-probabilities, or ``None`` when the LM gave none for them:
    the entry whose alternatives are exactly ``labels`` (what ``LlamaCppEngine`` reports), renormalised over them."""
    content = ((prediction.get("logprobs") if hasattr(prediction, "get") else None) or {}).get("content") or []
    for entry in content:
        top = {str(t["token"]): float(t["logprob"]) for t in entry.get("top_logprobs") or []}
        if set(top) == set(labels):
            total = sum(math.exp(v) for v in top.values())
            return {label: math.exp(top[label]) / total for label in labels}
    return None


def label_probability(out, label: str, *, generated: float) -> tuple[float, float, str]:
    """``(confidence in label, P(answerable), source)``: from the label's log-probabilities where the LM measured
    them (``"logprobs"``), else from the confidence the LM wrote (``"generated"``)."""
    dist = label_distribution(out, LABELS)
    if dist is None:
        confidence = min(max(float(generated), 0.0), 1.0)
        return confidence, p_answerable(label, confidence), "generated"
    return dist[label], sum(dist[lab] for lab in ANSWERING_LABELS), "logprobs"


def route_for(label: str, confidence: float, *, threshold: float | None, p_answer: float | None = None) -> str:
    """The label's route, or with a threshold: answer (partial for PARTIAL) when P(answerable) >= threshold,
    else "I don't know". UNDERSPECIFIED always asks for clarification. ``p_answer`` is P(answerable) where it was
    measured (the labels' log-probabilities); otherwise it follows from the label and its confidence."""
    if threshold is None or label == "UNDERSPECIFIED":
        return LABEL_TO_ROUTE[label]
    if (p_answerable(label, confidence) if p_answer is None else p_answer) < threshold:
        return "idk"
    return "partial" if label == "PARTIAL" else "answer"


class AnswerabilityRouter(dspy.Module):
    """Classify answerability and choose a route.

    With no passages the route is ``idk`` with no LM call (nothing retrieved cannot support an answer).

    Args:
        unanswerable_route: ``idk`` (say so plainly) or ``clarify`` (the SemEval system's choice).
        answer_threshold: When set, routing is probabilistic: see ``route_for``.
        label_logprobs: Take the confidence and P(answerable) from the label's log-probabilities where the LM measures
            them (``scores_labels``), not from the confidence it writes.
        retries: Extra attempts on an unparseable LM reply.
    """

    def __init__(self, *, unanswerable_route: str = "idk", answer_threshold: float | None = None, retries: int = 2, label_logprobs: bool = True):
        super().__init__()
        self.label_logprobs = label_logprobs
        self.unanswerable_route = unanswerable_route
        self.answer_threshold = answer_threshold
        self.retries = retries
        self.classify = dspy.Predict(ClassifyAnswerability)

    def forward(self, question: str, conversation_history: str, passages_text: str) -> dspy.Prediction:
        if not passages_text.strip():
            return dspy.Prediction(label="UNANSWERABLE", confidence=1.0, route="idk", p_answerable=0.0, probability_source=None)
        config = label_scoring_config(self.classify, enabled=self.label_logprobs)
        out = call_predictor(self.classify, "answerability", retries=self.retries, config=config, conversation_history=conversation_history,
                             question=question, passages=passages_text)
        confidence, p_answer, source = label_probability(out, out.label, generated=out.confidence)
        route = route_for(out.label, confidence, threshold=self.answer_threshold, p_answer=p_answer)
        if route == "idk":
            route = self.unanswerable_route
        return dspy.Prediction(label=out.label, confidence=confidence, route=route, p_answerable=p_answer, probability_source=source)
