"""An OpenAI-compatible HTTP server (``/v1/models``, ``/v1/chat/completions``) over askfirst programs.

Each loaded program variant (uncompiled, or a compiled run) is a model id. The reply's text is the answer;
the route taken and the cited passages travel in an extra ``askfirst`` field of the completion (and of the
final chunk when streaming), so a plain OpenAI client still works and an askfirst-aware one gets the rest.
A streamed reply sends each stage as it starts and the route before the text (chunks with an empty delta and
``askfirst.event``), then the responder's text as the LM writes it (``askfirst.serve.streaming``).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import dspy
from dspy.streaming import StatusMessage, StreamResponse
from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import ValidationError
from starlette.requests import ClientDisconnect

from askfirst.cancellation import SETTING as CANCEL_SETTING
from askfirst.cancellation import Cancelled, acquire
from askfirst.programs.common.conversation import ConversationError, to_turns
from askfirst.serve.schema import ChatCompletionRequest
from askfirst.serve.streaming import StageMessages, remaining_text, reply_listeners

MAX_REQUEST_BYTES = 256 * 1024
DISCONNECT_POLL_SECONDS = 0.25
SUPPORTED_ROLES = ("system", "user", "assistant")
logger = logging.getLogger(__name__)


@dataclass
class Variant:
    """One servable program with the DSPy settings it runs under.

    Attributes:
        serialise: Answer one request at a time. Needed for the in-process llama.cpp LM (a ``Llama`` object is
            not thread-safe, and two calls on 2 cores are slower than one after the other); a remote LM
            serves concurrent requests.
    """

    program: dspy.Module
    lm: dspy.LM
    adapter: dspy.Adapter
    serialise: bool = True
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _context(self, cancel: threading.Event):
        # No DSPy history or trace: a server would keep its last 10,000 LM calls' and steps' inputs and replies, unread.
        return dspy.context(lm=self.lm, adapter=self.adapter, track_usage=True, disable_history=True, max_trace_size=0,
                            **{CANCEL_SETTING: cancel})

    def _runnable(self) -> dspy.Module:
        return OneAtATime(self.program, self.lock) if self.serialise else self.program

    def answer(self, turns: list[dict], cancel: threading.Event | None = None) -> dspy.Prediction:
        """The program's reply; with ``cancel`` set (the client left, the server stops) it stops at its next LM call."""
        with self._context(cancel or threading.Event()):
            return self._runnable()(conversation=turns)

    async def stream(self, turns: list[dict], cancel: threading.Event) -> AsyncIterator:
        """``dspy.streamify``'s items for the reply: stage messages, the responder's text as it is written, then the
        reply (a ``dspy.Prediction``). The program runs in a worker thread; ``cancel`` stops it as ``answer`` does."""
        streamer = dspy.streamify(self._runnable(), status_message_provider=StageMessages(), stream_listeners=reply_listeners(self.program))
        with self._context(cancel):
            async for item in streamer(conversation=turns):
                yield item


class OneAtATime(dspy.Module):
    """Runs ``program`` holding ``lock``; a request queued behind another gives up when it is cancelled."""

    stage_name = "queued"  # what a stream reports while this waits for the lock, before the program's own stages

    def __init__(self, program: dspy.Module, lock: threading.Lock):
        super().__init__()
        self.program, self.lock = program, lock

    def forward(self, **inputs):
        acquire(self.lock)
        try:
            return self.program(**inputs)
        finally:
            self.lock.release()


async def read_bounded_body(request: Request, limit: int) -> bytes:
    """The request body, refused with 413 as soon as it is known to exceed ``limit``: from Content-Length
    before anything is read, else (a chunked body) once the bytes read pass the limit."""
    length = request.headers.get("content-length")
    if length is not None:
        if not length.isdigit():
            raise HTTPException(400, "Content-Length must be a number")
        if int(length) > limit:
            raise HTTPException(413, f"request body is {length} bytes; the limit is {limit}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"request body exceeds the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def check_api_key(request: Request, api_key: str | None) -> None:
    """401 unless the request carries ``api_key`` as its bearer token (no key configured: every request passes)."""
    if api_key is None:
        return
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), api_key.encode()):
        raise HTTPException(401, "missing or wrong API key (send 'Authorization: Bearer <key>')")


