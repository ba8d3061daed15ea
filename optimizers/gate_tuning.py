"""Tune the askfirst program's two label-free gates on a question set with answerability labels.

- ``top-cosine``, the retrieval gate (``askfirst.min_top_cosine``): the top dense cosine of the query the program
  searches with (MAF-RAG's VOR confidence); a question below the threshold is UNANSWERABLE. Only the standalone-question
  stage runs (one LM call for a follow-up, none for a first turn).
- ``referent``, the unnamed-referent check (``askfirst.referent_threshold``): P(UNDERSPECIFIED) from the check's label
  log-probabilities; a question at or above the threshold is asked which thing it means. One LM call per question.

Either way the threshold chosen is the one that flags the most questions while its share of flagged questions that
should be answered (ANSWERABLE or PARTIAL) stays within ``max_answerable_rate``: a gate's cost is counted in answers it
withholds, the measure the project's route targets are set in ("I don't know", or a clarifying question, on fewer than
15% of ANSWERABLE tasks).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import dspy

from askfirst.datasets.jsonl import each_resumably
from askfirst.programs.base import probe
from askfirst.programs.common.conversation import question_and_history

SHOULD_ANSWER = ("ANSWERABLE", "PARTIAL")


def _top_cosine(program, question: str, history: str) -> dict:
    found = probe(program, "retrieval", question, history)
    return {"query": found["query"], "top_cosine": found["top_cosine"]}


def _referent(program, question: str, history: str) -> dict:
    check = probe(program, "referent", question, history)  # what the check wrote is kept beside its probability, for reading the table
    return {"query": question, "p_underspecified": check["p_underspecified"], "unnamed": check["unnamed"], "label": check["label"]}


@dataclass(frozen=True)
class GateSignal:
    """What a gate reads and which way it flags.

    Attributes:
        name: The record key of the signal (``top_cosine``, ``p_underspecified``).
        setting: The ``askfirst`` config field the threshold goes into.
        flags_below: True when a question below the threshold is flagged (top cosine); False when one at or above it is.
        target: The answerability class the gate is for; its AUC is against ANSWERABLE.
        candidates: The thresholds tried.
        read: ``read(program, question, history)``: the record of one question, the signal under ``name``, measured by
            the program's own stages.
    """

    name: str
    setting: str
    flags_below: bool
    target: str
    candidates: tuple[float, ...]
    read: Callable[..., dict]

    def flags(self, value: float, threshold: float) -> bool:
        return value < threshold if self.flags_below else value >= threshold


TOP_COSINE = GateSignal("top_cosine", "min_top_cosine", True, "UNANSWERABLE", tuple(round(0.2 + i * 0.01, 2) for i in range(51)), _top_cosine)
REFERENT = GateSignal("p_underspecified", "referent_threshold", False, "UNDERSPECIFIED", tuple(round(0.05 + i * 0.01, 2) for i in range(91)),
                      _referent)
SIGNALS = {"top-cosine": TOP_COSINE, "referent": REFERENT}


def measure(program, example, signal: GateSignal) -> dict:
    """``{"query", signal.name, …, "answerability"}`` for one question."""
    question, history, _ = question_and_history(example.conversation, program.program_config)
    return {**signal.read(program, question, history), "answerability": example.answerability}


def collect_signals(program, examples: list[dspy.Example], *, signal: GateSignal = TOP_COSINE, checkpoint: Path | None = None) -> list[dict]:
    """Every question's signal, appended to ``checkpoint`` as it is done (a rerun measures only the rest; a question
    that failed is recorded with its error and tried again)."""
    done = each_resumably(examples, lambda example: measure(program, example, signal), checkpoint=checkpoint, what="gate tuning")
    return [done[e.id] for e in examples if e.id in done and "error" not in done[e.id] and done[e.id].get(signal.name) is not None]


def gate_table(rows: list[dict], signal: GateSignal, *, candidates=None) -> list[dict]:
    """For each threshold, the share of each answerability class the gate would flag."""
    classes = sorted({r["answerability"] for r in rows})
    table = []
    for t in candidates or signal.candidates:
        row = {"threshold": t}
        for label in classes:
            values = [r[signal.name] for r in rows if r["answerability"] == label]
            row[label] = sum(signal.flags(v, t) for v in values) / len(values)
        should = [r[signal.name] for r in rows if r["answerability"] in SHOULD_ANSWER]
        row["should_answer"] = sum(signal.flags(v, t) for v in should) / len(should) if should else 0.0
        table.append(row)
    return table


def separation(rows: list[dict], signal: GateSignal) -> float | None:
    """How well the signal tells its target class from ANSWERABLE questions: the probability that a target question
    is the one flagged first of a (target, ANSWERABLE) pair (ROC AUC, ties counting half); ``None`` without both."""
    from scipy.stats import mannwhitneyu

    target = [r[signal.name] for r in rows if r["answerability"] == signal.target]
    answerable = [r[signal.name] for r in rows if r["answerability"] == "ANSWERABLE"]
    if not answerable or not target:
        return None
    first, second = (answerable, target) if signal.flags_below else (target, answerable)
    return float(mannwhitneyu(first, second).statistic) / (len(answerable) * len(target))


def choose_threshold(rows: list[dict], *, max_answerable_rate: float, signal: GateSignal = TOP_COSINE, candidates=None) -> dict:
    """``{"threshold", "table", "n", "auc", "signal"}``: the candidate that flags the most questions while flagging at
    most ``max_answerable_rate`` of those that should be answered (``threshold`` is ``None`` when every candidate flags
    more), and the signal's ``separation``."""
    if not rows:
        raise RuntimeError("no question's signal could be measured; see the warnings above")
    table = gate_table(rows, signal, candidates=candidates)
    within = [r["threshold"] for r in table if r["should_answer"] <= max_answerable_rate]
    best = (max(within) if signal.flags_below else min(within)) if within else None
    return {"threshold": best, "table": table, "n": len(rows), "auc": separation(rows, signal), "signal": signal.name}
