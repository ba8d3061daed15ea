"""A measured try of qdrant-edge-py (Qdrant's engine in-process) as the embedded store, at scale_bench's sizes.

Not a dependency of askfirst: ``pip install qdrant-edge-py==0.9.0`` first. The same synthetic passages, stand-in
dense vectors (latency only) and queries as ``bench/scale_bench.py``; each point holds the named dense vector and the
BM25 sparse vector (IDF by the engine) exactly as askfirst's Qdrant layout does. After writing, the shard is optimised
(segments merged, HNSW built); then a child process opens it and measures what scale_bench measures for the
embedded qdrant-client store: open time, dense / sparse-BM25 / hybrid latency (both rankings, RRF, the hits'
passages read back), and peak RSS.

    python bench/edge_trial.py --sizes 4400 100000
    python bench/edge_trial.py --quality cloud --vectors-from runs/qdrant

``--quality C`` compares retrieval quality on MTRAG-UN collection C: the passages and their real dense vectors are
copied from an existing index of that collection (``--vectors-from``: a qdrant-client store folder, either layout),
so nothing is embedded, into a fresh qdrant-client store and a fresh qdrant-edge store; then both answer the
collection's dev queries (the last user turn) with the hybrid retriever, scored as bench/retrieval_bench.py scores.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from scale_bench import DIM, HashEmbedder, passages, percentile, rss_mb, timed, workload  # noqa: E402

from askfirst.retrieval.fusion import reciprocal_rank_fusion  # noqa: E402
from askfirst.retrieval.qdrant_store import point_id  # noqa: E402
from askfirst.retrieval.sparse import document_vector, query_vector  # noqa: E402

AVG_LEN = 100.0  # the synthetic passages' mean length: about 100 words drawn from an already tokenized vocabulary


def _edge():
    import qdrant_edge as qe

    return qe


def write(folder: Path, n: int, words, p) -> dict:
    qe = _edge()
    config = qe.EdgeConfig(vectors={"dense": qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine)},
                           sparse_vectors={"bm25": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)})
    shard = qe.EdgeShard.create(str(folder), config)
    embedder = HashEmbedder()
    start = time.perf_counter()
    for batch in passages(n, words, p):
        for i in range(0, len(batch), 1000):
            part = batch[i : i + 1000]
            vectors = embedder.embed([x.text for x in part])
            points = []
            for x, v in zip(part, vectors, strict=True):
                sparse = document_vector(f"{x.title} {x.text}", avg_len=AVG_LEN)
                points.append(qe.Point(point_id(x.passage_id), {"dense": v.tolist(), "bm25": qe.SparseVector(indices=sparse.indices, values=sparse.values)},
                                       {"passage_id": x.passage_id, "doc_id": x.doc_id, "title": x.title, "text": x.text}))
            shard.update(qe.UpdateOperation.upsert_points(points))
    written = time.perf_counter() - start
    start = time.perf_counter()
    shard.optimize()
    optimised = time.perf_counter() - start
    shard.flush()
    shard.close()
    return {"passages": n, "write_passages_per_s": n / written, "optimise_s": optimised}


def measure(folder: Path, qs: list[str], budget_s: float) -> dict:
    qe = _edge()
    row: dict = {"rss_mb_start": rss_mb()}
    start = time.perf_counter()
    shard = qe.EdgeShard.load(str(folder))
    row["open_s"] = time.perf_counter() - start
    row["rss_mb_open"] = rss_mb()
    embedder = HashEmbedder()
    vectors = {q: embedder.embed([q])[0].tolist() for q in qs}

    def dense(q):
        return [h.payload["passage_id"] for h in shard.query(qe.QueryRequest(limit=10, query=qe.Query.Nearest(vectors[q], using="dense"),
                                                                              with_payload=["passage_id"]))]

    def bm25(q):
        v = query_vector(q)
        if v is None:
            return []
        return [h.payload["passage_id"] for h in shard.query(qe.QueryRequest(
            limit=10, query=qe.Query.Nearest(qe.SparseVector(indices=v.indices, values=v.values), using="bm25"), with_payload=["passage_id"]))]

    def hybrid(q):
        fused = reciprocal_rank_fusion([r for r in (bm25(q), dense(q)) if r], k=60)[:10]
        return shard.retrieve([point_id(pid) for pid, _ in fused], True, False)

    for name, fn in (("bm25", bm25), ("dense", dense), ("hybrid", hybrid)):
        ms = timed(fn, qs, budget_s)
        row[name] = {"n": len(ms), "p50_ms": percentile(ms, 0.5), "p95_ms": percentile(ms, 0.95)}
    row["rss_mb_peak"] = rss_mb()
    shard.close()
    return row


def quality(collection: str, vectors_from: Path) -> dict:
    """Hybrid nDCG@5 / Recall@10 of both embedded engines on one MTRAG-UN collection, from the same vectors."""
    import statistics

    from qdrant_client import QdrantClient

    from askfirst.datasets.mtrag import load_mtrag_tasks
    from askfirst.datasets.shared_data import shared_data_dir
    from askfirst.evaluation.retrieval_metrics import ndcg_at_k, recall_at_k, unique_in_order
    from askfirst.retrieval.edge_store import EdgeStore
    from askfirst.retrieval.embedder import get_embedder
    from askfirst.retrieval.hybrid import HybridRetriever
    from askfirst.retrieval.indexer import write_passages
    from askfirst.retrieval.lexical import open_lexical
    from askfirst.retrieval.qdrant_store import PassageStore, passage_from_payload

    client = QdrantClient(path=str(vectors_from))
    rows, offset = [], None
    while True:
        records, offset = client.scroll(f"mtrag_{collection}", limit=512, offset=offset, with_payload=True, with_vectors=True)
        rows += [(passage_from_payload(r.payload), r.vector["dense"] if isinstance(r.vector, dict) else r.vector) for r in records]
        if offset is None:
            break
    client.close()
    vectors = {p.passage_id: np.asarray(v, dtype=np.float32) for p, v in rows}

    class Stored:  # the copied vectors stand in for the embedder at build time
        dim = DIM

        def embed(self, texts, batch_size=64):
            return np.stack([next_vectors.pop(0) for _ in texts])

    tasks = [t for t in load_mtrag_tasks(shared_data_dir(None)) if t.collection == collection and t.qrels]
    base = Path(tempfile.mkdtemp(prefix="askfirst-edge-quality-"))
    out = {"collection": collection, "passages": len(rows), "queries": len(tasks)}
    try:
        for name, store in (("qdrant-client", PassageStore(collection="q", dim=DIM, path=base / "client")),
                            ("qdrant-edge", EdgeStore(collection="q", dim=DIM, path=base / "edge"))):
            passages = [p for p, _ in rows]
            next_vectors = [vectors[p.passage_id] for p in passages]
            write_passages(passages, store, Stored(), batch_size=len(passages))
            retriever = HybridRetriever(store, get_embedder("all-MiniLM-L6-v2"), lexical=open_lexical("auto", store, folder=base / f"{name}-bm25s"))
            ndcg, recall = [], []
            for task in tasks:
                ranked = unique_in_order([h.passage.doc_id for h in retriever.search(task.conversation[-1]["content"], 10)])
                ndcg.append(ndcg_at_k(ranked, task.qrels, 5))
                recall.append(recall_at_k(ranked, task.qrels, 10))
            out[name] = {"lexical": type(retriever.lexical).__name__, "ndcg@5": statistics.fmean(ndcg), "recall@10": statistics.fmean(recall)}
            store.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[4400, 100_000])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--store", default=None, help="keep the shards here (default: a temporary folder)")
    parser.add_argument("--quality", default=None, metavar="COLLECTION", help="compare quality on this MTRAG-UN collection instead")
    parser.add_argument("--vectors-from", default="runs/qdrant", help="the qdrant-client store holding mtrag_<COLLECTION>'s vectors")
    parser.add_argument("--child", nargs=2, metavar=("FOLDER", "QUERIES_JSON"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quality:
        print(json.dumps(quality(args.quality, Path(args.vectors_from)), indent=2))
        return 0
    if args.child:
        print(json.dumps(measure(Path(args.child[0]), json.loads(Path(args.child[1]).read_text()), args.budget)))
        return 0
    _, words, p, _, base = workload(args.queries, args.store, prefix="askfirst-edge-")
    rows = []
    try:
        for n in args.sizes:
            folder = base / f"edge{n}"
            written = write(folder, n, words, p) if not folder.exists() else {"passages": n}
            out = subprocess.run([sys.executable, __file__, "--budget", str(args.budget), "--child", str(folder), str(base / "queries.json")],
                                 capture_output=True, text=True, check=True)
            rows.append(written | json.loads(out.stdout.strip().splitlines()[-1]))
            print(json.dumps(rows[-1]), flush=True)
    finally:
        if not args.store:
            shutil.rmtree(base, ignore_errors=True)
    print("\n| passages | write p/s | optimise s | open s | BM25 p50/p95 ms | dense p50/p95 ms | hybrid p50/p95 ms | RSS after open / peak MB |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        cells = " | ".join(f"{r[k]['p50_ms']:.1f} / {r[k]['p95_ms']:.1f}" for k in ("bm25", "dense", "hybrid"))
        print(f"| {r['passages']} | {r.get('write_passages_per_s', float('nan')):.0f} | {r.get('optimise_s', float('nan')):.1f} | {r['open_s']:.2f} | {cells} | "
              f"{r['rss_mb_open']:.0f} / {r['rss_mb_peak']:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
