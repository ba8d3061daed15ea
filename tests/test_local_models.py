"""Pinning of the offline model's weights: assembly, verification and clear refusals (no model is loaded)."""

import hashlib

import pytest

from askfirst.config import LMConfig
from askfirst.lm import local_models
from askfirst.lm.factory import build_lm
from askfirst.lm.local_models import LocalModel, ModelNotFoundError, resolve_local_model


@pytest.fixture
def fake_parts(tmp_path, monkeypatch):
    """Two importable 'chunk packages' holding the halves of a small file."""
    payload = b"GGUF" + bytes(range(256)) * 40
    for i, half in enumerate((payload[:5000], payload[5000:]), start=1):
        pkg = tmp_path / "site" / f"fake_chunk_{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(half)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("ASKFIRST_MODEL_DIR", str(tmp_path / "models"))
    parts = (("fake_chunk_1", "data/part01.bin"), ("fake_chunk_2", "data/part02.bin"))
    return payload, parts


def _register(monkeypatch, parts, sha):
    model = LocalModel("fake", parts, sha, 0, "1.0")
    monkeypatch.setitem(local_models.REGISTRY, "fake", model)
    return model


def test_assembles_verifies_and_reuses(fake_parts, monkeypatch, tmp_path):
    payload, parts = fake_parts
    _register(monkeypatch, parts, hashlib.sha256(payload).hexdigest())
    path, digest = resolve_local_model("fake")
    assert path.read_bytes() == payload and digest == hashlib.sha256(payload).hexdigest()
    assert resolve_local_model("fake")[0] == path  # second call verifies the assembled file


def test_refuses_parts_that_do_not_match_the_pin(fake_parts, monkeypatch, tmp_path):
    _, parts = fake_parts
    _register(monkeypatch, parts, "0" * 64)
    with pytest.raises(ModelNotFoundError, match="refusing to load it"):
        resolve_local_model("fake")
    assert not list((tmp_path / "models").glob("*.gguf"))  # nothing unverified is left behind


def test_refuses_a_tampered_assembled_file(fake_parts, monkeypatch):
    payload, parts = fake_parts
    _register(monkeypatch, parts, hashlib.sha256(payload).hexdigest())
    path, _ = resolve_local_model("fake")
    path.write_bytes(payload + b"tampered")
    with pytest.raises(ModelNotFoundError, match="expected"):
        resolve_local_model("fake")


def test_missing_packages_say_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("ASKFIRST_MODEL_DIR", str(tmp_path))
    _register(monkeypatch, (("no_such_chunk_pkg", "x.bin"),), "0" * 64)
    with pytest.raises(ModelNotFoundError, match="packages not installed: no_such_chunk_pkg.*pip install no-such-chunk-pkg==1.0"):
        resolve_local_model("fake")


def test_unknown_model_and_unpinned_path(tmp_path):
    with pytest.raises(ModelNotFoundError, match="unknown local model 'nope'"):
        resolve_local_model("nope")
    f = tmp_path / "m.gguf"
    f.write_bytes(b"x")
    with pytest.raises(ModelNotFoundError, match="set lm.sha256"):
        resolve_local_model("nope", model_path=str(f))
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        resolve_local_model("nope", model_path=str(tmp_path / "absent.gguf"), sha256="0" * 64)
    assert resolve_local_model("nope", model_path=str(f), sha256=hashlib.sha256(b"x").hexdigest())[0] == f


def test_registry_pins_are_sha256():
    for model in local_models.REGISTRY.values():
        assert len(model.sha256) == 64 and int(model.sha256, 16) >= 0


def test_remote_lm_needs_its_key(monkeypatch):
    monkeypatch.delenv("ASKFIRST_TEST_KEY", raising=False)
    with pytest.raises(ModelNotFoundError, match="ASKFIRST_TEST_KEY"):
        build_lm(LMConfig(model="openai/gpt-4o-mini", api_key_env="ASKFIRST_TEST_KEY"))
    lm = build_lm(LMConfig(model="hosted_vllm/qwen", api_base="http://127.0.0.1:9/v1"))
    assert lm.model == "hosted_vllm/qwen" and lm.kwargs["temperature"] == 0.0


def test_engine_bounds_free_strings_only():
    from askfirst.lm.llama_engine import bound_strings

    schema = {"type": "object", "properties": {
        "answer": {"type": "string"}, "label": {"type": "string", "enum": ["a", "b"]},
        "ids": {"type": "array", "items": {"type": "string", "maxLength": 80}},
        "notes": {"anyOf": [{"type": "string"}, {"type": "null"}]}, "long": {"type": "string", "maxLength": 5000}}}
    out = bound_strings(schema, 500)
    assert out["properties"]["long"]["maxLength"] == 1000  # above llama.cpp's grammar limit the process would crash
    assert out["properties"]["answer"]["maxLength"] == 500 and "maxLength" not in out["properties"]["label"]
    assert out["properties"]["ids"]["items"]["maxLength"] == 80 and out["properties"]["notes"]["anyOf"][0]["maxLength"] == 500
    assert "maxLength" not in schema["properties"]["answer"]  # the caller's schema is not modified
