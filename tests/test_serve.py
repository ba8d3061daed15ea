"""The OpenAI-compatible server, exercised with the real ``openai`` client over loopback."""

import json
import socket
import threading
import time

import dspy
import httpx
import pytest
import uvicorn
from openai import NotFoundError, OpenAI

from askfirst.programs.notes_rag.config import NotesConfig
from askfirst.programs.notes_rag.program import IterativeNotesRAG
from askfirst.serve.app import Variant, create_app
from tests.conftest import SchemaFollowingEngine

SCRIPT = {
    "queries": {"queries": ["lab fee"]},
    "label": {"answering_sentences": ["A laboratory fee of EUR 85 [fees-lab]"], "label": "ANSWERABLE", "confidence": 0.9},
    "cited_ids": {"answer": "The lab fee is EUR 85 per lab course.", "cited_ids": ["fees-lab"]},
}


def _variant(retriever, schema_lm):
    program = IterativeNotesRAG(retriever, NotesConfig(iterations=1, reranker=False), retries=0)
    return Variant(program, schema_lm(SCRIPT), dspy.JSONAdapter())


@pytest.fixture
def server(retriever, schema_lm):
    yield from _serve(create_app({"askfirst": _variant(retriever, schema_lm)}, max_request_bytes=4096))


def _serve(app):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not srv.started and time.time() < deadline:
        time.sleep(0.05)
    assert srv.started, "server did not start"
    yield f"http://127.0.0.1:{port}/v1"
    srv.should_exit = True
    thread.join(timeout=10)


def test_models_and_completion_with_the_openai_client(server):
    client = OpenAI(base_url=server, api_key="unused", max_retries=0)
    assert [m.id for m in client.models.list().data] == ["askfirst"]
    reply = client.chat.completions.create(model="askfirst", messages=[
        {"role": "system", "content": "be brief"}, {"role": "user", "content": "What does tuition cost?"},
        {"role": "assistant", "content": "EUR 4,200."}, {"role": "user", "content": "And the lab fee?"}])
    assert reply.choices[0].message.content == "The lab fee is EUR 85 per lab course."
    extra = reply.model_extra["askfirst"]
    assert extra["route"] == "answer" and extra["citations"][0]["id"] == "fees-lab" and "EUR 85" in extra["citations"][0]["text"]


