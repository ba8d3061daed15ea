"""P(answerable) from the label's log-probabilities: the engine's scoring helpers and the path through DSPy."""

import math

import dspy
import pytest

from askfirst.lm.label_scoring import enum_fields, normalise, value_offset
from askfirst.programs.common.answerability import AnswerabilityRouter, label_distribution
from tests.conftest import LabelScoringEngine

def test_the_label_fields_and_where_their_value_starts():
    schema = {"properties": {"answering_sentences": {"type": "array"}, "label": {"type": "string", "enum": ["ANSWERABLE", "PARTIAL"]},
                             "confidence": {"type": "number"}}}
    assert enum_fields(schema) == {"label": ["ANSWERABLE", "PARTIAL"]}
    reply = '{"answering_sentences": ["The label is here"], "label": "PARTIAL", "confidence": 0.5}'
    assert reply[value_offset(reply, "label"):].startswith('PARTIAL"') and value_offset(reply, "missing") is None
    scores = normalise({"a": math.log(2.0), "b": math.log(6.0)})
    assert math.isclose(math.exp(scores["a"]), 0.25) and math.isclose(math.exp(scores["b"]), 0.75)


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


class ByteModel:
    """A stand-in for ``llama_cpp.Llama`` over a vocabulary of byte strings: it "believes" one text, giving the next byte
    of that text a logit of 4 and every other token 0, and its KV cache is ``input_ids[:n_tokens]``."""

    def __init__(self, vocab: list[bytes], belief: bytes):
        self.vocab, self.belief = vocab, belief
        self.input_ids, self.n_tokens = [], 0

    def n_vocab(self) -> int:
        return len(self.vocab)

    def detokenize(self, tokens) -> bytes:
        return b"".join(self.vocab[t] for t in tokens)

    def tokenize(self, text: bytes, add_bos=False, special=False) -> list[int]:
        return [self.vocab.index(bytes([b])) for b in text]  # one byte per token, as a fresh continuation is tokenised

    def eval(self, tokens) -> None:
        self.input_ids = self.input_ids[:self.n_tokens] + list(tokens)
        self.n_tokens = len(self.input_ids)

    def logits(self):
        import numpy as np

        seen = self.detokenize(self.input_ids[:self.n_tokens])
        logits = np.zeros(len(self.vocab))
        if self.belief.startswith(seen) and len(seen) < len(self.belief):
            logits[self.vocab.index(self.belief[len(seen):len(seen) + 1])] = 4.0
        return logits


def test_each_value_gets_the_constrained_mass_of_its_first_tokens_also_after_a_split_character():
    from askfirst.lm.label_scoring import ValueScorer

    reply = '{"note": "café", "label": "ANSWERABLE"}'
    pieces = [b'{"note": "caf', b"\xc3", b'\xa9", "label', b'": "AN', b"SWERABLE", b'"}']  # "é" split over two tokens
    vocab = [bytes([b]) for b in range(256)] + pieces
    model = ByteModel(vocab, belief='{"note": "café", "label": "PARTIAL"'.encode())
    model.eval([256 + i for i in range(len(pieces))])
    scorer = ValueScorer(model)
    scorer._last_logits = model.logits
    scores = scorer.score(prompt_tokens=0, reply=reply, offset=value_offset(reply, "label"), values=["ANSWERABLE", "PARTIAL"])
    # From '{"note": "café", "label' on, the values allow two tokens: '"' (believed, e^4), which both share, and
    # '": "AN' (e^0), which only ANSWERABLE starts with. After '"', '": "' is one way only, then "P" (e^4) or "A" (e^0).
    believed, other = math.exp(4) / (math.exp(4) + 1), 1 / (math.exp(4) + 1)
    assert scores["PARTIAL"] == pytest.approx(math.log(believed * believed))
    assert scores["ANSWERABLE"] == pytest.approx(math.log(other + believed * other))
    assert math.exp(scores["PARTIAL"]) + math.exp(scores["ANSWERABLE"]) == pytest.approx(1.0)


class TokenModel(ByteModel):
    """Scripted logits by the text decoded so far: ``script[text] = {token bytes: logit}``, 0 for every other token."""

    def __init__(self, vocab: list[bytes], script: dict[bytes, dict[bytes, float]]):
        super().__init__(vocab, b"")
        self.script = script

    def logits(self):
        import numpy as np

        logits = np.zeros(len(self.vocab))
        for token, logit in self.script.get(self.detokenize(self.input_ids[:self.n_tokens]), {}).items():
            logits[self.vocab.index(token)] = logit
        return logits


def test_the_label_the_model_writes_is_the_one_it_believes_when_its_closing_quote_merges_with_a_comma():
    """Qwen closes a value with the token '",'. Scored to a closing '"' alone, the written label came out at 0.06 on the
    demo; by constrained mass the first letters decide, and '",' closes a value as '"' does."""
    from askfirst.lm.label_scoring import ValueScorer

    reply = '{"label": "ANSWERABLE", "x": 1}'
    pieces = [b'{"label": "', b"ANS", b"WER", b"ABLE", b'",', b'");', b"UN", b' "x": 1}']
    vocab = [bytes([b]) for b in range(256)] + pieces
    opened = b'{"label": "'
    model = TokenModel(vocab, {opened: {b"ANS": 3.0, b"UN": 1.0}, opened + b"A": {b'",': 5.0, b'");': 9.0}})
    model.eval([vocab.index(p) for p in pieces[:5]] + [vocab.index(pieces[-1])])
    scorer = ValueScorer(model)
    scorer._last_logits = model.logits
    scores = scorer.score(prompt_tokens=0, reply=reply, offset=value_offset(reply, "label"), values=["ANSWERABLE", "UNANSWERABLE"])
    total = math.exp(3) + math.exp(1) + 2  # "ANS", "UN", and the one-byte "A" and "U"
    assert math.exp(scores["ANSWERABLE"]) == pytest.approx((math.exp(3) + 1) / total)
    assert math.exp(scores["UNANSWERABLE"]) == pytest.approx((math.exp(1) + 1) / total)
    # Two values that part only at the closing quote: '",' closes "A"; '");' (logit 9) is no JSON and does not count.
    scores = scorer.score(prompt_tokens=0, reply='{"label": "A"}', offset=value_offset(reply, "label"), values=["A", "AB"])
    assert math.exp(scores["A"]) == pytest.approx((math.exp(5) + 1) / (math.exp(5) + 2))  # '",' and '"' against "B"
