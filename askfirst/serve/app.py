"""An OpenAI-compatible HTTP server (``/v1/models``, ``/v1/chat/completions``) over askfirst programs.

Each loaded program variant (uncompiled, or a compiled run) is a model id. The reply's text is the answer;
the route taken and the cited passages travel in an extra ``askfirst`` field of the completion (and of the
final chunk when streaming), so a plain OpenAI client still works and an askfirst-aware one gets the rest.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field

import dspy
from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import ValidationError

from askfirst.programs.common.conversation import ConversationError, to_turns
from askfirst.serve.schema import ChatCompletionRequest

MAX_REQUEST_BYTES = 256 * 1024


@dataclass
class Variant:
    """One servable program with the DSPy settings it runs under; calls are serialised (llama.cpp is not thread-safe)."""

    program: dspy.Module
    lm: dspy.LM
    adapter: dspy.Adapter
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, turns: list[dict]) -> dspy.Prediction:
        with self.lock, dspy.context(lm=self.lm, adapter=self.adapter):
            return self.program(conversation=turns)


def _askfirst_field(pred: dspy.Prediction) -> dict:
    evidence = {p.passage_id: p for p in pred.get("evidence") or []}
    return {
        "route": pred.route, "label": pred.get("label"), "confidence": pred.get("confidence"), "options": list(pred.get("options") or []),
        "citations": [{"id": c, "title": evidence[c].title, "text": evidence[c].text} for c in pred.get("citations") or [] if c in evidence],
        "warnings": list(pred.get("warnings") or []),
    }


def _completion(model: str, pred: dspy.Prediction) -> dict:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": pred.answer}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}, "askfirst": _askfirst_field(pred),
    }


def _chunks(model: str, pred: dspy.Prediction):
    base = {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

    def event(delta: dict, finish: str | None = None, **extra) -> str:
        return "data: " + json.dumps(base | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]} | extra) + "\n\n"

    yield event({"role": "assistant", "content": ""})
    words = pred.answer.split(" ")
    for i, word in enumerate(words):
        yield event({"content": word if i == len(words) - 1 else word + " "})
    yield event({}, "stop", askfirst=_askfirst_field(pred))
    yield "data: [DONE]\n\n"


def create_app(variants: dict[str, Variant], *, max_request_bytes: int = MAX_REQUEST_BYTES) -> FastAPI:
    app = FastAPI(title="askfirst", version="0.1.0")

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError):
        return JSONResponse(status_code=400, content={"error": {"message": f"invalid request: {exc.errors()[:3]}", "type": "invalid_request_error"}})

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException):
        return JSONResponse(status_code=exc.status_code, content={"error": {"message": exc.detail, "type": "invalid_request_error"}})

    @app.get("/v1/models")
    def models() -> dict:
        return {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": "askfirst"} for name in variants]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        body = await request.body()
        if len(body) > max_request_bytes:
            raise HTTPException(413, f"request body is {len(body)} bytes; the limit is {max_request_bytes}")
        try:
            req = ChatCompletionRequest.model_validate_json(body)
        except ValidationError as exc:
            raise HTTPException(400, f"invalid request: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from None
        if req.model not in variants:
            raise HTTPException(404, f"model {req.model!r} not found; available: {', '.join(variants)}")
        # System prompts are the server's business, not the user's: only the conversation reaches the program.
        turns = [{"role": m.role, "content": m.text()} for m in req.messages if m.role in ("user", "assistant")]
        try:
            to_turns(turns)
        except ConversationError as exc:
            raise HTTPException(400, str(exc)) from None
        from starlette.concurrency import run_in_threadpool

        pred = await run_in_threadpool(variants[req.model].answer, turns)
        if req.stream:
            return StreamingResponse(_chunks(req.model, pred), media_type="text/event-stream")
        return _completion(req.model, pred)

    return app
