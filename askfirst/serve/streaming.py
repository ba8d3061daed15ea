"""Streaming a program's reply as its responder writes it, with DSPy's own streaming machinery.

``dspy.streamify`` runs the program with a stream open: every LM call is streamed by its engine (the llama.cpp engine
yields one token's text at a time), a ``StreamListener`` per responder picks its reply field out of the JSON the LM is
writing (``JSONStringListener``: DSPy's own JSON listener sends the value's raw JSON, quotes and escapes included, and
with small pieces ran past the field's end into the next key; measured in tests/test_serve.py), and a status-message provider reports each stage as it starts, the route with the responders. What is
streamed is the text as written; the finished reply can add to it (a partial answer's "what the documents do not
say"), and when a step answered from the cache or without an LM (a divergence clarification, "I don't know") nothing
was streamed, so the server sends the rest of the final answer when the program returns.
"""

from __future__ import annotations

import json
import re

import dspy
from dspy.streaming import StatusMessageProvider, StreamListener, StreamResponse

from askfirst.programs.common.responders import Responders

# The responders' predictors whose output field is the reply's text.
REPLY_FIELDS = {"complete": "answer", "partial": "answer", "clarify": "clarifying_question"}


def reply_listeners(program: dspy.Module) -> list[StreamListener]:
    """One listener per responder predictor of ``program`` (``…responders.complete`` and the like), on its reply field."""
    listeners = []
    for name, predictor in program.named_predictors():
        owner, _, leaf = name.rpartition(".")
        if owner.rpartition(".")[2] == "responders" and leaf in REPLY_FIELDS:
            listeners.append(JSONStringListener(REPLY_FIELDS[leaf], predict=predictor, predict_name=name))
    return listeners


class JSONStringListener(StreamListener):
    """Streams the decoded text of one string field of a JSON reply as the LM writes it.

    It finds ``"<field>": "`` in the text so far, then decodes the string (escapes included) up to its closing quote,
    holding back an escape sequence until it is whole. After the closing quote it looks for the field again, so a
    retried step's second reply is streamed too. A reply in another format is not streamed (the server sends the
    final text when the program returns).
    """

    def __init__(self, field: str, *, predict, predict_name: str):
        super().__init__(signature_field_name=field, predict=predict, predict_name=predict_name, allow_reuse=True)
        self._start = re.compile(r'"' + re.escape(field) + r'"\s*:\s*"')
        self._raw, self._pos = "", None

    def receive(self, chunk) -> StreamResponse | None:
        try:
            text = chunk.choices[0].delta.content
        except (AttributeError, IndexError):
            return None
        if not text:
            return None
        self._raw += text
        if self._pos is None:
            found = self._start.search(self._raw)
            if found is None:
                return None
            self._pos, self.stream_start = found.end(), True
        out, i, raw, done = [], self._pos, self._raw, False
        while i < len(raw):
            char = raw[i]
            if char == '"':
                done, i = True, i + 1
                break
            if char == "\\":
                width = 6 if raw[i + 1 : i + 2] == "u" else 2
                if i + width > len(raw):
                    break  # the rest of the escape is still to come
                out.append(json.loads(f'"{raw[i : i + width]}"'))
                i += width
                continue
            out.append(char)
            i += 1
        if done:  # look for the field again in what follows (a retry's reply)
            self._raw, self._pos = raw[i:], None
        else:
            self._pos = i
        self.stream_end = done
        return StreamResponse(self.predict_name, self.signature_field_name, "".join(out), is_last_chunk=done) if out or done else None

    def finalize(self) -> None:
        return None


class StageMessages(StatusMessageProvider):
    """A JSON status message when a stage (any module but a single predictor) starts: ``{"stage": <its class>}`` (or
    its ``stage_name``: "queued" while a serialised variant waits for its LM), and for the responders also the route
    the program chose (before any text of the reply)."""

    def module_start_status_message(self, instance, inputs: dict) -> str | None:
        if isinstance(instance, dspy.Predict):
            return None
        message = {"stage": getattr(instance, "stage_name", None) or type(instance).__name__}
        if isinstance(instance, Responders):
            message["route"] = (inputs.get("kwargs") or inputs).get("route")  # Module.__call__(*args, **kwargs)
        return json.dumps(message)

    def module_end_status_message(self, outputs) -> None:
        return None

    def lm_start_status_message(self, instance, inputs) -> None:
        return None

    def lm_end_status_message(self, outputs) -> None:
        return None

    def tool_start_status_message(self, instance, inputs) -> None:
        return None

    def tool_end_status_message(self, outputs) -> None:
        return None


def remaining_text(streamed: str, answer: str) -> str:
    """What of the final ``answer`` the client has not been sent, given the ``streamed`` text: the rest when the stream
    was its beginning (all of it when nothing streamed); nothing when the stream diverged (a retried step streamed a
    reply that was then replaced), whose final answer travels in the closing chunk's ``askfirst.answer``."""
    return answer[len(streamed):] if answer.startswith(streamed) else ""