def test_streaming(server):
    client = OpenAI(base_url=server, api_key="unused", max_retries=0)
    chunks = list(client.chat.completions.create(model="askfirst", messages=[{"role": "user", "content": "Lab fee?"}], stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text == "The lab fee is EUR 85 per lab course."
    assert chunks[-1].choices[0].finish_reason == "stop" and chunks[-1].model_extra["askfirst"]["route"] == "answer"


def test_stream_options_include_usage_ends_with_a_usage_chunk(server):
    client = OpenAI(base_url=server, api_key="unused", max_retries=0)
    chunks = list(client.chat.completions.create(model="askfirst", messages=[{"role": "user", "content": "Lab fee?"}], stream=True,
                                                 stream_options={"include_usage": True}))
    assert chunks[-1].choices == [] and chunks[-1].usage is not None


def test_bad_requests_get_clear_4xx(server):
    client = OpenAI(base_url=server, api_key="unused", max_retries=0)
    with pytest.raises(NotFoundError, match="not found"):
        client.chat.completions.create(model="nope", messages=[{"role": "user", "content": "hi"}])
    cases = [
        (b"{not json", 400), (b'{"model": "askfirst"}', 400), (b'{"model": "askfirst", "messages": []}', 400),
        (b'{"model": "askfirst", "messages": [{"role": "assistant", "content": "hi"}]}', 400),
        (b'{"model": "askfirst", "messages": [{"role": "user", "content": ""}]}', 400),
        (b'{"model": "askfirst", "messages": [{"role": "user", "content": "' + b"x" * 5000 + b'"}]}', 413),
    ]
    for body, status in cases:
        r = httpx.post(f"{server}/chat/completions", content=body, headers={"content-type": "application/json"})
        assert r.status_code == status, (body[:40], r.text)
        assert "error" in r.json()


def _post(server, body: bytes, **headers):
    return httpx.post(f"{server}/chat/completions", content=body, headers={"content-type": "application/json"} | headers)


OK_BODY = b'{"model": "askfirst", "messages": [{"role": "user", "content": "Lab fee?"}]}'


def test_only_json_bodies_start_work(server):
    r = _post(server, OK_BODY, **{"content-type": "text/plain"})
    assert r.status_code == 415 and "application/json" in r.json()["error"]["message"]
    assert _post(server, OK_BODY, **{"content-type": "application/json; charset=utf-8"}).status_code == 200


def test_the_size_limit_holds_before_the_body_is_read(server):
    host, port = server.removeprefix("http://").split("/")[0].split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:  # a huge Content-Length, a tiny body
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 10000000000\r\n\r\n{}")
        assert b" 413 " in sock.recv(4096).split(b"\r\n")[0] + b" "

    def chunks():  # no Content-Length: sent chunked, refused once past the limit
        for _ in range(100):
            yield b"x" * 1024

    assert _post(server, chunks()).status_code == 413
    assert _post(server, OK_BODY).status_code == 200  # and the server goes on


@pytest.mark.parametrize("role", ["tool", "developer"])
def test_roles_it_cannot_answer_are_refused_not_dropped(server, role):
    body = b'{"model": "askfirst", "messages": [{"role": "user", "content": "Lab fee?"}, {"role": "%s", "content": "x"}]}' % role.encode()
    r = _post(server, body)
    assert r.status_code == 400 and role in r.json()["error"]["message"]


def test_an_api_key_is_required_when_set(retriever, schema_lm):
    for url in _serve(create_app({"askfirst": _variant(retriever, schema_lm)}, api_key="s3cret")):
        assert _post(url, OK_BODY).status_code == 401
        assert _post(url, OK_BODY, authorization="Bearer wrong").status_code == 401
        assert httpx.get(f"{url}/models").status_code == 401
        assert _post(url, OK_BODY, authorization="Bearer s3cret").status_code == 200
        client = OpenAI(base_url=url, api_key="s3cret", max_retries=0)
        assert [m.id for m in client.models.list().data] == ["askfirst"]


def test_a_failing_program_is_a_json_error_and_the_server_keeps_serving(retriever, schema_lm):
    class Broken(dspy.Module):
        def forward(self, conversation):
            raise RuntimeError("boom")

    variants = {"askfirst": _variant(retriever, schema_lm), "broken": Variant(Broken(), schema_lm(SCRIPT), dspy.JSONAdapter())}
    for url in _serve(create_app(variants)):
        r = _post(url, OK_BODY.replace(b'"askfirst"', b'"broken"'))
        assert r.status_code == 500 and r.json()["askfirst"]["route"] == "error" and r.json()["error"]["type"] == "server_error"
        assert "boom" not in r.text  # internals stay in the server's log
        assert _post(url, OK_BODY).status_code == 200


class FailedStep(dspy.Module):
    """A program whose step failed: its reply's text is the internal error (step name, pydantic text, raw LM output)."""

    def forward(self, conversation):
        from askfirst.programs.base import Reply

        return Reply.failed(ValueError("step 'assess' failed: 1 validation error for Answer: raw LM reply {'secret': 1}"))


def test_a_failed_step_is_an_error_an_openai_client_raises_never_an_answer(retriever, schema_lm, caplog):
    from openai import APIError, InternalServerError

    variants = {"failed": Variant(FailedStep(), schema_lm(SCRIPT), dspy.JSONAdapter())}
    for url in _serve(create_app(variants)):
        client = OpenAI(base_url=url, api_key="unused", max_retries=0)
        messages = [{"role": "user", "content": "What does tuition cost?"}]
        with pytest.raises(InternalServerError) as exc:
            client.chat.completions.create(model="failed", messages=messages)
        assert "validation error" not in str(exc.value) and "secret" not in str(exc.value)
        with pytest.raises(APIError) as exc:
            for _ in client.chat.completions.create(model="failed", messages=messages, stream=True):
                pass
        assert "validation error" not in str(exc.value) and "could not answer" in str(exc.value)
    assert "validation error" in caplog.text  # the details are logged, server-side


def test_with_an_api_key_the_api_description_is_not_public_and_the_body_types_are_strict(retriever, schema_lm):
    for url in _serve(create_app({"askfirst": _variant(retriever, schema_lm)}, api_key="s3cret")):
        root = url.removesuffix("/v1")
        assert httpx.get(f"{root}/docs").status_code == 404 and httpx.get(f"{root}/openapi.json").status_code == 404
        body = OK_BODY.replace(b'"model"', b'"stream": "yes", "model"')
        assert _post(url, body, authorization="Bearer s3cret").status_code == 400
    for url in _serve(create_app({"askfirst": _variant(retriever, schema_lm)})):
        assert httpx.get(f"{url.removesuffix('/v1')}/openapi.json").status_code == 200


class SlowSteps(dspy.Module):
    """``steps`` LM steps, each 0.1 s on ``SlowEngine``: seconds of work unless the request is cancelled."""

    def __init__(self, steps: int):
        super().__init__()
        self.steps = steps
        self.step = dspy.Predict("question -> answer")

    def forward(self, conversation):
        from askfirst.programs.common.robust import call_predictor

        for _ in range(self.steps):
            out = call_predictor(self.step, "slow", retries=0, question=conversation[-1]["content"])
        return dspy.Prediction(route="answer", answer=out.answer, citations=[], evidence=[])


class SlowEngine(SchemaFollowingEngine):
    def complete(self, request):
        time.sleep(0.1)
        return super().complete(request)


def test_a_client_that_disconnects_cancels_its_work_and_frees_the_lm(retriever, schema_lm, caplog):
    import gc

    engine = SlowEngine({})
    slow = Variant(SlowSteps(40), dspy.LM("test/slow", engine=engine, cache=False), dspy.JSONAdapter())
    for url in _serve(create_app({"slow": slow, "askfirst": _variant(retriever, schema_lm)})):
        with pytest.raises(httpx.TimeoutException):
            _post_with(url, OK_BODY.replace(b'"askfirst"', b'"slow"'), timeout=0.5)  # the client gives up and disconnects
        time.sleep(1.0)
        calls = engine.calls
        time.sleep(0.6)
        assert engine.calls == calls < 40  # the work stopped, long before its forty steps
        assert not slow.lock.locked()
        started = time.perf_counter()
        assert _post(url, OK_BODY).status_code == 200 and time.perf_counter() - started < 5
        gc.collect()  # a task whose exception nobody retrieved is logged when it is collected
        assert "never retrieved" not in caplog.text  # the cancelled work's end is one info line, not a traceback


def _post_with(server, body: bytes, *, timeout: float):
    return httpx.post(f"{server}/chat/completions", content=body, headers={"content-type": "application/json"}, timeout=timeout)


class PiecewiseEngine(SchemaFollowingEngine):
    """Streams each reply in pieces of four characters, as a server streaming tokens would, with token counts."""

    def complete(self, request):
        from dataclasses import replace

        from dspy.lm15 import Usage

        return replace(super().complete(request), usage=Usage(input_tokens=11, output_tokens=7, total_tokens=18))

    def stream(self, request):
        from dspy.lm15 import StreamDeltaEvent, StreamEndEvent, StreamStartEvent, TextDelta

        response = self.complete(request)
        text = response.message.parts[0].text
        yield StreamStartEvent(id=None, model="piecewise")
        for i in range(0, len(text), 4):
            yield StreamDeltaEvent(delta=TextDelta(text=text[i:i + 4], part_index=0))
        yield StreamEndEvent(finish_reason="stop", usage=response.usage)


def _stream_events(url, script=None):
    """Every chunk of a streamed reply to "Lab fee?" as JSON, from the raw event stream."""
    with httpx.stream("POST", f"{url}/chat/completions", json={"model": "askfirst", "stream": True,
                                                              "messages": [{"role": "user", "content": "Lab fee?"}]}) as r:
        lines = [line.removeprefix("data: ") for line in r.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(line) for line in lines[:-1]]


def _piecewise_server(retriever, script):
    program = IterativeNotesRAG(retriever, NotesConfig(iterations=1, reranker=False), retries=0)
    lm = dspy.LM("test/piecewise", engine=PiecewiseEngine(script), cache=False)
    return _serve(create_app({"askfirst": Variant(program, lm, dspy.JSONAdapter())}))


def test_a_streamed_reply_sends_the_route_first_then_the_text_as_the_lm_writes_it(retriever):
    for url in _piecewise_server(retriever, SCRIPT):
        chunks = _stream_events(url)
        texts = [c["choices"][0]["delta"].get("content") for c in chunks]
        events = [c.get("askfirst", {}).get("event") for c in chunks]
        first_text = next(i for i, t in enumerate(texts) if t)
        route = next(i for i, e in enumerate(events) if e and "route" in e)
        assert route < first_text and events[route] == {"stage": "Responders", "route": "answer"}
        assert next(e for e in events if e) == {"stage": "queued"} and {"stage": "IterativeNotesRAG"} in events[:route]  # serialised: the lock first
        assert "".join(t or "" for t in texts) == "The lab fee is EUR 85 per lab course."
        assert sum(1 for t in texts if t) >= 5  # the text arrived in the LM's pieces, not in one
        assert chunks[-1]["choices"][0]["finish_reason"] == "stop" and chunks[-1]["askfirst"]["route"] == "answer"
        assert chunks[-1]["usage"] == {"prompt_tokens": 33, "completion_tokens": 21, "total_tokens": 54}  # three LM calls


def test_a_streamed_partial_answer_ends_with_what_the_documents_do_not_say(retriever):
    partial = {"queries": SCRIPT["queries"], "label": {"answering_sentences": [], "label": "PARTIAL", "confidence": 0.9},
               "missing": {"answer": "The lab fee is EUR 85.", "missing": "the textbook price", "cited_ids": ["fees-lab"]}}
    for url in _piecewise_server(retriever, partial):
        chunks = _stream_events(url)
        text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
        assert text == "The lab fee is EUR 85. What the documents do not say: the textbook price"
        assert chunks[-1]["askfirst"]["route"] == "partial" and "answer" not in chunks[-1]["askfirst"]


@pytest.mark.parametrize("size", [1, 3, 7])
def test_the_reply_field_is_decoded_as_it_arrives_in_pieces_of_any_size(size):
    from types import SimpleNamespace

    from askfirst.serve.streaming import JSONStringListener

    def chunk(text):
        return SimpleNamespace(choices=[SimpleNamespace(delta=SimpleNamespace(content=text))])

    reply = json.dumps({"answer": 'Fee: "EUR 85"\\ per course\u00e9 \u2713', "cited_ids": ["answer"]}, ensure_ascii=True)
    listener = JSONStringListener("answer", predict=None, predict_name="responders.complete")
    pieces = [listener.receive(chunk(reply[i:i + size])) for i in range(0, len(reply), size)]
    pieces += [listener.receive(chunk(reply[i:i + size])) for i in range(0, len(reply), size)]  # a retried step's reply
    texts = [p.chunk for p in pieces if p is not None]
    assert "".join(texts) == 2 * 'Fee: "EUR 85"\\ per course\u00e9 \u2713'
    assert sum(p.is_last_chunk for p in pieces if p is not None) == 2


def test_a_client_that_leaves_a_stream_while_it_waits_for_the_lm_is_never_run():
    """The local LM answers one request at a time; a streamed request queued behind another gives up when its client
    leaves, instead of running once the LM is free."""
    engine = SlowEngine({})
    slow = Variant(SlowSteps(15), dspy.LM("test/slow", engine=engine, cache=False), dspy.JSONAdapter())
    for url in _serve(create_app({"slow": slow})):
        body = {"model": "slow", "messages": [{"role": "user", "content": "Lab fee?"}]}
        first = threading.Thread(target=httpx.post, args=(f"{url}/chat/completions",), kwargs={"json": body, "timeout": 30})
        first.start()
        time.sleep(0.3)  # the first request holds the LM
        with httpx.stream("POST", f"{url}/chat/completions", json=body | {"stream": True}) as r:
            assert any('"event"' in line for line in r.iter_lines())  # read up to the first stage event: the program has
            # started and waits for the LM; the client leaves
        first.join()
        time.sleep(0.5)
        assert engine.calls == 15 and not slow.lock.locked()  # the first request's steps only


def test_a_client_that_drops_while_sending_its_body_is_one_quiet_499(retriever, schema_lm):
    import asyncio

    app = create_app({"askfirst": _variant(retriever, schema_lm)})
    messages = [{"type": "http.request", "body": b'{"model": "ask', "more_body": True}, {"type": "http.disconnect"}]
    sent = []

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": "/v1/chat/completions", "raw_path": b"/v1/chat/completions", "query_string": b"", "root_path": "",
             "headers": [(b"content-type", b"application/json")], "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}
    asyncio.run(app(scope, receive, send))  # before: ClientDisconnect escaped the app, and uvicorn logged its traceback
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 499


def test_serving_keeps_no_lm_history_or_trace(retriever, schema_lm):
    from dspy.clients.base_lm import GLOBAL_HISTORY

    variant = _variant(retriever, schema_lm)
    before, trace = len(GLOBAL_HISTORY), len(dspy.settings.trace)
    for url in _serve(create_app({"askfirst": variant})):
        for _ in range(3):
            assert _post(url, OK_BODY).status_code == 200
    # a long-running server would otherwise hold the inputs and replies of its last 10,000 LM calls and steps
    assert variant.lm.history == [] and len(GLOBAL_HISTORY) == before and len(dspy.settings.trace) == trace
    assert all(not getattr(m, "history", None) for _, m in variant.program.named_sub_modules())
