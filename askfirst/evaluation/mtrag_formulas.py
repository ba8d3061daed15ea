"""The algorithmic parts of MTRAGEval's generation scores: RB_agg, IDK conditioning, the harmonic mean.

Formulas from ``../shared/docs/mtrag_eval_formulas.md`` (IBM/mt-rag-benchmark, current HEAD):

- ``RB_agg = 3RLE / (RL + RE + LE)`` (0 if any part is 0), where R = (recall similarity + 1) / 2 against the
  reference, L = ROUGE-L F, E = (max over passages of precision similarity + 1) / 2 (0 with no passages).
- Conditioning of each metric M per task: UNDERSPECIFIED -> 1 if the clarification judge said yes, else 0;
  UNANSWERABLE/CONVERSATIONAL -> 1 if the IDK judge said yes (1), else 0; otherwise 0 if the IDK judge said
  yes, else M (PARTIAL counts as ANSWERABLE; an IDK score of 0.5 keeps M).
- ``HM = 3 / (1/mean RL_F + 1/mean RB_llm + 1/mean RB_agg)`` over the conditioned per-task scores.

ROUGE-L is the ``rouge_score`` package's (what HF ``evaluate`` runs: lower-cased, non-alphanumerics to spaces,
articles kept, no stemming). BERTScore (deberta-xlarge-mnli) cannot be had offline here. ``SIMILARITIES``
names the stand-ins, and every judged score records which one it used:

- ``lexical`` (default): MTRAG's own fallback for R, token recall against the reference (SQuAD
  normalisation); E is the analogous token precision against each passage (MTRAG names no fallback for E).
- ``minilm``: the cosine similarity of all-MiniLM-L6-v2 embeddings for both (runs higher than rescaled
  BERTScore, so it is not comparable with published RB_agg figures).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import cache
from typing import Literal

from askfirst.evaluation.answer_metrics import normalize_answer

Similarity = Literal["lexical", "minilm"]
SIMILARITIES: tuple[str, ...] = ("lexical", "minilm")
# The two conditioning versions MTRAGEval has had: "2026-01" (the evaluation phase, used by the SemEval notes
# paper's 0.3774) has no UNDERSPECIFIED clause; "current" (keys M_idk_underspecified) adds it, checked first.
CONDITIONINGS: tuple[str, ...] = ("current", "2026-01")


@cache
def _rouge():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)


def rouge_l_f(prediction: str, reference: str) -> float:
    """ROUGE-L F-measure of ``prediction`` against ``reference`` by the ``rouge_score`` package, without stemming."""
    return _rouge().score(reference, prediction)["rougeL"].fmeasure


def _token_overlap(prediction: str, other: str) -> tuple[int, int, int]:
    pred, ref = normalize_answer(prediction).split(), normalize_answer(other).split()
    return sum((Counter(pred) & Counter(ref)).values()), len(pred), len(ref)


def token_recall(prediction: str, reference: str) -> float:
    """MTRAG's ``Recall``: the share of the reference's tokens the prediction has (SQuAD normalisation)."""
    common, _, n_ref = _token_overlap(prediction, reference)
    return common / n_ref if n_ref else 0.0


def token_precision(prediction: str, passage: str) -> float:
    """The share of the prediction's tokens that the passage has."""
    common, n_pred, _ = _token_overlap(prediction, passage)
    return common / n_pred if n_pred else 0.0


def rb_agg_lexical_parts(prediction: str, reference: str, passages: Sequence[str]) -> dict[str, float]:
    """RB_agg's three parts with MTRAG's lexical fallback: R = token recall, L = ROUGE-L F, E = the best token precision
    against a passage (each in [0, 1])."""
    return {"R": token_recall(prediction, reference), "L": rouge_l_f(prediction, reference),
            "E": max((token_precision(prediction, p) for p in passages), default=0.0)}


def rb_agg_lexical(prediction: str, reference: str, passages: Sequence[str]) -> float:
    """RB_agg with MTRAG's lexical fallback (see ``rb_agg_lexical_parts``)."""
    return harmonic3(**rb_agg_lexical_parts(prediction, reference, passages))


def harmonic3(R: float, L: float, E: float) -> float:
    """RB_agg from its parts: their harmonic mean, 0 when any part is 0."""
    if min(R, L, E) <= 0:
        return 0.0
    return 3 * R * L * E / (R * L + R * E + L * E)


def rb_agg(*, recall_sim: float, rouge_l: float, passage_sims: Sequence[float]) -> float:
    """RB_agg from a similarity to the reference, ROUGE-L, and similarities to each passage (each in [-1, 1])."""
    R = (recall_sim + 1) / 2
    E = (max(passage_sims) + 1) / 2 if passage_sims else 0.0
    return harmonic3(R, rouge_l, E)


def condition(value: float, *, answerability: str, idk: float, clarification: float | None, version: str = "current") -> float:
    """The conditioned score of one task: ``current`` is MTRAGEval's ``M_idk_underspecified``, ``2026-01`` its
    earlier ``M_idk`` (no UNDERSPECIFIED clause: such a task is scored like an answerable one)."""
    if version not in CONDITIONINGS:
        raise ValueError(f"unknown conditioning {version!r}; choose from {', '.join(CONDITIONINGS)}")
    if version == "current" and answerability == "UNDERSPECIFIED":
        return 1.0 if clarification == 1 else 0.0
    if answerability in ("UNANSWERABLE", "CONVERSATIONAL"):
        return 1.0 if idk == 1 else 0.0
    if idk == 1:
        return 0.0
    return value


def harmonic_mean(values: Sequence[float]) -> float:
    if not values or min(values) <= 0:
        return 0.0
    return len(values) / sum(1 / v for v in values)
