"""Per-question scores of a program's prediction against a labelled example, and their aggregation."""

from __future__ import annotations

from collections import Counter, defaultdict

from askfirst.evaluation.ambiguity_metrics import str_em
from askfirst.evaluation.answer_metrics import best_token_f1, contains_any, exact_match
from askfirst.evaluation.calibration import answerability_calibration
from askfirst.evaluation.retrieval_metrics import ndcg_at_k, recall_at_k, unique_in_order
from askfirst.evaluation.stats import proportion_ci
from askfirst.programs.common.routes import ANSWERING_ROUTES, LABEL_TO_ROUTE, ROUTES


def expected_route(example) -> str:
    return LABEL_TO_ROUTE[example.answerability]


def _outcome(example, route: str, answer_ok: bool | None) -> bool:
    expected = expected_route(example)
    if route != expected:
        return False
    # Where gold answers exist the reply must also contain one; otherwise the route is the outcome.
    return answer_ok if answer_ok is not None else True


def score_prediction(example, prediction: dict, *, k: int = 5) -> dict:
    """Scores for one question.

    Args:
        example: Has ``answerability``, ``gold_answers``, ``gold_passages`` and optionally ``qrels``.
        prediction: The program's output as a dict (``route``, ``answer``, ``citations``, ``retrieved_docs``, ``options``).
        k: Cut-off for recall and nDCG.

    Returns:
        Flat dict of numbers/bools; retrieval scores are ``None`` for questions with no gold passages.
    """
    route = prediction["route"]
    golds = list(example.get("gold_answers") or [])
    qrels = dict(example.get("qrels") or {}) or {d: 1 for d in example.get("gold_passages") or []}
    docs = unique_in_order(prediction.get("retrieved_docs") or [])
    ranked = unique_in_order(prediction.get("ranked_docs") or docs)
    answer_ok = contains_any(prediction["answer"], golds) if golds else None
    cited = set(prediction.get("citations_docs") or prediction.get("citations") or [])
    options = [o.lower() for o in example.get("clarification_options") or []]
    reply = (prediction["answer"] + " " + " ".join(prediction.get("options") or [])).lower()
    extras = prediction.get("extras") or {}
    return {
        "route": route,
        "expected_route": expected_route(example),
        "route_correct": route == expected_route(example),
        "outcome_correct": _outcome(example, route, answer_ok),
        "answer_correct": answer_ok,
        "answer_f1": best_token_f1(prediction["answer"], golds) if golds else None,
        "answer_em": exact_match(prediction["answer"], golds) if golds else None,
        # The IDK rate on unanswerable questions (URASys's measure for them).
        "idk_on_unanswerable": route == "idk" if expected_route(example) == "idk" else None,
        f"recall@{k}": recall_at_k(docs, qrels, k) if qrels else None,
        f"ndcg@{k}": ndcg_at_k(docs, qrels, k) if qrels else None,
        # MTRAG's retrieval cut-offs, on the program's whole ranking rather than the k evidence passages.
        "ranking_recall@10": recall_at_k(ranked, qrels, 10) if qrels else None,
        "ranking_ndcg@5": ndcg_at_k(ranked, qrels, 5) if qrels else None,
        "citation_hit": bool(cited & set(qrels)) if qrels and route in ANSWERING_ROUTES else None,
        "clarification_hit": any(o in reply for o in options) if options and route == "clarify" else None,
        # ASQA / AmbigNQ: the share of interpretations whose short answer the (long) answer contains.
        "str_em": str_em(prediction["answer"], [aliases for _, aliases in example.get("qa_pairs")]) if example.get("qa_pairs") else None,
        **_evidence_prf(docs, qrels),
        # The program's own stage, where it reports one (R2RAG's path, MAF-RAG's answering phase); shares in aggregate().
        "stage": extras.get("stage"),
        # P(answerable) where an assessment gave one (a gated question's forced 0 has no source); aggregate() calibrates it.
        "p_answerable": extras.get("p_answerable") if extras.get("probability_source") else None,
        "failed": route == "error",
    }


def _evidence_prf(docs: list[str], qrels: dict) -> dict:
    """Precision, recall and F1 of the evidence documents as a set against the relevant ones (MAF-RAG's measure)."""
    relevant = {d for d, grade in qrels.items() if grade > 0}
    if not relevant:
        return {"evidence_precision": None, "evidence_recall": None, "evidence_f1": None}
    hits = len(set(docs) & relevant)
    precision, recall = (hits / len(set(docs)) if docs else 0.0), hits / len(relevant)
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    return {"evidence_precision": precision, "evidence_recall": recall, "evidence_f1": f1}


def _mean(values) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def aggregate(rows: list[dict]) -> dict:
    """Means over questions (a metric skips questions where it is ``None``), per-route and confusion tables, and the
    calibration of P(answerable) where the program gives one."""
    keys = [k for k in rows[0] if k not in ("route", "expected_route", "stage", "p_answerable")] if rows else []
    summary = {k: _mean(r[k] for r in rows) for k in keys}
    summary["n"] = len(rows)
    summary |= answerability_calibration(rows)
    stages = Counter(r["stage"] for r in rows if r.get("stage"))
    if stages:
        summary["stage_shares"] = {stage: count / len(rows) for stage, count in sorted(stages.items())}
    per_route = {}
    for route in ROUTES:
        sub = [r for r in rows if r["expected_route"] == route]
        if sub:
            per_route[route] = {"n": len(sub), "route_accuracy": _mean(r["route_correct"] for r in sub),
                                "route_accuracy_ci95": list(proportion_ci(sum(bool(r["route_correct"]) for r in sub), len(sub))),
                                "outcome_accuracy": _mean(r["outcome_correct"] for r in sub)}
    confusion: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        confusion[r["expected_route"]][r["route"]] += 1
    summary["per_route"] = per_route
    summary["confusion"] = {k: dict(v) for k, v in confusion.items()}
    return summary


RANKING_METRICS = ("ranking_recall@10", "ranking_ndcg@5")


def per_collection(scores: list[dict]) -> dict:
    """Ranking metrics per collection, and their unweighted mean over collections (``unweighted_collection_mean_*``).

    The summary's ``ranking_recall@10`` / ``ranking_ndcg@5`` are plain means over the scored questions; MTRAG's own
    script weights collections by all their records (``mtrag_retrieval.official_retrieval``, reported beside them).
    Returns an empty dict when the questions carry no ``collection``.
    """
    groups: dict[str, list[dict]] = defaultdict(list)
    for s in scores:
        if s.get("collection"):
            groups[s["collection"]].append(s)
    if not groups:
        return {}
    table = {name: {"n": len(rows)} | {m: _mean(r[m] for r in rows) for m in RANKING_METRICS} for name, rows in sorted(groups.items())}
    macro = {f"unweighted_collection_mean_{m}": _mean(row[m] for row in table.values()) for m in RANKING_METRICS}
    return {"per_collection": table} | macro
