"""The responders a route leads to: complete answer, partial answer, clarification request, or "I don't know"."""

from __future__ import annotations

import dspy

from askfirst.programs.common.robust import call_predictor
from askfirst.programs.common.routes import IDK_MESSAGE
from askfirst.signatures.responders import ClarificationRequest, CompleteAnswer, PartialAnswer


def clean_citations(cited, allowed: list[str]) -> list[str]:
    """Keep only ids of passages the responder was shown (an invented id is no citation), in order, once."""
    allowed_set = set(allowed)
    out = []
    for c in cited or []:
        cid = str(c).strip().strip("[]").strip()
        if cid in allowed_set and cid not in out:
            out.append(cid)
    return out


def partial_reply(answer: str, missing: str) -> str:
    """A partial answer's text: what the passages answer, then what they do not."""
    return f"{answer} What the documents do not say: {missing}" if missing else answer


def clarifying_question(options: list[str]) -> str:
    """A clarification that names only the readings or categories the evidence revealed (no LM call)."""
    return f"Your question could be about several things: {'; '.join(options)}. Which one do you mean?"


class Responders(dspy.Module):
    """Write the reply for a route from the evidence passages."""

    def __init__(self, *, retries: int = 2):
        super().__init__()
        self.retries = retries
        self.complete = dspy.Predict(CompleteAnswer)
        self.partial = dspy.Predict(PartialAnswer)
        self.clarify = dspy.Predict(ClarificationRequest)

    def forward(self, route: str, question: str, conversation_history: str, passages_text: str, passage_ids: list[str]) -> dspy.Prediction:
        inputs = {"conversation_history": conversation_history, "question": question, "passages": passages_text}
        if route == "idk":
            return dspy.Prediction(answer=IDK_MESSAGE, citations=[], missing="", options=[])
        if route == "clarify":
            out = call_predictor(self.clarify, "clarification", retries=self.retries, **inputs)
            return dspy.Prediction(answer=out.clarifying_question, citations=[], missing="", options=[str(o) for o in out.options or []])
        if route == "partial":
            out = call_predictor(self.partial, "partial_answer", retries=self.retries, **inputs)
            return dspy.Prediction(answer=partial_reply(out.answer, out.missing), citations=clean_citations(out.cited_ids, passage_ids), missing=out.missing, options=[])
        out = call_predictor(self.complete, "complete_answer", retries=self.retries, **inputs)
        return dspy.Prediction(answer=out.answer, citations=clean_citations(out.cited_ids, passage_ids), missing="", options=[])
