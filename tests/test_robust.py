"""A step whose reply does not parse is retried as a new sample with a larger reply budget, then reported."""

import dataclasses

import dspy
import pytest

from askfirst.programs.common.robust import StepFailed, call_predictor
from tests.conftest import SchemaFollowingEngine


class CuttingEngine(SchemaFollowingEngine):
    """Cuts its JSON reply in half (the last field lost), as ``max_tokens`` does, unless the request allows ``needs`` tokens."""

    def __init__(self, needs: int):
        super().__init__({"answer": {"answer": "A long answer.", "sources": "a, b"}})
        self.needs, self.budgets = needs, []

    def complete(self, request):
        self.budgets.append(request.config.max_tokens)
        response = super().complete(request)
        if (request.config.max_tokens or 0) >= self.needs:
            return response
        from dspy.lm15 import Message, TextPart

        text = response.message.parts[0].text
        return dataclasses.replace(response, message=Message.assistant([TextPart(text[: len(text) // 2])]), finish_reason="length")


def _call(engine, *, retries, config=None):
    lm = dspy.LM("test/cutting", engine=engine, cache=False, max_tokens=400)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        return call_predictor(dspy.Predict("question -> answer, sources"), "answer", retries=retries, config=config, question="Why?")


def test_a_reply_cut_off_is_retried_with_twice_the_budget_each_time():
    engine = CuttingEngine(needs=1600)
    assert _call(engine, retries=2).answer == "A long answer."
    assert engine.budgets == [400, 800, 1600]


def test_a_step_whose_own_budget_is_given_doubles_that_one_and_fails_when_every_retry_is_cut():
    engine = CuttingEngine(needs=10_000)
    with pytest.raises(StepFailed, match="answer: no parseable LM reply after 2 attempt"):
        _call(engine, retries=1, config={"max_tokens": 100})
    assert engine.budgets == [100, 200]
