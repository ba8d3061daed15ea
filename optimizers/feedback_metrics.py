"""Metrics in the two forms DSPy's optimisers take.

- GEPA form: ``metric(gold, pred, trace=None, pred_name=None, pred_trace=None)`` returns
  ``dspy.Prediction(score=…, feedback=…)``, where the feedback says what went wrong (missed gold passages,
  wrong route, an "I don't know" on an answerable question, a missing clarification).
- Float form (``metric.as_float()``) for ``dspy.Evaluate`` and MIPROv2. A ``dspy.Prediction`` is truthy
  even at score 0, so MIPROv2's bootstrapping would accept every demo if it were handed one.
"""

from __future__ import annotations

import dspy

from askfirst.evaluation.runner import prediction_record
from askfirst.evaluation.retrieval_metrics import recall_at_k
from askfirst.evaluation.scoring import score_prediction


def _record(gold, pred) -> dict:
    return prediction_record(gold, pred, seconds=0.0, lm_calls=0)


class _Metric:
    name = "metric"
    multi_objective = False  # True: the GEPA form also returns ``objective_scores`` for an objective frontier

    def applies(self, gold) -> bool:
        """Whether this metric scores ``gold`` at all (a question it does not apply to must not count as a success)."""
        return True

    def score(self, gold, pred) -> tuple[float, str]:
        raise NotImplementedError

    def __call__(self, gold, pred, trace=None, pred_name=None, pred_trace=None) -> dspy.Prediction:
        score, feedback = self.score(gold, pred)
        return dspy.Prediction(score=score, feedback=feedback)

    def as_float(self):
        def metric(gold, pred, trace=None) -> float:
            return self.score(gold, pred)[0]

        metric.__name__ = self.name
        return metric


class RecallMetric(_Metric):
    """Recall@k of the program's ranking against the gold passages (documents), with the missed ids as feedback.

    The ranking is the re-ranked candidates followed by the rest of the fused pool (``ranked_docs``), so
    recall@10 is MTRAG's Recall@10 even when only a few passages become evidence.
    """

    def __init__(self, *, k: int = 10):
        self.k = k
        self.name = f"recall@{k}"

    @staticmethod
    def relevant(gold) -> dict:
        """The judged passages of ``gold``: its qrels, else each gold passage at relevance 1."""
        return dict(gold.get("qrels") or {}) or {d: 1 for d in gold.get("gold_passages") or []}

    def applies(self, gold) -> bool:
        """Only questions with gold passages: one without them says nothing about retrieval."""
        return bool(self.relevant(gold))

    def score(self, gold, pred) -> tuple[float, str]:
        rec = _record(gold, pred)
        relevant = self.relevant(gold)
        if not relevant:
            raise ValueError(f"recall@{self.k} does not apply to {gold.get('id')!r}: it has no gold passages (check applies() first)")
        top = rec["ranked_docs"][: self.k]
        value = recall_at_k(top, relevant, self.k)
        missed = sorted(set(relevant) - set(top))
        if not missed:
            return value, f"All gold passages were retrieved in the top {self.k}."
        return value, (f"Recall@{self.k} = {value:.2f}. Missed gold passages: {', '.join(missed)}. "
                       f"Retrieved instead: {', '.join(top) or 'nothing'}. "
                       f"Queries used: {rec['queries']}.")


class OutcomeMetric(_Metric):
    """1 when the reply takes the expected route (and, where gold answers exist, contains one), else 0."""

    name = "outcome"

    def score(self, gold, pred) -> tuple[float, str]:
        rec = _record(gold, pred)
        s = score_prediction(gold, rec, k=5)
        route, expected = s["route"], s["expected_route"]
        if s["outcome_correct"]:
            return 1.0, f"Correct: the reply took the expected route '{expected}'."
        if route == "error":
            return 0.0, f"A step failed to produce a parseable reply: {rec['answer']}"
        if route != expected:
            why = {
                ("answer", "idk"): "It said 'I don't know' although the passages answer the question.",
                ("answer", "clarify"): "It asked for clarification although the question is specific and answerable.",
                ("clarify", "answer"): "The question is ambiguous; it should have asked which one the user means"
                                       + (f" (e.g. {', '.join(gold.clarification_options)})" if gold.get("clarification_options") else "") + ".",
                ("idk", "answer"): "The passages do not contain the answer; it should have said it does not know instead of answering.",
                ("partial", "answer"): "Only part of the question is answerable; it should have answered that part and said what is missing.",
            }.get((expected, route), f"It took route '{route}' where '{expected}' was expected.")
            return 0.0, why
        return 0.0, f"Right route '{route}', but the answer contains none of the gold answers {gold.gold_answers}: {rec['answer'][:300]!r}"


class HMMetric(_Metric):
    """Per-question IDK-conditioned harmonic mean of RL_F, RB_llm and RB_agg (MTRAGEval), judged by ``judges``.

    The leaderboard's HM is taken over per-metric means; per question, the harmonic mean of the three
    conditioned scores is the proxy an optimiser can use, and the feedback names the failing part.
    """

    name = "hm"

    def __init__(self, judges):
        self.judges = judges

    def score(self, gold, pred) -> tuple[float, str]:
        if pred.route == "error":
            return 0.0, f"A step failed to produce a parseable reply: {pred.answer}"
        from askfirst.evaluation.mtrag_judges import judge_reply

        out = judge_reply(self.judges, gold, pred.answer, [p.text for p in pred.get("evidence") or []])
        parts = ", ".join(f"{m}={v:.2f}" for m, v in out.conditioned.items())
        if gold.answerability == "UNDERSPECIFIED":
            why = "It asked for clarification, as the ambiguous question needs." if out.clarification == 1 else "The question is ambiguous; the reply should ask the user which reading they mean."
        elif gold.answerability in ("UNANSWERABLE", "CONVERSATIONAL"):
            why = "It said it does not know, as it should." if out.idk == 1 else "The documents do not answer this; the reply should say it does not know."
        elif out.idk == 1:
            why = "It said 'I don't know' on an answerable question, which scores 0 on every metric."
        else:
            weakest = min(out.conditioned, key=out.conditioned.get)
            why = f"Answered; the weakest part is {weakest} ({'unsupported claims' if weakest == 'RL_F' else 'distance from the reference answer'})."
        return out.hm, f"{why} Conditioned scores: {parts}."


class StrEMMetric(_Metric):
    """STR-EM of the (long) answer for questions with ``qa_pairs`` (ASQA, AmbigNQ); the feedback names the
    readings whose short answer is missing."""

    name = "str_em"

    def applies(self, gold) -> bool:
        return bool(gold.get("qa_pairs"))

    def score(self, gold, pred) -> tuple[float, str]:
        from askfirst.evaluation.ambiguity_metrics import str_em

        pairs = gold.get("qa_pairs")
        if not pairs:
            return 0.0, "This question has no annotated readings, so STR-EM does not apply."
        if pred.route == "error":
            return 0.0, f"A step failed to produce a parseable reply: {pred.answer}"
        value = str_em(pred.answer, [aliases for _, aliases in pairs])
        missing = [f"{q} (e.g. {aliases[0]})" for q, aliases in pairs if aliases and str_em(pred.answer, [aliases]) == 0]
        if not missing:
            return value, "The answer covers the short answer of every reading."
        return value, f"STR-EM = {value:.2f}. The answer misses these readings: " + "; ".join(missing) + "."
