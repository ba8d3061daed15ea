"""BM25 on disk with bm25s: a sparse score matrix that opens memory-mapped, so opening reads nothing per passage.

The index is a cache of the Qdrant collection's texts, kept in its own folder with the collection's ``revision``
(which changes with every write to the collection). Opening it when the revision differs rebuilds it from the
collection first (the one time every passage is read); a build is written to a temporary folder and swapped in,
so an interrupted build leaves the previous index, and the next open rebuilds again. Processes that share a server's
collection (an ablation's workers, several `serve` processes) check, build and load under one file lock beside the
folder: one of them builds, the others load what it built, and none reads a folder half swapped.
"""

from __future__ import annotations

import fcntl
from array import array
import json
import logging
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from askfirst.retrieval.bm25 import tokenize
from askfirst.retrieval.safe_paths import inside
from askfirst.retrieval.sparse import B, K1

_IDS = "passage_ids.npy"
_STAMP = "askfirst.json"


def _bm25s():
    import bm25s

    # bm25s sets its logger to DEBUG when imported and logs every build, which the CLI's log format would show.
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    return bm25s


@contextmanager
def _exclusive(lock_path: Path):
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the handle closes
        yield


class Bm25sIndex:
    """Okapi BM25 (Lucene's IDF, bm25s's ``method="lucene"``) over one collection, memory-mapped from ``folder``."""

    def __init__(self, folder: Path):
        bm25s = _bm25s()
        self.folder = Path(folder)
        # Fixed-width bytes, memory-mapped: looking up a hit's id does not load the id list.
        self._ids = np.load(self.folder / _IDS, mmap_mode="r")
        self._bm25 = bm25s.BM25.load(str(self.folder), mmap=True, show_progress=False) if len(self._ids) else None  # empty: no matrix

    def __len__(self) -> int:
        return len(self._ids)

    @staticmethod
    def stamp(folder: Path) -> dict:
        try:
            return json.loads((Path(folder) / _STAMP).read_text())
        except (OSError, ValueError):
            return {}

    @classmethod
    def open(cls, store, folder: Path, *, say=None) -> Bm25sIndex:
        """The index of ``store``'s collection in ``folder``, rebuilt first if the collection changed since it was built."""
        folder = Path(folder)
        with _exclusive(folder.with_name(folder.name + ".lock")):
            revision = store.revision
            if cls.stamp(folder).get("revision") != revision or not (folder / _IDS).is_file():
                if say:
                    say(f"building the BM25 index of {store.collection!r} in {folder} (none yet, or the collection changed since)")
                cls.build(store, folder, revision=revision)
            return cls(folder)

    @classmethod
    def build(cls, store, folder: Path, *, revision: str) -> None:
        bm25s = _bm25s()
        # Token ids rather than token strings, each passage's as a packed array of 4-byte ints (a list would take 8 bytes
        # a token for its references, and more as it grows), held while bm25s builds its matrix from them.
        ids, token_ids, vocab = [], [], {}
        for p in store.iter_passages():
            ids.append(p.passage_id)
            token_ids.append(array("I", [vocab.setdefault(t, len(vocab)) for t in tokenize(f"{p.title} {p.text}")]))
        folder = Path(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder = inside(folder.parent, folder.name)  # renamed and deleted below: never anything outside its own root
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
        try:
            if ids:  # bm25s cannot index an empty corpus; an empty collection keeps only its (empty) id list
                bm25 = bm25s.BM25(k1=K1, b=B, method="lucene")
                bm25.index((token_ids, vocab), show_progress=False)
                bm25.save(str(tmp))
            np.save(tmp / _IDS, np.array(ids, dtype=f"S{max((len(i.encode()) for i in ids), default=1)}"))
            (tmp / _STAMP).write_text(json.dumps({"revision": revision, "collection": store.collection, "passages": len(ids)}))
            old = folder.with_name(folder.name + ".old")
            shutil.rmtree(old, ignore_errors=True)
            if folder.exists():
                folder.rename(old)
            tmp.rename(folder)
            shutil.rmtree(old, ignore_errors=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        terms = tokenize(query)
        if not terms or self._bm25 is None:
            return []
        scores = self._bm25.get_scores(terms)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]
        return [(self._ids[i].decode(), float(scores[i])) for i in top if scores[i] > 0]

    def document_frequency(self, token: str) -> int:
        """How many passages have ``token`` (one of :func:`tokenize`'s tokens): the length of its column of the score
        matrix (bm25s keeps it by token, compressed sparse columns; its vocabulary's last entry, "", has no column)."""
        if self._bm25 is None or (column := self._bm25.vocab_dict.get(token)) is None:
            return 0
        indptr = self._bm25.scores["indptr"]
        return int(indptr[column + 1] - indptr[column]) if column + 1 < len(indptr) else 0
