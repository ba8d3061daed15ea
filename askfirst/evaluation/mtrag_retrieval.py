"""MTRAG's own retrieval figures, computed as its ``run_retrieval_eval.py`` computes them from our export.

That script scores the export's contexts (at most ``MTRAG_CONTEXTS`` documents a task) with pytrec_eval at k = 1, 3
and 5; a collection's figure is the mean over its tasks that have qrels (and a ranking: an export always gives one),
and the overall figure weights each collection by its number of records, tasks without qrels included. So it is not
askfirst's ``ranking_recall@10`` / ``ranking_ndcg@5``, a plain mean over scored tasks at other cut-offs; both are
reported, each under its own name.
"""

from __future__ import annotations

from collections import defaultdict

from askfirst.evaluation.exports import MTRAG_COLLECTIONS, MTRAG_CONTEXTS, NO_RANKING
from askfirst.evaluation.retrieval_metrics import ndcg_at_k, recall_at_k

OFFICIAL_K = (1, 3, 5)


def official_retrieval(examples: list, records: list[dict]) -> dict:
    """``{"collections": {name: {"records", "scored", "nDCG@k", "Recall@k"}}, "all": {...}}`` as run_retrieval_eval.py
    prints them (``records`` is a collection's weight, ``scored`` the tasks its mean is over)."""
    groups: dict[str, dict] = defaultdict(lambda: {"records": 0, "rows": []})
    for example, rec in zip(examples, records, strict=True):
        collection = example.get("collection") or ""
        group = groups[MTRAG_COLLECTIONS.get(collection, collection)]
        group["records"] += 1
        qrels = dict(example.get("qrels") or {})
        if qrels:
            docs = (rec.get("ranked_docs") or rec.get("retrieved_docs") or [NO_RANKING])[:MTRAG_CONTEXTS]
            group["rows"].append({f"{name}@{k}": fn(docs, qrels, k) for k in OFFICIAL_K
                                  for name, fn in (("nDCG", ndcg_at_k), ("Recall", recall_at_k))})
    table = {}
    for name, group in sorted(groups.items()):
        rows = group["rows"]
        table[name] = {"records": group["records"], "scored": len(rows)} | (
            {m: round(sum(r[m] for r in rows) / len(rows), 5) for m in rows[0]} if rows else {})
    scored = [t for t in table.values() if t["scored"]]
    total = sum(t["records"] for t in scored)
    overall = {"records": total, "scored": sum(t["scored"] for t in scored)}
    if scored:
        overall |= {m: sum(t[m] * t["records"] for t in scored) / total for m in scored[0] if "@" in m}
    return {"collections": table, "all": overall}
