"""The metric an optimiser maximises, chosen by ``compile.objective``."""

from __future__ import annotations

from askfirst.optimizers.feedback_metrics import HMMetric, OutcomeMetric, RecallMetric, _Metric


class MeanOfMetrics(_Metric):
    """The unweighted mean of several metrics' scores, with all their feedback.

    This is the documented scalar choice for objective 'both': recall and outcome count equally.
    """

    def __init__(self, *metrics: _Metric):
        self.metrics = metrics
        self.name = "mean(" + ",".join(m.name for m in metrics) + ")"

    def score(self, gold, pred) -> tuple[float, str]:
        parts = [m.score(gold, pred) for m in self.metrics]
        return sum(p[0] for p in parts) / len(parts), "\n".join(f"[{m.name}] {p[1]}" for m, p in zip(self.metrics, parts, strict=True))


def build_objective(objective: str, *, recall_k: int = 10, judges=None) -> _Metric:
    """The metric for ``compile.objective``; ``hm`` needs ``judges`` (an ``MTRAGJudges`` module)."""
    if objective == "hm":
        if judges is None:
            raise ValueError("objective 'hm' needs the MTRAGEval judges")
        return HMMetric(judges)
    if objective == "recall":
        return RecallMetric(k=recall_k)
    if objective == "outcome":
        return OutcomeMetric()
    if objective == "both":
        return MeanOfMetrics(RecallMetric(k=recall_k), OutcomeMetric())
    raise ValueError(f"unknown objective {objective!r}")

