"""The algorithmic parts of MTRAGEval's generation scores: RB_agg, IDK conditioning, the harmonic mean.

Formulas from ``../shared/docs/mtrag_eval_formulas.md`` (IBM/mt-rag-benchmark, current HEAD):

- ``RB_agg = 3RLE / (RL + RE + LE)`` (0 if any part is 0), where R = (recall similarity + 1) / 2 against the
  reference, L = ROUGE-L F, E = (max over passages of precision similarity + 1) / 2 (0 with no passages).
- Conditioning of each metric M per task: UNDERSPECIFIED -> 1 if the clarification judge said yes, else 0;
  UNANSWERABLE/CONVERSATIONAL -> 1 if the IDK judge said yes (1), else 0; otherwise 0 if the IDK judge said
  yes, else M (PARTIAL counts as ANSWERABLE; an IDK score of 0.5 keeps M).
- ``HM = 3 / (1/mean RL_F + 1/mean RB_llm + 1/mean RB_agg)`` over the conditioned per-task scores.

BERTScore (deberta-xlarge-mnli) cannot be had offline here; R and E use the cosine similarity of
all-MiniLM-L6-v2 embeddings instead, reported under the name ``emb_sim`` so nobody mistakes it for BERTScore.
"""

from __future__ import annotations

from collections.abc import Sequence

from askfirst.optimizers.answer_metrics import normalize_answer


def rouge_l_f(prediction: str, reference: str) -> float:
    """ROUGE-L F-measure on normalised tokens (longest common subsequence), as HF ``evaluate``'s rougeL without stemming."""
    p, r = normalize_answer(prediction).split(), normalize_answer(reference).split()
    if not p or not r:
        return 0.0
    prev = [0] * (len(r) + 1)
    for tok in p:
        cur = [0] * (len(r) + 1)
        for j, ref_tok in enumerate(r, start=1):
            cur[j] = prev[j - 1] + 1 if tok == ref_tok else max(prev[j], cur[j - 1])
        prev = cur
    lcs = prev[-1]
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(p), lcs / len(r)
    return 2 * precision * recall / (precision + recall)


def rb_agg(*, recall_sim: float, rouge_l: float, passage_sims: Sequence[float]) -> float:
    """RB_agg from a similarity to the reference, ROUGE-L, and similarities to each passage (each in [-1, 1])."""
    R = (recall_sim + 1) / 2
    L = rouge_l
    E = (max(passage_sims) + 1) / 2 if passage_sims else 0.0
    if min(R, L, E) <= 0:
        return 0.0
    return 3 * R * L * E / (R * L + R * E + L * E)


def condition(value: float, *, answerability: str, idk: float, clarification: float | None) -> float:
    """The IDK- and underspecified-conditioned score of one task (MTRAGEval's ``M_idk_underspecified``)."""
    if answerability == "UNDERSPECIFIED":
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
