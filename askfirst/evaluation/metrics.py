"""Every metric askfirst reports, named once: what it is called, which way is better, which questions it
applies to, how it aggregates, and where it is shown. ``eval``, ``ablate``, ``runs``, the plots and the bench
reports read their columns from here; ``scoring.py`` and the judges compute the values.
"""

from __future__ import annotations

from dataclasses import dataclass

# Where a metric is shown: eval's summary table, ablate's comparison, `askfirst runs`, the runs plot, bench/compile_report.py.
VIEWS = ("eval", "ablate", "runs", "plot", "report")


@dataclass(frozen=True)
class Metric:
    """One reported number.

    Attributes:
        name: Its key in ``scores.jsonl`` / ``metrics.json`` (``{k}`` stands for the evidence cut-off).
        label: A short column header.
        applies_to: Which questions it is computed on (others give ``None`` and do not count).
        aggregate: How the per-question values become the run's figure.
        higher_is_better: Which way is better.
        per_question: Whether each question has a value (so ablate pairs them); else it is a figure of the whole run.
        section: Where a whole-run figure sits in ``metrics.json`` (``mtrag``: the judged MTRAGEval scores).
        views: Where it is shown (``VIEWS``).
    """

    name: str
    label: str
    applies_to: str = "every question"
    aggregate: str = "mean"
    higher_is_better: bool = True
    per_question: bool = True
    section: str | None = None
    views: frozenset[str] = frozenset()

    def key(self, *, k: int = 5) -> str:
        return self.name.format(k=k)

    def mlflow_key(self, *, k: int = 5) -> str:
        """The name MLflow stores it under (it does not allow '@')."""
        return self.key(k=k).replace("@", "_at_")


def _m(name, label, views, **kw) -> Metric:
    return Metric(name, label, views=frozenset(views.split()), **kw)


METRICS: tuple[Metric, ...] = (
    _m("outcome_correct", "outcome", "eval ablate runs plot report", applies_to="every question: the expected route, and a gold answer where there is one"),
    _m("route_correct", "route", "eval ablate runs plot report"),
    _m("answer_correct", "answer contains gold", "eval runs", applies_to="questions with gold answers"),
    # SQuAD's EM and F1 score a short answer span; here the whole reply is scored against the short gold answers.
    _m("answer_em", "EM (whole reply)", "ablate", applies_to="questions with gold answers (the whole reply, not SQuAD's short span)"),
    _m("answer_f1", "F1 (whole reply)", "eval ablate", applies_to="questions with gold answers (the whole reply, not SQuAD's short span)"),
    _m("idk_on_unanswerable", "IDK on unanswerable", "ablate", applies_to="UNANSWERABLE questions"),
    _m("recall@{k}", "recall@k", "eval ablate runs", applies_to="questions with gold passages"),
    _m("ndcg@{k}", "nDCG@k", "eval", applies_to="questions with gold passages"),
    _m("ranking_recall@10", "Recall@10", "eval ablate runs plot report", applies_to="questions with gold passages"),
    _m("ranking_ndcg@5", "nDCG@5", "eval ablate runs plot report", applies_to="questions with gold passages"),
    _m("unweighted_collection_mean_ranking_recall@10", "Recall@10, unweighted over collections", "eval", per_question=False,
       aggregate="mean over collections of their means"),
    _m("unweighted_collection_mean_ranking_ndcg@5", "nDCG@5, unweighted over collections", "eval", per_question=False,
       aggregate="mean over collections of their means"),
    _m("evidence_f1", "evidence F1", "eval ablate", applies_to="questions with gold passages"),
    _m("str_em", "STR-EM", "eval ablate", applies_to="questions with readings (qa_pairs: ASQA, AmbigNQ)"),
    _m("citation_hit", "cites gold", "eval", applies_to="answered questions with gold passages"),
    _m("clarification_hit", "names an option", "eval", applies_to="clarifications of questions with options"),
    _m("answerability_auc", "AUC of P(answerable)", "eval runs", per_question=False,
       applies_to="questions the program assessed (P(answerable) recorded): ANSWERABLE / PARTIAL above the others",
       aggregate="ROC AUC"),
    _m("answerability_brier", "Brier of P(answerable)", "eval", higher_is_better=False, per_question=False,
       applies_to="questions the program assessed", aggregate="mean squared error against answerable"),
    _m("answerability_ece", "ECE of P(answerable)", "eval", higher_is_better=False, per_question=False,
       applies_to="questions the program assessed", aggregate="expected calibration error, 10 equal-width bins"),
    _m("failed", "failed", "eval", higher_is_better=False),
    _m("HM", "HM", "runs plot report", per_question=False, section="mtrag", aggregate="harmonic mean of the conditioned means"),
    _m("seconds_per_question", "s/question", "eval runs report", higher_is_better=False, per_question=False),
    _m("lm_calls_per_question", "LM calls/question", "eval runs report", higher_is_better=False, per_question=False),
    _m("tokens_in_per_question", "input tokens/question", "eval", higher_is_better=False, per_question=False),
    _m("tokens_out_per_question", "output tokens/question", "eval", higher_is_better=False, per_question=False),
    _m("cost_usd", "cost (USD)", "eval", higher_is_better=False, per_question=False, aggregate="sum"),
)
BY_NAME = {m.name: m for m in METRICS}


def shown_in(view: str) -> tuple[Metric, ...]:
    """The metrics a view shows, in registry order."""
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; views: {', '.join(VIEWS)}")
    return tuple(m for m in METRICS if view in m.views)
