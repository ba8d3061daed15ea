"""Embeddings from an OpenAI-compatible embedding server (the bench's mock on 127.0.0.1), and an index built with them."""

import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from askfirst.config import load_config
from askfirst.datasets.corpus import Document
from askfirst.retrieval.embedder import EmbedderError, embedder_for, is_endpoint_model, resolve_device
from askfirst.retrieval.endpoint_embedder import EndpointEmbedder

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from mock_lm_server import MockLM, mock_vector, serve  # noqa: E402


@pytest.fixture(scope="module")
def server():
    httpd = serve(0, 0.01, dim=16)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def test_vectors_come_back_normalised_and_in_order_across_concurrent_batches(server):
    embedder = EndpointEmbedder("openai/mock", api_base=server, concurrency=4)
    texts = [f"text {i}" for i in range(50)]
    before = MockLM.calls
    vectors = embedder.embed(texts, batch_size=8)
    assert embedder.dim == 16 and vectors.shape == (50, 16)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors[37], mock_vector("text 37", 16), atol=1e-5)  # the 37th input's own vector
    assert MockLM.calls - before == 7  # one request per batch of 8
    assert embedder.embed([]).shape == (0, 16)


def test_an_unreachable_server_is_retried_then_a_clear_error():
    with pytest.raises(EmbedderError, match="openai/mock at http://127.0.0.1:9/v1"):
        EndpointEmbedder("openai/mock", api_base="http://127.0.0.1:9/v1", retries=1, timeout=2)


def test_a_key_variable_that_is_not_set_is_named(monkeypatch, server):
    monkeypatch.delenv("NO_SUCH_EMBED_KEY", raising=False)
    with pytest.raises(EmbedderError, match="NO_SUCH_EMBED_KEY"):
        EndpointEmbedder("openai/mock", api_base=server, api_key_env="NO_SUCH_EMBED_KEY")


def test_the_config_chooses_the_local_model_or_the_server(server):
    assert not is_endpoint_model("all-MiniLM-L6-v2") and is_endpoint_model("openai/text-embedding-3-small")
    assert is_endpoint_model("anything", api_base=server)
    assert resolve_device("cpu") == "cpu" and resolve_device("auto") in ("cpu", "cuda", "mps")
    config = load_config(overrides=["retriever.embedding_model=openai/mock", f"retriever.embedding_api_base={server}"])
    assert isinstance(embedder_for(config.retriever), EndpointEmbedder)


def test_an_index_built_with_the_server_resumes_and_searches(server, tmp_path):
    from askfirst.retrieval.edge_store import EdgeStore
    from askfirst.retrieval.indexer import build_index

    embedder = EndpointEmbedder("openai/mock", api_base=server, concurrency=3)
    docs = [Document(f"d{i}", f"Title {i}", f"Body of document {i}.", "x") for i in range(40)]
    store = EdgeStore(collection="served", dim=embedder.dim, path=tmp_path, embedding="openai/mock")
    try:
        first = build_index(docs, store, embedder, batch_size=4)
        assert (first.added, store.count()) == (40, 40)
        again = build_index(docs + [Document("d40", "Title 40", "A new one.", "x")], store, embedder, batch_size=4)
        assert (again.added, again.unchanged) == (1, 40)  # only the new passage is embedded
        query = embedder.embed(["Title 7\nBody of document 7."])[0]
        assert store.dense_search(query, 1)[0][0] == "d7"
    finally:
        store.close()


def test_base64_is_asked_for_and_a_server_sending_floats_is_read_the_same(server, monkeypatch):
    import httpx

    asked = []
    post = httpx.Client.post

    def recording_post(self, url, *, json=None, **kwargs):
        asked.append(json.get("encoding_format"))
        return post(self, url, json=json, **kwargs)

    monkeypatch.setattr(httpx.Client, "post", recording_post)
    texts = [f"text {i}" for i in range(10)]
    as_base64 = EndpointEmbedder("openai/mock", api_base=server).embed(texts)
    assert asked and set(asked) == {"base64"}

    def floats_only(self, url, *, json=None, **kwargs):  # a server that ignores encoding_format
        return post(self, url, json={k: v for k, v in json.items() if k != "encoding_format"}, **kwargs)

    monkeypatch.setattr(httpx.Client, "post", floats_only)
    as_floats = EndpointEmbedder("openai/mock", api_base=server).embed(texts)
    assert np.allclose(as_base64, as_floats, atol=1e-6)
    assert np.allclose(as_floats[3], mock_vector("text 3", 16), atol=1e-5)


def test_a_server_rejecting_encoding_format_is_asked_for_floats_from_then_on(server, monkeypatch):
    import httpx

    post, asked = httpx.Client.post, []

    def strict(self, url, *, json=None, **kwargs):  # an older server that refuses fields it does not know
        asked.append(json.get("encoding_format"))
        if "encoding_format" in json:
            return httpx.Response(400, json={"error": {"message": "unknown field encoding_format"}})
        return post(self, url, json=json, **kwargs)

    monkeypatch.setattr(httpx.Client, "post", strict)
    embedder = EndpointEmbedder("openai/mock", api_base=server)
    vectors = embedder.embed([f"text {i}" for i in range(3)], batch_size=1)
    assert np.allclose(vectors[2], mock_vector("text 2", 16), atol=1e-5)
    assert asked == ["base64", None, None, None, None]  # the probe tried base64 once; every request after asked for floats


def test_a_bad_request_that_is_not_about_the_encoding_still_fails_clearly(server, monkeypatch):
    import httpx

    monkeypatch.setattr(httpx.Client, "post", lambda self, url, **kw: httpx.Response(400, text="input too long"))
    with pytest.raises(EmbedderError, match="HTTP 400: input too long"):
        EndpointEmbedder("openai/mock", api_base=server)
