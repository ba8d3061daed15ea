"""The metric an optimiser maximises, chosen by ``compile.objective``."""

from __future__ import annotations

import dspy

from askfirst.config import ConfigError
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

    def applies(self, gold) -> bool:
        return any(m.applies(gold) for m in self.metrics)

    def _parts(self, gold, pred) -> dict[str, tuple[float, str]]:
        """The score and feedback of each part that applies to ``gold`` (recall skips a question without gold passages)."""
        return {m.name: m.score(gold, pred) for m in self.metrics if m.applies(gold)}

    def score(self, gold, pred) -> tuple[float, str]:
        parts = self._parts(gold, pred)
        return sum(p[0] for p in parts.values()) / len(parts), "\n".join(f"[{name}] {p[1]}" for name, p in parts.items())

    def __call__(self, gold, pred, trace=None, pred_name=None, pred_trace=None) -> dspy.Prediction:
        parts = self._parts(gold, pred)
        # GEPA averages each objective over the examples that report it, so a part that does not apply is left out.
        return dspy.Prediction(score=sum(p[0] for p in parts.values()) / len(parts),
                               feedback="\n".join(f"[{name}] {p[1]}" for name, p in parts.items()),
                               objective_scores={name: p[0] for name, p in parts.items()})


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
    if objective == "gated_recall":
        raise ConfigError("compile.objective=gated_recall scores a rewrite's search through the retrieval gate: it needs compile.optimizer=rewrite_demos")
    raise ValueError(f"unknown objective {objective!r}")