def check_json(request: Request) -> None:
    """415 unless the body is declared JSON."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":  # a web page's plain-text form post cannot start LM work
        raise HTTPException(415, f"Content-Type must be application/json, not {content_type or 'missing'!r}")


def _askfirst_field(pred: dspy.Prediction) -> dict:
    evidence = {p.passage_id: p for p in pred.get("evidence") or []}
    return {
        "route": pred.route, "label": pred.get("label"), "confidence": pred.get("confidence"), "options": list(pred.get("options") or []),
        "citations": [{"id": c, "title": evidence[c].title, "text": evidence[c].text} for c in pred.get("citations") or [] if c in evidence],
        "warnings": list(pred.get("warnings") or []),
    }


def _usage(pred: dspy.Prediction) -> dict:
    """The real token counts of the reply's LM calls (all steps, all LMs)."""
    usage = (pred.get_lm_usage() if hasattr(pred, "get_lm_usage") else None) or {}
    prompt = sum(u.get("prompt_tokens") or 0 for u in usage.values())
    completion = sum(u.get("completion_tokens") or 0 for u in usage.values())
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


FAILED_MESSAGE = "askfirst could not answer this request (a step of the program failed); the server's log has the details"


def _failure(pred: dspy.Prediction) -> bool:
    """Whether ``pred`` is a failed reply (a step raised): its text is an internal error, never shown to a user."""
    if pred.get("route") != "error":
        return False
    logger.error("a step failed: %s", "; ".join(map(str, pred.get("warnings") or [])) or pred.get("answer"))
    return True


def _abandoned(work: asyncio.Future) -> None:
    """Collect the outcome of work nobody waits for any more, so its end is not an unretrieved-exception traceback."""
    if not work.cancelled() and (exc := work.exception()) is not None and not isinstance(exc, Cancelled):
        logger.warning("a cancelled request's work failed: %r", exc)


def _server_error() -> dict:
    return {"error": {"message": FAILED_MESSAGE, "type": "server_error", "code": "program_failed"}}


def _completion(model: str, pred: dspy.Prediction) -> dict:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": pred.answer}, "finish_reason": "stop"}],
        "usage": _usage(pred), "askfirst": _askfirst_field(pred),
    }


async def _chunks(model: str, variant: Variant, turns: list[dict], *, include_usage: bool = False):
    """The reply as server-sent chunks: stage events, the text as it is written, then the closing chunk with the
    route, citations and token usage. A client that leaves mid-stream cancels the program's work."""
    base = {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

    def event(delta: dict, finish: str | None = None, **extra) -> str:
        return "data: " + json.dumps(base | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]} | extra) + "\n\n"

    cancel, streamed, pred = threading.Event(), "", None
    yield event({"role": "assistant", "content": ""})
    try:
        async for item in variant.stream(turns, cancel):
            if isinstance(item, StatusMessage):
                yield event({}, askfirst={"event": json.loads(item.message)})
            elif isinstance(item, StreamResponse) and item.chunk:
                streamed += item.chunk
                yield event({"content": item.chunk})
            elif isinstance(item, dspy.Prediction):
                pred = item
    except Cancelled:
        return
    except Exception:  # noqa: BLE001 - the headers are sent: the failure is an error event, which OpenAI clients raise
        logger.exception("streamed request failed")
        pred = None
    finally:
        cancel.set()  # after the reply this stops nothing; a client gone mid-stream stops the work at its next step
    if pred is None or _failure(pred):
        yield "data: " + json.dumps(_server_error()) + "\n\n"
        yield "data: [DONE]\n\n"
        return
    if rest := remaining_text(streamed, pred.answer):
        yield event({"content": rest})
    extra = {} if pred.answer.startswith(streamed) else {"answer": pred.answer}
    yield event({}, "stop", askfirst=_askfirst_field(pred) | extra, usage=_usage(pred))
    if include_usage:  # as OpenAI sends it: a last chunk with no choices
        yield "data: " + json.dumps(base | {"choices": [], "usage": _usage(pred)}) + "\n\n"
    yield "data: [DONE]\n\n"


