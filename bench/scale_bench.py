"""Retrieval latency, open time and memory at corpus sizes past MTRAG's, for each BM25 engine.

The corpora are synthetic and deterministic: passages of about 100 words drawn from the word frequencies of the
MTRAG passage pool (or, without the shared data, a Zipf law over made-up words), and dense vectors from a stand-in
embedder that hashes the text to a seeded random unit vector. **The stand-in makes these latency-only numbers**:
retrieval quality is `bench/retrieval_bench.py`'s, on MTRAG with the real embedder. Queries are 6 words drawn the
same way.

Each size is written once into a fresh embedded store folder (``--store``), through askfirst's own store class for
``--embedded`` (qdrant-edge, the default store, optimised after the writes as ``askfirst index`` does; or
qdrant-client's local mode); then each engine runs in its own process, so open time and peak RSS are that engine's
alone:

- ``store open``: qdrant-client's embedded local mode loads every point into memory here (a server would not);
  qdrant-edge memory-maps its shard;
- ``lexical open``: ``retriever.lexical`` = qdrant (nothing to open), bm25s (memory-mapped; the first open builds
  it and is reported as ``build``), rank_bm25 (built from every passage);
- query p50/p95 for BM25 alone, dense alone and the hybrid search (RRF, then the hits' passages read from Qdrant),
  and the first query's time (with ``--memory cold`` the first searches read the shard's pages from disk).

``--memory`` is qdrant-edge's placement for the stores it writes (``retriever.store_memory``: cold, the default, or warm,
Qdrant's own default); a store keeps the placement it was written with. ``--drop-caches`` empties the OS page cache
before each engine opens the store (root only), as after a reboot.

``--lexical-only N`` measures the bm25s engine alone on N passages (no Qdrant: the passages come from a generator),
which is how the 1M point is taken on a 2-core machine where the embedded store cannot hold 1M points.

    python bench/scale_bench.py --sizes 4400 100000 [--embedded qdrant-client]
    python bench/scale_bench.py --sizes 1000000 --store /tmp/scale --write-only   # a long build, then measure it later
    python bench/scale_bench.py --lexical-only 1000000

Prints tables and writes ``runs/bench/scale-<time>.json``.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from pathlib import Path

import numpy as np

ENGINES = ("qdrant", "bm25s", "rank_bm25")
DIM = 384


class HashEmbedder:
    """Stand-in for the dense model: the same text always gives the same random unit vector (latency only)."""

    dim = DIM

    def embed(self, texts, batch_size: int = 64):
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for i, t in enumerate(texts):
            v = np.random.default_rng(zlib.crc32(t.encode())).standard_normal(DIM).astype(np.float32)
            out[i] = v / np.linalg.norm(v)
        return out


def vocabulary(data_dir: Path | None) -> tuple[str, list[str], np.ndarray]:
    """Where the words come from, the words and their probabilities: the MTRAG pool's if found, else a Zipf law over
    50k made-up words."""
    from askfirst.retrieval.bm25 import tokenize

    counts: Counter = Counter()
    if data_dir is not None:
        from askfirst.datasets.corpus import load_corpus
        from askfirst.datasets.mtrag import COLLECTIONS, passage_pool_path

        for name in COLLECTIONS:
            for doc in load_corpus(passage_pool_path(data_dir, name)):
                counts.update(tokenize(doc.text))
    source = "MTRAG passage pool"
    if not counts:
        source, counts = "Zipf", Counter({f"w{i}": 1e6 / (i + 1) for i in range(50_000)})
    words, freq = zip(*counts.most_common(), strict=True)
    p = np.array(freq, dtype=np.float64)
    return source, list(words), p / p.sum()


def passages(n: int, words: list[str], p: np.ndarray, *, seed: int = 0, batch: int = 10_000):
    """``n`` synthetic passages, in batches, the same for the same seed."""
    from askfirst.retrieval.chunking import Passage

    rng = np.random.default_rng(seed)
    vocab = np.array(words, dtype=object)
    for start in range(0, n, batch):
        size = min(batch, n - start)
        lengths = np.clip(rng.normal(100, 30, size).astype(int), 10, 250)
        drawn = vocab[rng.choice(len(words), size=int(lengths.sum()), p=p)]
        ends = np.cumsum(lengths)
        yield [Passage(f"s{start + i}", f"d{(start + i) // 3}", f"doc {(start + i) // 3}", " ".join(drawn[e - n_ : e]))
               for i, (e, n_) in enumerate(zip(ends, lengths, strict=True))]


def queries(count: int, words: list[str], p: np.ndarray) -> list[str]:
    rng = np.random.default_rng(1)
    mid = np.arange(50, min(len(words), 20_000))  # skip the commonest words, as real queries mostly do
    weights = p[mid] / p[mid].sum()
    return [" ".join(words[i] for i in rng.choice(mid, size=6, p=weights)) for _ in range(count)]


def workload(count: int, store: str | None, *, prefix: str) -> tuple[str, list[str], np.ndarray, list[str], Path]:
    """The vocabulary's source, words and probabilities, ``count`` queries, and the store folder (``store``, or a new
    temporary one) with the queries written to ``queries.json`` for the child processes."""
    from askfirst.datasets.shared_data import shared_data_dir

    data_dir = shared_data_dir(None)
    source, words, p = vocabulary(data_dir if (data_dir / "mtrag").is_dir() else None)
    qs = queries(count, words, p)
    base = Path(store) if store else Path(tempfile.mkdtemp(prefix=prefix))
    base.mkdir(parents=True, exist_ok=True)
    (base / "queries.json").write_text(json.dumps(qs))
    return source, words, p, qs, base


def open_store(folder: Path, embedded: str, memory: str = "cold"):
    """askfirst's store class for ``embedded`` on ``folder`` (collection "scale"; ``memory``: a new qdrant-edge store's placement)."""
    if embedded == "qdrant-edge":
        from askfirst.retrieval.edge_store import EdgeStore

        return EdgeStore(collection="scale", dim=DIM, path=folder, memory=memory)
    from askfirst.retrieval.qdrant_store import PassageStore

    return PassageStore(collection="scale", dim=DIM, path=folder)


def placement(folder: Path, embedded: str) -> str:
    """A qdrant-edge store's recorded placement (``warm`` for stores written before it was recorded); ``-`` otherwise."""
    meta = folder / "scale.json"
    return json.loads(meta.read_text()).get("memory", "warm") if embedded == "qdrant-edge" and meta.is_file() else "-"


