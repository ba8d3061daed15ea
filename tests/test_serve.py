"""The OpenAI-compatible server, exercised with the real ``openai`` client over loopback."""

import socket
import threading
import time

import dspy
import httpx
import pytest
import uvicorn
from openai import NotFoundError, OpenAI

from askfirst.config import ProgramConfig
from askfirst.programs.notes_rag.program import IterativeNotesRAG
from askfirst.serve.app import Variant, create_app

SCRIPT = {
    "queries": {"queries": ["lab fee"]},
    "label": {"answering_sentences": ["A laboratory fee of EUR 85 [fees-lab]"], "label": "ANSWERABLE", "confidence": 0.9},
    "cited_ids": {"answer": "The lab fee is EUR 85 per lab course.", "cited_ids": ["fees-lab"]},
}


@pytest.fixture
def server(retriever, schema_lm):
    program = IterativeNotesRAG(retriever, ProgramConfig(iterations=1, reranker=False), retries=0)
    app = create_app({"askfirst": Variant(program, schema_lm(SCRIPT), dspy.JSONAdapter())}, max_request_bytes=4096)
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
