"""P(answerable) from the label's log-probabilities: the engine's scoring helpers and the path through DSPy."""

import math

import dspy
import pytest

from askfirst.lm.label_scoring import enum_fields, normalise, value_offset
from askfirst.programs.common.answerability import AnswerabilityRouter, label_distribution
from tests.conftest import SchemaFollowingEngine

LABEL_LOGPROBS = {"ANSWERABLE": math.log(0.6), "PARTIAL": math.log(0.1), "UNDERSPECIFIED": math.log(0.1), "UNANSWERABLE": math.log(0.2)}


def test_the_label_fields_and_where_their_value_starts():
    schema = {"properties": {"answering_sentences": {"type": "array"}, "label": {"type": "string", "enum": ["ANSWERABLE", "PARTIAL"]},
                             "confidence": {"type": "number"}}}
    assert enum_fields(schema) == {"label": ["ANSWERABLE", "PARTIAL"]}
    reply = '{"answering_sentences": ["The label is here"], "label": "PARTIAL", "confidence": 0.5}'
    assert reply[value_offset(reply, "label"):].startswith('PARTIAL"') and value_offset(reply, "missing") is None
    scores = normalise({"a": math.log(2.0), "b": math.log(6.0)})
    assert math.isclose(math.exp(scores["a"]), 0.25) and math.isclose(math.exp(scores["b"]), 0.75)


class LabelScoringEngine(SchemaFollowingEngine):
    """The test engine, declaring that it scores label fields and reporting them as the llama.cpp engine does."""

    scores_labels = True
    supported_params = frozenset({"temperature", "max_tokens", "response_format", "logprobs"})

    def complete(self, request):
        from dspy._vendor.lm15.types import TokenLogprob, TopLogprob

        response = super().complete(request)
        self.asked_for_logprobs = request.config.logprobs is not None
        if not self.asked_for_logprobs:
            return response
        top = tuple(TopLogprob(token=k, logprob=v) for k, v in LABEL_LOGPROBS.items())
        entry = TokenLogprob(token="ANSWERABLE", logprob=LABEL_LOGPROBS["ANSWERABLE"], top=top)
        return response.__class__(id=response.id, model=response.model, message=response.message, finish_reason=response.finish_reason,
                                  usage=response.usage, logprobs=(entry,))


@pytest.mark.parametrize("measured", [True, False])
def test_the_router_takes_p_answerable_from_the_labels_log_probabilities(measured):
    engine = LabelScoringEngine({"label": {"answering_sentences": [], "label": "ANSWERABLE", "confidence": 1.0}})
    router = AnswerabilityRouter(answer_threshold=0.75, label_logprobs=measured)
    with dspy.context(lm=dspy.LM("test/scoring", engine=engine, cache=False), adapter=dspy.JSONAdapter()):
        decision = router(question="How much is the lab fee?", conversation_history="", passages_text="[fees-lab] Laboratory fee: EUR 85.")
    assert engine.asked_for_logprobs is measured
    if measured:  # P(ANSWERABLE) + P(PARTIAL) = 0.7 < 0.75: the measured belief routes to "I don't know"
        assert decision.probability_source == "logprobs" and math.isclose(decision.p_answerable, 0.7) and math.isclose(decision.confidence, 0.6)
        assert decision.route == "idk"
    else:  # the written confidence of 1.0 answers
        assert decision.probability_source == "generated" and decision.p_answerable == 1.0 and decision.route == "answer"


def test_no_distribution_without_an_entry_for_every_label():
    assert label_distribution(dspy.Prediction(label="ANSWERABLE"), ["ANSWERABLE", "PARTIAL"]) is None
    partial = {"content": [{"token": "ANSWERABLE", "logprob": -0.1, "top_logprobs": [{"token": "ANSWERABLE", "logprob": -0.1}]}]}
    assert label_distribution(dspy.Prediction(logprobs=partial), ["ANSWERABLE", "PARTIAL"]) is None