def create_app(variants: dict[str, Variant], *, max_request_bytes: int = MAX_REQUEST_BYTES, api_key: str | None = None) -> FastAPI:
    """The app serving ``variants``; with ``api_key`` every request must carry it as a bearer token."""
    # With a key, the API's description is not public either: /docs and /openapi.json are off.
    public = api_key is None
    app = FastAPI(title="askfirst", version="0.1.0", docs_url="/docs" if public else None, redoc_url="/redoc" if public else None,
                  openapi_url="/openapi.json" if public else None)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError):
        return JSONResponse(status_code=400, content={"error": {"message": f"invalid request: {exc.errors()[:3]}", "type": "invalid_request_error"}})

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException):
        return JSONResponse(status_code=exc.status_code, content={"error": {"message": exc.detail, "type": "invalid_request_error"}})

    @app.get("/v1/models")
    def models(request: Request) -> dict:
        check_api_key(request, api_key)
        return {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": "askfirst"} for name in variants]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        check_api_key(request, api_key)
        check_json(request)
        try:
            body = await read_bounded_body(request, max_request_bytes)
        except ClientDisconnect:
            logger.info("client disconnected while sending its request")
            return Response(status_code=499)
        try:
            req = ChatCompletionRequest.model_validate_json(body)
        except ValidationError as exc:
            raise HTTPException(400, f"invalid request: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from None
        if req.model not in variants:
            raise HTTPException(404, f"model {req.model!r} not found; available: {', '.join(variants)}")
        unsupported = sorted({m.role for m in req.messages} - set(SUPPORTED_ROLES))
        if unsupported:  # dropping them would answer an earlier turn than the client meant
            raise HTTPException(400, f"message role(s) {unsupported} are not supported; askfirst answers user turns (system, user, assistant)")
        # System prompts are the server's business, not the user's: only the conversation reaches the program.
        turns = [{"role": m.role, "content": m.text()} for m in req.messages if m.role in ("user", "assistant")]
        try:
            to_turns(turns)
        except ConversationError as exc:
            raise HTTPException(400, str(exc)) from None
        if req.stream:
            include_usage = bool(req.stream_options and req.stream_options.include_usage)
            return StreamingResponse(_chunks(req.model, variants[req.model], turns, include_usage=include_usage), media_type="text/event-stream")
        from starlette.concurrency import run_in_threadpool

        cancel = threading.Event()
        work = asyncio.ensure_future(run_in_threadpool(variants[req.model].answer, turns, cancel))
        try:
            while not work.done():  # a client that disconnects cancels its work, which frees the LM for the next one
                await asyncio.wait({work}, timeout=DISCONNECT_POLL_SECONDS)
                if not work.done() and await request.is_disconnected():
                    cancel.set()
                    work.add_done_callback(_abandoned)
                    logger.info("client disconnected; its request is cancelled")
                    return Response(status_code=499)
            pred = work.result()
        except asyncio.CancelledError:  # the server is shutting down
            cancel.set()
            work.add_done_callback(_abandoned)
            raise
        except Cancelled:
            return Response(status_code=499)
        except Exception:  # noqa: BLE001 - one request's failure is its error reply; the server keeps serving
            logger.exception("request failed")
            pred = None
        if pred is None or _failure(pred):
            return JSONResponse(status_code=500, content=_server_error() | {"askfirst": {"route": "error"}})
        return _completion(req.model, pred)

    return app
