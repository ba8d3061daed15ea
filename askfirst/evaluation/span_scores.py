"""SQuAD's EM and F1 on the short answer span of each reply (``eval.short_span``).

SQuAD's measures compare a short span with short gold answers; the whole-reply ``answer_em`` / ``answer_f1`` do not.
Here the judge LM extracts the short answer from an answering reply (the extractor Disambig-F1 uses), and a reply that
does not answer predicts the empty span, so on a SQuAD 2.0 set an "I don't know" on a question with no gold answer
scores 1, as in SQuAD v2's script.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from askfirst.datasets.jsonl import each_resumably
from askfirst.evaluation.answer_metrics import best_token_f1, exact_match
from askfirst.programs.common.routes import ANSWERING_ROUTES

SPANS_FILE = "spans.jsonl"  # per-question rows of span_scores


def span_row(example, rec: dict, extract: Callable[[str, str], str]) -> dict:
    """One question's span, EM and F1; empty where it has no gold answers and is not UNANSWERABLE."""
    golds = list(example.get("gold_answers") or [])
    if not golds and example.get("answerability") != "UNANSWERABLE":
        return {}
    question = example.conversation[-1]["content"]
    span = extract(question, rec["answer"]) if rec["route"] in ANSWERING_ROUTES else ""
    return {"span": span, "span_em": float(exact_match(span, golds)), "span_f1": best_token_f1(span, golds)}


def span_scores(examples: list, records: list[dict], *, extract: Callable[[str, str], str], run_dir: Path) -> dict:
    """Means of ``span_em`` and ``span_f1`` over the questions they apply to; rows go to ``spans.jsonl`` (resumable).

    Args:
        examples: The evaluated questions, in the order of ``records``.
        records: Their prediction records (``route``, ``answer``).
        extract: ``extract(question, long_answer) -> short answer``.
        run_dir: The run folder the rows are written to.

    Returns:
        ``span_em``, ``span_f1`` and ``n_span`` (``n_span_failed`` where extraction raised).
    """
    record = dict(zip((e.id for e in examples), records, strict=True))
    done = each_resumably(examples, lambda e: span_row(e, record[e.id], extract), checkpoint=run_dir / SPANS_FILE,
                          what="short-span scoring")
    rows = [done[e.id] for e in examples if "span_em" in done[e.id]]
    failed = sum("error" in done[e.id] for e in examples)
    summary: dict = {"n_span": len(rows)} | ({"n_span_failed": failed} if failed else {})
    for key in ("span_em", "span_f1"):
        summary[key] = sum(r[key] for r in rows) / len(rows) if rows else None
    return summary
