"""``askfirst policy rescale``: a signals table's top cosines read again on its index's own scale, with no LM pass."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from askfirst.cli.app import app
from askfirst.datasets.errors import DataError
from askfirst.evaluation.signals_table import read_signals_table, rescaled_rows, write_signals_table
from askfirst.retrieval.chunking import Passage
from askfirst.retrieval.cosine_reference import cosine_percentile
from askfirst.retrieval.edge_store import EdgeStore
from askfirst.programs.askfirst.signals import FEATURES


class Embedder:
    def __init__(self, vectors):
        self.vectors = vectors

    def embed(self, texts):
        return np.stack([self.vectors[t] for t in texts])


def _row(i: int, cosine: float) -> dict:
    signals = {name: 0.0 for name in FEATURES} | {"top_cosine": cosine, "top_cosine_percentile": 0.5}
    return {"id": f"q{i}", "conversation": f"c{i}", "expected": "answer", "rules": "answer", "route": "answer", "signals": signals}


@pytest.fixture
def store(tmp_path):
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(20, 8))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    probes = {f"Passage {i}.": v / np.linalg.norm(v) for i, v in enumerate(rng.normal(size=(20, 8)))}
    store = EdgeStore(collection="c", dim=8, path=tmp_path / "q")
    store.upsert([Passage(f"p{i}", f"d{i}", "", f"Passage {i}. More.") for i in range(20)], vectors.astype(np.float32))
    yield store, Embedder(probes)
    store.close()


def test_a_rescaled_row_reads_its_top_cosine_as_the_program_does_and_keeps_every_other_signal(store):
    store, embedder = store
    rows = [_row(0, 0.1), _row(1, 0.6), _row(2, 0.0)]
    out = rescaled_rows(rows, store, embedder)
    assert [r["signals"]["top_cosine_percentile"] for r in out[:2]] == [cosine_percentile(store, embedder, c) for c in (0.1, 0.6)]
    assert out[2]["signals"]["top_cosine_percentile"] == 0.0  # no dense hit recorded: no percentile, as the program records it
    assert all(o["signals"] | {"top_cosine_percentile": 0.5} == r["signals"] for o, r in zip(out, rows))
    assert rows[0]["signals"]["top_cosine_percentile"] == 0.5  # the rows given are not changed


def test_an_index_without_a_scale_is_a_clear_error_and_the_table_is_left_as_it_was(tmp_path):
    empty = EdgeStore(collection="e", dim=8, path=tmp_path / "e")
    try:
        with pytest.raises(DataError, match="no cosine scale"):
            rescaled_rows([_row(0, 0.5)], empty, Embedder({}))
    finally:
        empty.close()
    table = tmp_path / "t.json"
    write_signals_table([_row(0, 0.5)], table, source="a test")
    before = table.read_text()
    result = CliRunner().invoke(app, ["policy", "rescale", str(table), "--config", "demo", "--set", f"runs_dir={tmp_path / 'runs'}"])
    assert isinstance(result.exception, DataError) and "no cosine scale" in str(result.exception)  # the CLI prints it as one line
    assert table.read_text() == before and read_signals_table(table)[0]["signals"]["top_cosine_percentile"] == 0.5
    assert json.loads(before)["source"] == "a test"
