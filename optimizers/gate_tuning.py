"""Tune the askfirst program's retrieval gate (``askfirst.min_top_cosine``) on a question set with answerability labels.

The gate's signal is the top dense cosine of the query the program searches with (MAF-RAG's VOR confidence). For each
question only the program's standalone-question stage runs (one LM call for a follow-up, none for a first turn), so a
few hundred questions cost minutes. The threshold chosen is the highest whose share of gated questions that should be
answered (ANSWERABLE or PARTIAL) stays within ``max_answerable_rate``: the gate's cost is counted in wrongly refused
answers, the measure the issue's target is set in ("I don't know" on fewer than 15% of ANSWERABLE tasks).
"""

from __future__ import annotations

from pathlib import Path

import dspy

from askfirst.datasets.jsonl import each_resumably
from askfirst.programs.common.conversation import question_and_history

DEFAULT_CANDIDATES = tuple(round(0.2 + i * 0.01, 2) for i in range(51))
SHOULD_ANSWER = ("ANSWERABLE", "PARTIAL")


def gate_signal(program, example) -> dict:
    """``{"query", "top_cosine", "answerability"}`` for one question, from the program's own query stage."""
    config = program.program_config
    question, history, _ = question_and_history(example.conversation, max_question_chars=config.max_question_chars,
                                                history_turns=config.history_turns)
    query = program.search_query(question, history)
    return {"query": query, "top_cosine": program.top_cosine(query), "answerability": example.answerability}


def collect_signals(program, examples: list[dspy.Example], *, checkpoint: Path | None = None) -> list[dict]:
    """Every question's signal, appended to ``checkpoint`` as it is done (a rerun measures only the rest; a question
    that failed is recorded with its error and tried again)."""
    done = each_resumably(examples, lambda example: gate_signal(program, example), checkpoint=checkpoint, what="gate tuning")
    return [done[e.id] for e in examples if e.id in done and "error" not in done[e.id] and done[e.id]["top_cosine"] is not None]


def gate_table(rows: list[dict], *, candidates=DEFAULT_CANDIDATES) -> list[dict]:
    """For each threshold, the share of each answerability class the gate would refuse."""
    classes = sorted({r["answerability"] for r in rows})
    table = []
    for t in candidates:
        row = {"threshold": t}
        for label in classes:
            scores = [r["top_cosine"] for r in rows if r["answerability"] == label]
            row[label] = sum(s < t for s in scores) / len(scores)
        should = [r["top_cosine"] for r in rows if r["answerability"] in SHOULD_ANSWER]
        row["should_answer"] = sum(s < t for s in should) / len(should) if should else 0.0
        table.append(row)
    return table


def separation(rows: list[dict]) -> float | None:
    """How well the signal tells ANSWERABLE from UNANSWERABLE questions: the probability that an ANSWERABLE one has
    the higher top cosine (ROC AUC, ties counting half); ``None`` without both classes."""
    from scipy.stats import mannwhitneyu

    answerable = [r["top_cosine"] for r in rows if r["answerability"] == "ANSWERABLE"]
    unanswerable = [r["top_cosine"] for r in rows if r["answerability"] == "UNANSWERABLE"]
    if not answerable or not unanswerable:
        return None
    return float(mannwhitneyu(answerable, unanswerable).statistic) / (len(answerable) * len(unanswerable))


def choose_threshold(rows: list[dict], *, max_answerable_rate: float, candidates=DEFAULT_CANDIDATES) -> dict:
    """``{"threshold", "table", "n", "auc"}``: the highest candidate refusing at most ``max_answerable_rate`` of the
    questions that should be answered (``threshold`` is ``None`` when even the lowest refuses more), and the signal's
    ``separation``."""
    if not rows:
        raise RuntimeError("no question's signal could be measured; see the warnings above")
    table = gate_table(rows, candidates=candidates)
    within = [r["threshold"] for r in table if r["should_answer"] <= max_answerable_rate]
    return {"threshold": max(within) if within else None, "table": table, "n": len(rows), "auc": separation(rows)}
