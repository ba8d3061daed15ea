"""Calling a predictor so that a reply that cannot be parsed is retried, then reported, never raised mid-run."""

from __future__ import annotations

import logging

import dspy
from dspy.utils.exceptions import AdapterParseError

from askfirst.cancellation import check_cancelled

logger = logging.getLogger(__name__)


class StepFailed(RuntimeError):
    """A program step whose LM reply could not be parsed after every retry."""

    def __init__(self, step: str, attempts: int, cause: Exception):
        super().__init__(f"{step}: no parseable LM reply after {attempts} attempt(s): {cause}")
        self.step = step


def call_predictor(predictor: dspy.Module, step: str, *, retries: int, config: dict | None = None, **inputs) -> dspy.Prediction:
    """Call ``predictor`` (with the LM ``config``, if any); on a parse failure retry with a fresh rollout (a
    cache-busting key and a little temperature), so the retry is a new sample rather than the cached failure,
    and with twice the reply budget of the attempt before.

    The budget doubles because a reply held to the Signature's JSON schema (the local engine's constrained
    decoding) fails to parse only when ``max_tokens`` cuts it off, and a new sample at the same budget is cut off
    again: R2RAG's answer, citing up to ten 64-character MTRAG passage ids after a long answer, did so three times.

    Raises:
        StepFailed: After ``retries`` extra attempts all failed to parse.
    """
    last: Exception | None = None
    for attempt in range(retries + 1):
        check_cancelled()  # a request nobody waits for any more stops here, before its next LM call
        try:
            if attempt == 0:
                return predictor(**inputs, config=dict(config)) if config else predictor(**inputs)
            budget = (config or {}).get("max_tokens") or reply_budget(predictor)  # looked up only when a retry needs it
            more = {"max_tokens": budget * 2 ** attempt} if budget else {}
            return predictor(**inputs, config={**(config or {}), "rollout_id": attempt, "temperature": 0.7, **more})
        except AdapterParseError as exc:
            last = exc
            logger.warning("%s: unparseable LM reply (attempt %d/%d): %s", step, attempt + 1, retries + 1, str(exc)[:200])
    raise StepFailed(step, retries + 1, last)


def reply_budget(predictor: dspy.Module) -> int | None:
    """The ``max_tokens`` of the LM ``predictor`` calls (its own, else DSPy's configured one), if it sets one."""
    try:
        lm = predictor.get_lm() if hasattr(predictor, "get_lm") else None
    except ValueError:  # a module whose steps use different LMs
        return None
    lm = lm or dspy.settings.lm
    return (getattr(lm, "kwargs", None) or {}).get("max_tokens")
