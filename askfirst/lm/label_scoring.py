"""The log-probability of each value of a reply's label fields, measured on the llama.cpp model that wrote the reply.

A Signature's ``Literal`` output (an answerability label) becomes an ``enum`` in the JSON schema that constrained
decoding enforces. After the reply is generated, each enum value is scored as a continuation of the reply up to that
field's value: log P(value | prompt, reply so far), summed over the value's tokens. That is the model's own belief
in each label, which a generated "confidence" number is not (a 1.5B model writes 1.0 or 0.9 whatever it decides).

llama-cpp-python's own ``logprobs`` needs every position's logits kept (``logits_all``: a 2.5 GB buffer at 4,096
tokens of context for a 152k vocabulary) and sorts the whole vocabulary in Python for every generated token; scoring
a few values at the one position that matters costs a handful of single-token decodes instead.
"""

from __future__ import annotations

import codecs
import math
import re

import numpy as np


def enum_fields(schema: dict | None) -> dict[str, list[str]]:
    """The top-level properties of a JSON schema whose values are an ``enum`` of strings (a ``Literal`` field)."""
    fields = {}
    for name, prop in ((schema or {}).get("properties") or {}).items():
        values = prop.get("enum") if isinstance(prop, dict) else None
        if values and all(isinstance(v, str) for v in values):
            fields[name] = list(values)
    return fields


def value_offset(reply: str, field: str) -> int | None:
    """The offset in ``reply`` (a JSON object's text) where ``field``'s string value starts, after its opening quote."""
    match = re.search(r'"' + re.escape(field) + r'"\s*:\s*"', reply)
    return match.end() if match else None


def log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max()
    return shifted - math.log(float(np.exp(shifted).sum()))


def normalise(logprobs: dict[str, float]) -> dict[str, float]:
    """Log-probabilities over a set of values renormalised to sum to one in probability (a softmax over them)."""
    top = max(logprobs.values())
    total = math.log(sum(math.exp(v - top) for v in logprobs.values())) + top
    return {k: v - total for k, v in logprobs.items()}


class ValueScorer:
    """Scores continuations of a reply that a ``llama_cpp.Llama`` has just generated (its KV cache holds the prompt and
    the reply's tokens). It rewinds the cache to a prefix and decodes each continuation one token at a time."""

    def __init__(self, llama):
        self.llama = llama
        self._vocab = llama.n_vocab()

    def _last_logits(self) -> np.ndarray:
        return np.ctypeslib.as_array(self.llama._ctx.get_logits(), shape=(self._vocab,)).astype(np.float64)

    def _rewind(self, length: int, token: int) -> None:
        """Keep the first ``length - 1`` tokens and decode ``token`` as the ``length``-th, refreshing its logits."""
        self.llama.n_tokens = length - 1
        self.llama.eval([token])

    def score(self, *, prompt_tokens: int, reply: str, offset: int, values: list[str]) -> dict[str, float]:
        """log P(value + closing quote | prompt, reply[:offset]) for each value, unnormalised."""
        llama = self.llama
        generated = [int(t) for t in llama.input_ids[prompt_tokens:llama.n_tokens]]
        # The last whole token that ends at or before the value's start; the characters after it (a quote a token may
        # have merged with the value's first letters) are scored as part of each continuation.
        # Byte-level BPE (Qwen's): the reply's bytes are its tokens' bytes in order, so one incremental decode counts the
        # characters each token prefix ends at (a token ending mid-character adds none until the character completes).
        decoder = codecs.getincrementaldecoder("utf-8")(errors="ignore")
        boundary, chars, length = 0, 0, 0
        for i, token in enumerate(generated, start=1):
            length += len(decoder.decode(llama.detokenize([token])))
            if length > offset:
                break
            boundary, chars = i, length
        if boundary == 0:
            raise ValueError("the label's position is not among the generated tokens")
        lead = reply[chars:offset]
        prefix_length = prompt_tokens + boundary
        last = generated[boundary - 1]
        scores = {}
        for value in values:
            tokens = llama.tokenize((lead + value + '"').encode(), add_bos=False, special=False)
            self._rewind(prefix_length, last)
            total = 0.0
            for j, token in enumerate(tokens):
                total += float(log_softmax(self._last_logits())[token])
                if j < len(tokens) - 1:
                    llama.eval([token])
            scores[value] = total
        return scores
