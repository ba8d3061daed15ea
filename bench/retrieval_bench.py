"""Benchmark the hybrid retriever on MTRAG-UN: build throughput, query latency, nDCG@5 and Recall@10.

For each collection of the MTRAG passage pool, index it (a fresh Qdrant folder), then query with the last
user turn of each MTRAG-UN dev task that has qrels, with BM25 alone, dense alone and their RRF fusion, and BM25
from each of the three engines (``retriever.lexical``: Qdrant's sparse vectors, bm25s on disk, rank-bm25 in
memory). Scores are per collection and averaged weighted by the number of queries (as MTRAGEval does).

    python bench/retrieval_bench.py                 # all four collections
    python bench/retrieval_bench.py --collections govt --limit 20
    python bench/retrieval_bench.py --embedded qdrant-edge     # the same on the qdrant-edge embedded store
    python bench/retrieval_bench.py --max-seq-length 128       # passages and queries cut at 128 tokens (the model's
                                                               # training length; sentence-transformers' default is 256)

Latency at corpus sizes past MTRAG's is ``bench/scale_bench.py``.

Prints a table, writes ``runs/bench/retrieval-<time>.json`` and logs an MLflow run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from askfirst.datasets.corpus import load_corpus
from askfirst.datasets.mtrag import COLLECTIONS, load_mtrag_tasks, passage_pool_path
from askfirst.datasets.shared_data import shared_data_dir
from askfirst.evaluation.retrieval_metrics import ndcg_at_k, recall_at_k, unique_in_order
from askfirst.retrieval.embedder import get_embedder
from askfirst.retrieval.hybrid import HybridRetriever
from askfirst.retrieval.indexer import build_index
from askfirst.retrieval.lexical import open_lexical
from askfirst.retrieval.qdrant_store import PassageStore

from askfirst.config import load_config
from askfirst.tracking import tracked_run

LEXICAL = ("rank_bm25", "bm25s", "qdrant")
MODES = tuple(f"bm25/{e}" for e in LEXICAL) + ("dense",) + tuple(f"hybrid/{e}" for e in LEXICAL)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def bench_collection(name: str, data_dir: Path, store_dir: Path, *, limit: int | None, k: int = 10, embedded: str = "qdrant-client",
                     max_seq_length: int | None = None) -> dict:
    docs = load_corpus(passage_pool_path(data_dir, name))
    tasks = [t for t in load_mtrag_tasks(data_dir) if t.collection == name and t.qrels]
    tasks = tasks[:limit] if limit else tasks
    embedder = get_embedder("all-MiniLM-L6-v2")
    if max_seq_length:  # an experiment on the build's cost: the encoder's work grows with the tokens it reads
        embedder._model.max_seq_length = max_seq_length
    if embedded == "qdrant-edge":
        from askfirst.retrieval.edge_store import EdgeStore

        store = EdgeStore(collection=name, dim=embedder.dim, path=store_dir)
    else:
        store = PassageStore(collection=name, dim=embedder.dim, path=store_dir)
    report = build_index(docs, store, embedder)
    row: dict = {"collection": name, "documents": len(docs), "passages": report.passages, "queries": len(tasks),
                 "build_seconds": report.seconds, "build_passages_per_s": report.passages_per_second,
                 "max_seq_length": embedder._model.max_seq_length}
    for variant in MODES:
        mode, _, lexical_kind = variant.partition("/")
        start = time.perf_counter()
        lexical = open_lexical(lexical_kind, store, folder=store_dir.with_name(store_dir.name + "-bm25s") / name) if lexical_kind else None
        open_ms = (time.perf_counter() - start) * 1000
        retriever = HybridRetriever(store, embedder, lexical=lexical, mode=mode, per_retriever_k=k)
        latencies, ndcg5, recall10 = [], [], []
        for task in tasks:
            query = task.conversation[-1]["content"]
            start = time.perf_counter()
            hits = retriever.search(query, k)
            latencies.append((time.perf_counter() - start) * 1000)
            ranked = unique_in_order([h.passage.doc_id for h in hits])
            ndcg5.append(ndcg_at_k(ranked, task.qrels, 5))
            recall10.append(recall_at_k(ranked, task.qrels, 10))
        row[variant] = {"ndcg@5": statistics.fmean(ndcg5), "recall@10": statistics.fmean(recall10), "open_ms": open_ms,
                        "p50_ms": percentile(latencies, 0.5), "p95_ms": percentile(latencies, 0.95)}
    store.close()
    return row


def weighted(rows: list[dict], mode: str, key: str) -> float:
    total = sum(r["queries"] for r in rows)
    return sum(r[mode][key] * r["queries"] for r in rows) / total


def print_table(rows: list[dict]) -> None:
    print(f"\nembedding: passages and queries cut at {rows[0]['max_seq_length']} tokens")
    print(f"\n{'collection':10s} {'passages':>8s} {'build p/s':>9s} {'queries':>7s} | " + " | ".join(f"{m:^15s}" for m in MODES))
    for r in rows:
        cells = " | ".join(f"{r[m]['ndcg@5']:7.4f} {r[m]['recall@10']:7.4f}" for m in MODES)
        print(f"{r['collection']:10s} {r['passages']:8d} {r['build_passages_per_s']:9.1f} {r['queries']:7d} | {cells}")
    avg = " | ".join(f"{weighted(rows, m, 'ndcg@5'):7.4f} {weighted(rows, m, 'recall@10'):7.4f}" for m in MODES)
    print(f"{'weighted':10s} {sum(r['passages'] for r in rows):8d} {'':9s} {sum(r['queries'] for r in rows):7d} | {avg}")
    print(f"\n{'retriever':18s} {'nDCG@5':>7s} {'R@10':>7s} {'open ms':>8s} {'p50 ms':>7s} {'p95 ms':>7s}  (open: the largest collection's; p50/p95: the slowest collection's)")
    for m in MODES:
        print(f"{m:18s} {weighted(rows, m, 'ndcg@5'):7.4f} {weighted(rows, m, 'recall@10'):7.4f} {max(r[m]['open_ms'] for r in rows):8.1f} "
              f"{max(r[m]['p50_ms'] for r in rows):7.1f} {max(r[m]['p95_ms'] for r in rows):7.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collections", nargs="+", default=list(COLLECTIONS), choices=COLLECTIONS)
    parser.add_argument("--limit", type=int, default=None, help="queries per collection")
    parser.add_argument("--data-dir", default=None, help="shared data folder (default: ASKFIRST_DATA_DIR or ../shared/data)")
    parser.add_argument("--runs-dir", default="runs")
    parser.add_argument("--embedded", default="qdrant-client", choices=("qdrant-client", "qdrant-edge"), help="the embedded store's engine")
    parser.add_argument("--max-seq-length", type=int, default=None, help="cut passages and queries at this many tokens (default: the model's 256)")
    args = parser.parse_args(argv)
    data_dir = shared_data_dir(args.data_dir)
    if not (data_dir / "mtrag").is_dir():
        print(f"MTRAG data not found under {data_dir}; set ASKFIRST_DATA_DIR or --data-dir", file=sys.stderr)
        return 2
    store_dir = Path(tempfile.mkdtemp(prefix="askfirst-bench-"))  # fresh, so build throughput is measured from zero
    try:
        rows = [bench_collection(c, data_dir, store_dir, limit=args.limit, embedded=args.embedded, max_seq_length=args.max_seq_length)
                for c in args.collections]
    finally:
        shutil.rmtree(store_dir, ignore_errors=True)
    print_table(rows)
    config = load_config(overrides=[f"runs_dir={args.runs_dir}", "data.corpus=mtrag-passage-pool"])
    out = config.runs_path / "bench" / f"retrieval-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=2))
    with tracked_run(config, run_name=out.stem, tags={"askfirst.kind": "bench-retrieval"}) as tracker:
        for m in MODES:
            key = m.replace("/", ".")
            tracker.log_metrics({f"{key}.ndcg_at_5": weighted(rows, m, "ndcg@5"), f"{key}.recall_at_10": weighted(rows, m, "recall@10"),
                                 f"{key}.p50_ms_max": max(r[m]["p50_ms"] for r in rows)})
        tracker.log_artifact(out)
    print(f"\nwritten: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
