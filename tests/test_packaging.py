"""The design card's folders install under ``askfirst``; nothing of ours is importable as a bare top-level name."""

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_folders_import_under_askfirst():
    for name in ("programs", "signatures", "optimizers", "datasets", "retrieval"):
        spec = importlib.util.find_spec(f"askfirst.{name}")
        assert spec is not None and Path(spec.origin).parent == REPO / name


def test_bare_datasets_is_not_ours():
    spec = importlib.util.find_spec("datasets")
    assert spec is None or REPO not in Path(spec.origin).parents  # that name belongs to Hugging Face


def test_demo_data_ships_as_package_data():
    from askfirst.datasets.corpus import demo_corpus_path
    from askfirst.datasets.questions import demo_questions_path

    assert demo_corpus_path().is_file() and demo_questions_path().is_file()