def write_store(folder: Path, n: int, words, p, embedded: str, memory: str) -> dict:
    embedder = HashEmbedder()
    store = open_store(folder, embedded, memory)
    start = time.perf_counter()
    first = True
    for batch in passages(n, words, p):
        if first:  # as askfirst's indexer does: BM25's average length from the first build (here its first batch)
            store.fix_bm25_avg_len(batch)
            first = False
        for i in range(0, len(batch), 1000):
            part = batch[i : i + 1000]
            store.upsert(part, embedder.embed([x.text for x in part]))
    seconds = time.perf_counter() - start
    start = time.perf_counter()
    store.optimize()
    optimise_s = time.perf_counter() - start
    store.close()
    return {"passages": n, "write_seconds": seconds, "write_passages_per_s": n / seconds, "optimise_s": optimise_s}


def rss_mb() -> float:
    """This process's peak RSS so far (VmHWM: unlike ``ru_maxrss``, it starts afresh at exec, so a child does not
    report the parent's peak)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def timed(fn, items, budget_s: float) -> list[float]:
    """Milliseconds per call of ``fn`` over ``items``, stopping once ``budget_s`` is spent (slow engines get fewer)."""
    out, spent = [], 0.0
    for item in items:
        start = time.perf_counter()
        fn(item)
        out.append((time.perf_counter() - start) * 1000)
        spent += out[-1] / 1000
        if spent > budget_s:
            break
    return out


def measure_engine(folder: Path, engine: str, qs: list[str], budget_s: float, embedded: str) -> dict:
    """One engine over the store in ``folder`` (run in a child process)."""
    from askfirst.retrieval.bm25s_index import Bm25sIndex
    from askfirst.retrieval.hybrid import HybridRetriever
    from askfirst.retrieval.lexical import open_lexical

    row: dict = {"engine": engine, "embedded": embedded, "rss_mb_start": rss_mb()}
    start = time.perf_counter()
    store = open_store(folder, embedded)
    row["store_open_s"] = time.perf_counter() - start
    row["rss_mb_store"] = rss_mb()
    bm25s_dir = folder.with_name(folder.name + "-bm25s") / "scale"
    if engine == "bm25s" and Bm25sIndex.stamp(bm25s_dir).get("revision") != store.revision:
        start = time.perf_counter()
        Bm25sIndex.build(store, bm25s_dir, revision=store.revision)
        row["bm25s_build_s"] = time.perf_counter() - start
    start = time.perf_counter()
    lexical = open_lexical(engine, store, folder=bm25s_dir)
    row["lexical_open_s"] = time.perf_counter() - start
    row["rss_mb_open"] = rss_mb()
    embedder = HashEmbedder()
    vectors = {q: embedder.embed([q])[0] for q in qs}
    retriever = HybridRetriever(store, embedder, lexical=lexical, mode="hybrid", per_retriever_k=10)
    for name, fn in (("bm25", lambda q: lexical.search(q, 10)), ("dense", lambda q: store.dense_search(vectors[q], 10)),
                     ("hybrid", lambda q: retriever.search(q, 10))):
        ms = timed(fn, qs, budget_s)
        row[name] = {"n": len(ms), "first_ms": ms[0], "p50_ms": percentile(ms, 0.5), "p95_ms": percentile(ms, 0.95),
                     "mean_ms": statistics.fmean(ms)}
    row["rss_mb_peak"] = rss_mb()
    store.close()
    return row


def lexical_only(n: int, words, p, qs: list[str]) -> dict:
    """bm25s alone on ``n`` generated passages: build, open (memory-mapped), query."""
    from askfirst.retrieval.bm25s_index import Bm25sIndex

    class Generated:
        collection, revision = "generated", "fixed"

        def iter_passages(self):
            for batch in passages(n, words, p):
                yield from batch

    folder = Path(tempfile.mkdtemp(prefix="askfirst-scale-")) / "bm25s"
    try:
        start = time.perf_counter()
        Bm25sIndex.build(Generated(), folder, revision="fixed")
        build_s = time.perf_counter() - start
        rss_build = rss_mb()
        start = time.perf_counter()
        index = Bm25sIndex(folder)
        open_s = time.perf_counter() - start
        ms = timed(lambda q: index.search(q, 10), qs, 120)
        size_mb = sum(f.stat().st_size for f in folder.iterdir()) / 2**20
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)
    return {"passages": n, "build_s": build_s, "build_rss_mb_peak": rss_build, "open_s": open_s, "index_mb": size_mb,
            "queries": len(ms), "p50_ms": percentile(ms, 0.5), "p95_ms": percentile(ms, 0.95)}


def main(argv: list[str] | None = None) -> int:
    from askfirst.retrieval.edge_store import PLACEMENTS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="*", type=int, default=[4400, 100_000])
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--budget", type=float, default=60.0, help="seconds of queries per engine and search kind at most")
    parser.add_argument("--lexical-only", nargs="*", type=int, default=[], help="sizes at which to measure bm25s alone")
    parser.add_argument("--store", default=None, help="keep the written stores here (default: a temporary folder)")
    parser.add_argument("--write-only", action="store_true", help="write the stores into --store and stop (measure them in a later run)")
    parser.add_argument("--embedded", default="qdrant-edge", choices=("qdrant-edge", "qdrant-client"), help="the embedded store")
    parser.add_argument("--memory", default="cold", choices=PLACEMENTS, help="qdrant-edge's placement for the stores written")
    parser.add_argument("--drop-caches", action="store_true", help="empty the OS page cache before each engine opens the store (root)")
    parser.add_argument("--runs-dir", default="runs")
    parser.add_argument("--child", nargs=3, metavar=("FOLDER", "ENGINE", "QUERIES_JSON"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.write_only and not args.store:
        parser.error("--write-only keeps what it writes in --store; name one")
    if args.child:
        folder, engine, qfile = args.child
        print(json.dumps(measure_engine(Path(folder), engine, json.loads(Path(qfile).read_text()), args.budget, args.embedded)))
        return 0

    source, words, p, qs, base = workload(args.queries, args.store, prefix="askfirst-scale-")
    qfile = base / "queries.json"
    results: dict = {"vocabulary": source, "embedded": args.embedded, "sizes": [], "lexical_only": []}
    try:
        for n in args.sizes:
            folder = base / f"{args.embedded}-{n}"
            written = write_store(folder, n, words, p, args.embedded, args.memory) if not folder.exists() else {"passages": n, "write_passages_per_s": None}
            print(f"{n} passages written: {written}", flush=True)
            if args.write_only:
                (folder / "written.json").write_text(json.dumps(written))
                continue
            if written["write_passages_per_s"] is None and (folder / "written.json").is_file():  # written by an earlier --write-only run
                written = json.loads((folder / "written.json").read_text())
            for engine in args.engines:
                if args.drop_caches:
                    subprocess.run(["sync"], check=True)
                    Path("/proc/sys/vm/drop_caches").write_text("3\n")
                out = subprocess.run([sys.executable, __file__, "--budget", str(args.budget), "--embedded", args.embedded,
                                      "--child", str(folder), engine, str(qfile)], capture_output=True, text=True, check=True)
                row = json.loads(out.stdout.strip().splitlines()[-1]) | {"passages": n, "write_passages_per_s": written["write_passages_per_s"],
                                                                         "optimise_s": written.get("optimise_s"), "memory": placement(folder, args.embedded),
                                                                         "dropped_caches": args.drop_caches}
                results["sizes"].append(row)
                print(json.dumps(row), flush=True)
        for n in args.lexical_only:
            row = lexical_only(n, words, p, qs)
            results["lexical_only"].append(row)
            print(json.dumps(row), flush=True)
    finally:
        if not args.store:
            shutil.rmtree(base, ignore_errors=True)
    print_tables(results)
    out = Path(args.runs_dir) / "bench" / f"scale-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    print(f"\nwritten: {out}")
    return 0


def _latency(cell: dict, *, first: bool) -> str:
    shown = f"{cell['first_ms']:.1f} / " if first and "first_ms" in cell else ""
    return shown + f"{cell['p50_ms']:.1f} / {cell['p95_ms']:.1f}" + (f" (n={cell['n']})" if cell["n"] < 20 else "")


def print_tables(results: dict) -> None:
    if results["sizes"]:
        print(f"\nembedded store: {results.get('embedded', 'qdrant-client')}")
        print("\n| passages | memory | write p/s (optimise s) | BM25 engine | store open s | lexical open s (build s) | BM25 p50/p95 ms "
              "| dense first / p50 / p95 ms | hybrid p50/p95 ms | RSS after open / peak MB |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in results["sizes"]:
            build = f" ({r['bm25s_build_s']:.1f})" if "bm25s_build_s" in r else ""
            cells = " | ".join(_latency(r[k], first=k == "dense") for k in ("bm25", "dense", "hybrid"))
            wrote = f"{r['write_passages_per_s']:.0f}" if r.get("write_passages_per_s") else "-"
            wrote += f" ({r['optimise_s']:.1f})" if r.get("optimise_s") is not None else ""
            memory = r.get("memory", "-") + (", caches dropped" if r.get("dropped_caches") else "")
            print(f"| {r['passages']} | {memory} | {wrote} | {r['engine']} | {r['store_open_s']:.2f} | {r['lexical_open_s']:.2f}{build} | {cells} | {r['rss_mb_open']:.0f} / {r['rss_mb_peak']:.0f} |")
    if results["lexical_only"]:
        print("\n| passages (bm25s alone) | build s | peak RSS while building MB | open s | index on disk MB | p50 / p95 ms |")
        print("|---|---|---|---|---|---|")
        for r in results["lexical_only"]:
            print(f"| {r['passages']} | {r['build_s']:.1f} | {r['build_rss_mb_peak']:.0f} | {r['open_s']:.3f} | {r['index_mb']:.0f} | {r['p50_ms']:.1f} / {r['p95_ms']:.1f} |")


if __name__ == "__main__":
    sys.exit(main())
