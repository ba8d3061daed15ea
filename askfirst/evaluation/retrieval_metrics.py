"""Recall@k and nDCG@k with pytrec_eval's (trec_eval's) definitions.

Recall@k = |relevant in the top k| / |relevant|; nDCG@k = DCG@k / IDCG@k with gain = the judged
relevance and discount log2(rank + 1), the ideal ranking built from all judged relevant documents.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def recall_at_k(ranked: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    relevant = {d for d, r in qrels.items() if r > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def ndcg_at_k(ranked: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    dcg = sum(qrels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if qrels.get(d, 0) > 0)
    ideal = sorted((r for r in qrels.values() if r > 0), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def unique_in_order(ids: Sequence[str]) -> list[str]:
    """Collapse chunk-level hits to their documents' ids, keeping the first (best) rank of each."""
    return list(dict.fromkeys(ids))
