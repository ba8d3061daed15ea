"""An in-process llama.cpp engine for DSPy whose output is constrained to the Signature's JSON schema.

DSPy's ``JSONAdapter`` asks an engine that declares ``supports_response_schema`` for the output
fields' JSON schema; llama.cpp compiles it to a grammar, so even a 0.5B model always emits JSON
with exactly the Signature's keys.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections import OrderedDict
from pathlib import Path

from dspy._vendor.lm15.types import TokenLogprob, TopLogprob  # not re-exported by dspy.lm15
from dspy.lm15 import StreamDeltaEvent, StreamEndEvent, StreamStartEvent, TextDelta
from dspy.clients.engines.base import validate_request
from dspy.lm15 import ContextLengthError, Message, Response, TextPart, Usage, response_to_events

from askfirst.cancellation import acquire, check_cancelled
from askfirst.lm.label_scoring import ValueScorer, enum_fields, normalise, value_offset


def _text(parts) -> str:
    if parts is None:
        return ""
    return parts if isinstance(parts, str) else "".join(getattr(p, "text", "") or "" for p in parts)


# llama.cpp refuses a grammar repetition above 1000, and llama-cpp-python then crashes the process
# (measured: maxLength 1000 works, 1024 segfaults), so no bound may exceed this.
MAX_GRAMMAR_REPETITION = 1000


def bound_strings(schema, max_chars: int):
    """A copy of a JSON schema in which every free string without a ``maxLength`` gets ``max_chars``, and no
    ``maxLength`` exceeds what llama.cpp's grammar accepts.

    A small model can loop inside a string until ``max_tokens`` cuts the JSON open; a bounded string is
    closed by the grammar, so the reply still parses (and the text is merely shortened).
    """
    if isinstance(schema, list):
        return [bound_strings(s, max_chars) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: bound_strings(v, max_chars) for k, v in schema.items()}
    if out.get("type") == "string" and "enum" not in out and "const" not in out:
        out["maxLength"] = min(out.get("maxLength", max_chars), MAX_GRAMMAR_REPETITION)
    return out


class LlamaCppEngine:
    """DSPy engine (``complete``/``stream``/``close``) running a GGUF model with llama-cpp-python.

    Each distinct system prompt (one per Signature) gets its own llama.cpp context, up to ``contexts``
    of them, least recently used first out. llama.cpp skips re-reading a prompt prefix it already holds,
    so a step's long instruction block is processed once instead of on every call; the weights are
    memory-mapped and shared, so an extra context costs only its KV cache. Calls are serialised
    because a ``Llama`` object is not thread-safe.
    """

    supports_response_schema = True
    scores_labels = True  # see ``_label_logprobs``
    # ``logprobs``: the reply's label fields (a Signature's Literal outputs) come back scored, one entry per field: the
    # chosen value with every allowed value as an alternative (see ``label_scoring``); other tokens are not reported.
    supported_params = frozenset({"temperature", "max_tokens", "top_p", "stop", "seed", "response_format", "logprobs", "top_logprobs"})

    def __init__(self, model_path: str | Path, *, n_ctx: int = 4096, n_threads: int = 2, seed: int = 0, contexts: int = 6,
                 max_text_chars: int = 800):
        self.model_path = str(model_path)
        self.max_text_chars = max_text_chars
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.seed = seed
        self.contexts = contexts
        self._llamas: OrderedDict[str, object] = OrderedDict()
        self._lock = threading.Lock()
        self.calls = 0

    def _model(self, prefix: str):
        key = hashlib.sha256(prefix.encode()).hexdigest()
        if key in self._llamas:
            self._llamas.move_to_end(key)
            return self._llamas[key]
        from llama_cpp import Llama

        if len(self._llamas) >= self.contexts:
            self._llamas.popitem(last=False)[1].close()
        llama = Llama(model_path=self.model_path, n_ctx=self.n_ctx, n_threads=self.n_threads, seed=self.seed, verbose=False)
        self._llamas[key] = llama
        return llama

    def _response_format(self, fmt) -> dict | None:
        if not fmt:
            return None
        if fmt.get("type") == "json_schema":
            return {"type": "json_object", "schema": bound_strings(fmt["schema"], self.max_text_chars)}
        return {"type": "json_object"}

    def _chat_args(self, request) -> tuple[list[dict], dict]:
        """The chat messages and llama.cpp sampling options of a DSPy request."""
        validate_request(request)
        messages = []
        if request.system is not None:
            messages.append({"role": "system", "content": _text(request.system)})
        messages.extend({"role": m.role, "content": m.text or ""} for m in request.messages)
        cfg = request.config
        kwargs = {
            "temperature": 0.0 if cfg.temperature is None else cfg.temperature,
            "max_tokens": cfg.max_tokens or 512,
            "response_format": self._response_format(cfg.response_format),
            "stop": list(cfg.stop) or None,
            "seed": cfg.seed if cfg.seed is not None else self.seed,
        }
        if cfg.top_p is not None:
            kwargs["top_p"] = cfg.top_p
        return messages, kwargs

    def _create(self, llama, messages: list[dict], kwargs: dict, *, stream: bool = False):
        try:
            return llama.create_chat_completion(messages=messages, stream=stream, **kwargs)
        except ValueError as exc:
            if "context window" in str(exc) or "exceed" in str(exc):
                raise ContextLengthError(f"{exc} (n_ctx={self.n_ctx}; shorten inputs or raise lm.n_ctx)") from None
            raise

    def complete(self, request) -> Response:
        messages, kwargs = self._chat_args(request)
        cfg = request.config
        # llama-cpp-python's chat completion takes no stopping criteria, so a cancelled request stops before or
        # after a call, not inside one: it never waits for the lock, and the reply of a call it was in is dropped.
        acquire(self._lock)
        with self._lock_held():
            llama = self._model(messages[0]["content"])
            out = self._create(llama, messages, kwargs)
            self.calls += 1
            choice = out["choices"][0]
            usage = out.get("usage") or {}
            logprobs = None
            if cfg.logprobs is not None and cfg.response_format and cfg.response_format.get("type") == "json_schema":
                logprobs = self._label_logprobs(llama, cfg.response_format["schema"], choice["message"].get("content") or "",
                                                usage.get("prompt_tokens") or 0)
        check_cancelled()  # nobody waits for this reply any more
        return Response(
            id=out.get("id"),
            model=Path(self.model_path).name,
            message=Message.assistant([TextPart(choice["message"].get("content") or "")]),
            finish_reason="length" if choice.get("finish_reason") == "length" else "stop",
            usage=Usage(input_tokens=usage.get("prompt_tokens"), output_tokens=usage.get("completion_tokens"), total_tokens=usage.get("total_tokens")),
            logprobs=logprobs,
        )

    @staticmethod
    def _label_logprobs(llama, schema: dict, reply: str, prompt_tokens: int) -> tuple[TokenLogprob, ...] | None:
        """One entry per label field of ``reply``: the chosen value's log-probability among the allowed values, with
        each value's as an alternative (renormalised over the values, so they sum to one in probability)."""
        entries = []
        for field, values in enum_fields(schema).items():
            offset = value_offset(reply, field)
            if offset is None or not prompt_tokens:
                continue
            chosen = next((v for v in values if reply.startswith(v + '"', offset)), None)
            if chosen is None:
                continue
            scores = normalise(ValueScorer(llama).score(prompt_tokens=prompt_tokens, reply=reply, offset=offset, values=values))
            top = tuple(TopLogprob(token=v, logprob=scores[v]) for v in sorted(values, key=scores.get, reverse=True))
            entries.append(TokenLogprob(token=chosen, logprob=scores[chosen], top=top))
        return tuple(entries) or None

    @contextlib.contextmanager
    def _lock_held(self):
        try:
            yield
        finally:
            self._lock.release()

    def stream(self, request):
        """The reply as llama.cpp writes it, one token's text per delta (DSPy's stream listeners pick a field out of
        them). A request for label log-probabilities is answered whole: they are scored on the finished reply."""
        if request.config.logprobs is not None:
            yield from response_to_events(self.complete(request))
            return
        messages, kwargs = self._chat_args(request)
        acquire(self._lock)
        with self._lock_held():
            llama = self._model(messages[0]["content"])
            chunks = self._create(llama, messages, kwargs, stream=True)
            self.calls += 1
            yield StreamStartEvent(id=None, model=Path(self.model_path).name)
            finish, completion = "stop", 0
            for chunk in chunks:
                check_cancelled()  # between tokens: a stream nobody reads any more stops here
                choice = chunk["choices"][0]
                text = (choice.get("delta") or {}).get("content")
                if text:
                    completion += 1  # llama-cpp-python streams one token per chunk
                    yield StreamDeltaEvent(delta=TextDelta(text=text, part_index=0))
                if choice.get("finish_reason"):
                    finish = "length" if choice["finish_reason"] == "length" else "stop"
            prompt = llama.n_tokens - completion  # the context holds the prompt, then the reply's tokens
        yield StreamEndEvent(finish_reason=finish, usage=Usage(input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion))

    def close(self) -> None:
        with self._lock:
            while self._llamas:
                self._llamas.popitem()[1].close()

    def dump_state(self) -> dict:
        return {"model_path": self.model_path, "n_ctx": self.n_ctx, "n_threads": self.n_threads, "seed": self.seed,
                "contexts": self.contexts, "max_text_chars": self.max_text_chars}

    @classmethod
    def load_state(cls, state: dict) -> LlamaCppEngine:
        return cls(state["model_path"], n_ctx=state["n_ctx"], n_threads=state["n_threads"], seed=state["seed"],
                   contexts=state.get("contexts", 6), max_text_chars=state.get("max_text_chars", 800))
