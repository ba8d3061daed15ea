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
from collections import Counter
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
        ids, vocab, matrix = score_matrix((p.passage_id, f"{p.title} {p.text}") for p in store.iter_passages())
        folder = Path(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder = inside(folder.parent, folder.name)  # renamed and deleted below: never anything outside its own root
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
        try:
            if ids:  # an empty collection keeps only its (empty) id list
                bm25 = bm25s.BM25(k1=K1, b=B, method="lucene")
                # what bm25s's own index() leaves: its matrix, and its vocabulary with the empty token (which has no column)
                bm25.scores, bm25.vocab_dict, bm25.nonoccurrence_array = matrix, vocab | {"": len(vocab)}, None
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


def score_matrix(passages, *, chunk: int = 8_192) -> tuple[list[str], dict[str, int], dict | None]:
    """bm25s's ``method="lucene"`` score matrix of ``(passage_id, text)`` pairs, as ``BM25.index`` builds it (one
    column per token, each column's passages in the order read), with the passage ids and the token vocabulary.

    Each passage's distinct tokens and their counts are packed as they are read (6 bytes a pair), and the matrix is
    filled from them a chunk of passages at a time: at 1M passages bm25s's ``index`` held the token lists, its COO
    triples and their CSC copy at once, the build's peak memory.
    """
    ids, vocab = [], {}
    tokens, counts, lengths, distinct = array("I"), array("H"), array("I"), array("I")
    for passage_id, text in passages:
        counter = Counter(vocab.setdefault(t, len(vocab)) for t in tokenize(text))
        ids.append(passage_id)
        tokens.extend(counter.keys())
        counts.extend(min(n, 65_535) for n in counter.values())
        lengths.append(sum(counter.values()))
        distinct.append(len(counter))
    if not ids:
        return ids, vocab, None
    tok, tf = np.frombuffer(tokens, dtype=np.uint32), np.frombuffer(counts, dtype=np.uint16)
    length, width = np.frombuffer(lengths, dtype=np.uint32), np.frombuffer(distinct, dtype=np.uint32)
    n, nnz = len(ids), len(tok)
    df = np.bincount(tok, minlength=len(vocab))
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)  # Lucene's IDF, kept as bm25s keeps it
    index_type = np.int32 if nnz < 2**31 else np.int64
    indptr = np.zeros(len(vocab) + 1, dtype=index_type)
    np.cumsum(df, out=indptr[1:])
    data, indices = np.empty(nnz, dtype=np.float32), np.empty(nnz, dtype=index_type)
    filled = indptr[:-1].astype(np.int64)  # each column's next free slot
    avg, start = length.mean(), 0
    for first in range(0, n, chunk):
        stop = min(first + chunk, n)
        end = start + int(width[first:stop].sum())
        t, row = tok[start:end], np.repeat(np.arange(first, stop), width[first:stop])
        norm = K1 * ((1 - B) + B * length[row] / avg)
        scores = (idf[t] * (tf[start:end] / (norm + tf[start:end]))).astype(np.float32)
        order = np.argsort(t, kind="stable")  # by column, each column's passages in order
        st = t[order]
        slots = filled[st] + np.arange(len(st)) - np.searchsorted(st, st)  # a column's slot, plus its rank in the chunk
        indices[slots], data[slots] = row[order], scores[order]
        filled += np.bincount(t, minlength=len(vocab))
        start = end
    return ids, vocab, {"data": data, "indices": indices, "indptr": indptr, "num_docs": n}
