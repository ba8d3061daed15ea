"""The metric an optimiser maximises, chosen by ``compile.objective``."""

from __future__ import annotations

import dspy

from askfirst.optimizers.feedback_metrics import HMMetric, OutcomeMetric, RecallMetric, StrEMMetric, _Metric


class MeanOfMetrics(_Metric):
    """The unweighted mean of several metrics' scores, with all their feedback and each part as an objective.

    Objective 'both': GEPA keeps a Pareto frontier per objective and per validation example
    (``frontier_type="hybrid"``), so a candidate that is best at recall alone, or at outcome alone, survives
    as a parent. The scalar that picks the final program (and that MIPROv2 maximises) is the unweighted mean:
    recall and outcome count equally.
    """

    def __init__(self, *metrics: _Metric):
        self.metrics = metrics
        self.name = "mean(" + ",".join(m.name for m in metrics) + ")"

    multi_objective = True

    def _parts(self, gold, pred) -> list[tuple[float, str]]:
        return [m.score(gold, pred) for m in self.metrics]

    def score(self, gold, pred) -> tuple[float, str]:
        parts = self._parts(gold, pred)
        return sum(p[0] for p in parts) / len(parts), "\n".join(f"[{m.name}] {p[1]}" for m, p in zip(self.metrics, parts, strict=True))

    def __call__(self, gold, pred, trace=None, pred_name=None, pred_trace=None) -> dspy.Prediction:
        parts = self._parts(gold, pred)
        return dspy.Prediction(
            score=sum(p[0] for p in parts) / len(parts),
            feedback="\n".join(f"[{m.name}] {p[1]}" for m, p in zip(self.metrics, parts, strict=True)),
            objective_scores={m.name: p[0] for m, p in zip(self.metrics, parts, strict=True)},
        )


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
    if objective == "str_em":
        return StrEMMetric()
    if objective == "both":
        return MeanOfMetrics(RecallMetric(k=recall_k), OutcomeMetric())
    raise ValueError(f"unknown objective {objective!r}")

