"""MAF-RAG's hybrid score as the retrieval gate's signal, against the top cosine, from a `tune-threshold --signal
top-cosine` run (no LM).

EVR ranks passages by S = 0.7 * cosine + 0.3 * KeyMatch (``mafrag.cosine_weight`` / ``keymatch_weight``). Here the
signal is the best S over the searched query's dense top ``--k``. It is read for each query the run recorded in its
``gate_rows.jsonl`` (the standalone rewrite the program searched with), over the same index. Printed for both signals:
the AUC against ANSWERABLE, and the threshold `tune-threshold` would choose, with the share of each class it flags.

    ASKFIRST_DATA_DIR=../shared/data python bench/hybrid_gate_signal.py runs/threshold-…  [--k 24]
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from askfirst.config import load_config
from askfirst.datasets.jsonl import read_jsonl
from askfirst.optimizers.gate_tuning import TOP_COSINE, choose_threshold, gate_table
from askfirst.programs.base import Resources
from askfirst.programs.mafrag.expansion import hybrid_score, keywords
from askfirst.retrieval.embedder import get_embedder
from askfirst.retrieval.factory import open_store

HYBRID = dataclasses.replace(TOP_COSINE, name="hybrid", setting="(none)", candidates=tuple(round(0.1 + i * 0.01, 2) for i in range(61)))


def hybrid_scores(config, queries: list[str], *, k: int) -> list[float]:
    """The best S_hybrid of each query over its dense top ``k`` (the ``mafrag`` section's weights), as EVR scores them."""
    resources = Resources(retriever=None, store=open_store(config), embedder=get_embedder(config.retriever.embedding_model))
    weights = config.mafrag
    return [max((hybrid_score(keywords(query), passage, cosine, cosine_weight=weights.cosine_weight, keymatch_weight=weights.keymatch_weight)
                 for passage, cosine in resources.dense(query, k)), default=0.0) for query in queries]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="A tune-threshold --signal top-cosine run folder")
    parser.add_argument("--k", type=int, default=24, help="Dense hits scored per query (EVR's evr_k is 24)")
    parser.add_argument("--max-answerable-rate", type=float, default=0.10)
    args = parser.parse_args()
    config = load_config(args.run / "config.yaml")
    rows = [row for _, row in read_jsonl(args.run / "gate_rows.jsonl")]
    rows = [r for r in rows if r.get("top_cosine") is not None]
    for row, score in zip(rows, hybrid_scores(config, [r["query"] for r in rows], k=args.k), strict=True):
        row["hybrid"] = score
    for signal in (TOP_COSINE, HYBRID):
        result = choose_threshold(rows, max_answerable_rate=args.max_answerable_rate, signal=signal)
        flagged = gate_table(rows, signal, candidates=[result["threshold"]])[0] if result["threshold"] is not None else {}
        shares = ", ".join(f"{label} {share:.3f}" for label, share in flagged.items() if label != "threshold")
        print(f"{signal.name}: {len(rows)} questions, AUC {result['auc']:.3f}, threshold {result['threshold']} flags {shares}")


if __name__ == "__main__":
    main()
