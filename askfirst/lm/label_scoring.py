"""The probability of each value of a reply's label fields, measured on the llama.cpp model that wrote the reply.

A Signature's ``Literal`` output (an answerability label) becomes an ``enum`` in the JSON schema that constrained
decoding enforces. After the reply is generated, the model is rewound to where that field's value starts and asked
what the constrained decode would write there: the next-token probabilities, kept to the tokens the values allow and
renormalised over them, give each value the mass of the tokens only it can start with; a token several values share
("UN" of "UNANSWERABLE" and "UNDERSPECIFIED") is decoded and its mass split the same way one token on. Every way of
spelling a value counts ("AN" + "SWER…" as well as "ANS" + "WER…"), and so does a closing quote merged with what follows
('",' - Qwen writes that token, not '"' alone). That is the model's own belief in each label, which a generated
"confidence" number is not (a 1.5B model writes 1.0 or 0.9 whatever it decides).

Scoring each value's own tokenisation to its closing quote instead (as this module did until 2026-11-27) put almost no
mass on the label the model chose: after "ANSWERABLE" it expects '",', not '"', so the value it believed lost to the one
it did not (the demo's "Is there a fee for each guest night?": ANSWERABLE written, 0.06 scored, 0.64 by mass).

llama-cpp-python's own ``logprobs`` needs every position's logits kept (``logits_all``: a 2.5 GB buffer at 4,096
tokens of context for a 152k vocabulary) and sorts the whole vocabulary in Python for every generated token; scoring
the one position that matters costs one or two single-token decodes instead.
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
    the reply's tokens). It rewinds the cache to where a value starts and reads the next-token probabilities there (and
    one token on where values share a token)."""

    def __init__(self, llama):
        self.llama = llama
        self._vocab = llama.n_vocab()

    def _last_logits(self) -> np.ndarray:
        return np.ctypeslib.as_array(self.llama._ctx.get_logits(), shape=(self._vocab,)).astype(np.float64)

    def _rewind(self, length: int, token: int) -> None:
        """Keep the first ``length - 1`` tokens and decode ``token`` as the ``length``-th, refreshing its logits."""
        self.llama.n_tokens = length - 1
        self.llama.eval([token])

    def _tokens_by_first_byte(self) -> dict[bytes, list[tuple[int, bytes]]]:
        """Every token's id and bytes, grouped by its first byte; read once per model (half a second for Qwen's 152k),
        so a value's next tokens are looked up among those starting as it does, not the whole vocabulary each time."""
        cached = getattr(self.llama, "_askfirst_tokens_by_first_byte", None)
        if cached is None:
            cached = {}
            for t in range(self._vocab):
                if text := self.llama.detokenize([t]):
                    cached.setdefault(text[:1], []).append((t, text))
            try:
                self.llama._askfirst_tokens_by_first_byte = cached
            except AttributeError:  # a model object that takes no new attributes reads them again next time
                pass
        return cached

    def _mass(self, length: int, token: int, remaining: dict[str, bytes], depth: int) -> dict[str, float]:
        """Each value's share of the constrained next-token mass after the first ``length`` tokens (the last one
        ``token``), where ``remaining[value]`` is what is left to write of it, its closing quote included."""
        self._rewind(length, token)
        logp = log_softmax(self._last_logits())
        by_first_byte = self._tokens_by_first_byte()
        allowed: dict[int, tuple[bytes, list[str]]] = {}
        for head in {r[:1] for r in remaining.values()}:
            for t, text in by_first_byte.get(head, ()):
                values = [v for v, r in remaining.items() if r.startswith(text) or (text.startswith(r) and _closes(text[len(r):]))]
                if values:
                    allowed[t] = (text, values)
        if not allowed:
            return {v: 1.0 / len(remaining) for v in remaining}
        top = max(logp[t] for t in allowed)
        weights = {t: math.exp(logp[t] - top) for t in allowed}
        total = sum(weights.values())
        mass = dict.fromkeys(remaining, 0.0)
        for t, (text, values) in allowed.items():
            share = weights[t] / total
            if len(values) == 1:
                mass[values[0]] += share
            elif depth > 0 and share > 1e-6:
                deeper = self._mass(length + 1, t, {v: remaining[v][len(text):] for v in values}, depth - 1)
                for v, m in deeper.items():
                    mass[v] += share * m
            else:  # too deep or too little to matter: shared evenly
                for v in values:
                    mass[v] += share / len(values)
        return mass

    def score(self, *, prompt_tokens: int, reply: str, offset: int, values: list[str], depth: int = 6) -> dict[str, float]:
        """log P(the constrained decode writes value | prompt, reply[:offset]) for each value (they sum to one in
        probability; a value with no mass gets log 1e-12)."""
        llama = self.llama
        generated = [int(t) for t in llama.input_ids[prompt_tokens:llama.n_tokens]]
        # The last whole token that ends at or before the value's start; the characters after it (a quote a token may
        # have merged with the value's first letters) are part of what each value still has to write.
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
        remaining = {value: (lead + value + '"').encode() for value in values}
        mass = self._mass(prompt_tokens + boundary, generated[boundary - 1], remaining, depth)
        return {value: math.log(max(mass[value], 1e-12)) for value in values}


def _closes(rest: bytes) -> bool:
    """Whether what a token writes past a value's closing quote can follow it in JSON (',', '}', a space, a newline or
    the next key's quote), so the token closes the value: '",' and '"}' do, '");' does not."""
    return all(chr(b) in ' \t\r\n,}"' for b in rest)
