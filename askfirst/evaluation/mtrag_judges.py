"""MTRAGEval's judged scores for one reply: IDK, clarification, faithfulness (RL_F), LLM rating (RB_llm), RB_agg."""

from __future__ import annotations

import dspy

from askfirst.evaluation.mtrag_idk_prompt import EXAMPLES as IDK_EXAMPLES
from askfirst.evaluation.mtrag_formulas import CONDITIONINGS, SIMILARITIES, condition, harmonic3, harmonic_mean, rb_agg_lexical_parts, rouge_l_f
from askfirst.programs.common.robust import StepFailed, call_predictor
from askfirst.signatures.judges import JudgeAnswerQuality, JudgeClarification, JudgeFaithfulness, JudgeIDK

IDK_SCORE = {"yes": 1.0, "no": 0.0, "partial": 0.5}

# MTRAGEval's IDK judge is a few-shot prompt; its instruction is JudgeIDK's and its examples are these.
IDK_DEMOS = [dspy.Example(inquiry=inquiry, response=response, verdict=verdict) for inquiry, response, verdict in IDK_EXAMPLES]
METRICS = ("RL_F", "RB_llm", "RB_agg")


def conversation_text(turns: list[dict]) -> str:
    return "\n".join(f"{t['role']}: {t['content']}" for t in turns)


class MTRAGJudges(dspy.Module):
    """The four LLM judges plus the algorithmic RB_agg, with MTRAGEval's fallbacks for unparseable verdicts
    (IDK and clarification -> 0.5, rating -> 0.5). Judges run on whatever LM is configured (``judge_lm``).

    Args:
        embedder: Gives the embedding similarities of ``similarity="minilm"``.
        retries: Extra attempts on an unparseable judge reply before its fallback value is used.
        similarity: What stands in for BERTScore in RB_agg (``mtrag_formulas.SIMILARITIES``); recorded with every score.
    """

    def __init__(self, embedder, *, retries: int = 1, similarity: str = "lexical"):
        super().__init__()
        if similarity not in SIMILARITIES:
            raise ValueError(f"unknown RB_agg similarity {similarity!r}; choose from {', '.join(SIMILARITIES)}")
        self.embedder = embedder
        self.retries = retries
        self.similarity = similarity
        self.idk = dspy.Predict(JudgeIDK)
        self.idk.demos = list(IDK_DEMOS)
        self.clarification = dspy.Predict(JudgeClarification)
        self.faithfulness = dspy.Predict(JudgeFaithfulness)
        self.quality = dspy.Predict(JudgeAnswerQuality)

    def _call(self, predictor, step, **inputs):
        try:
            return call_predictor(predictor, step, retries=self.retries, **inputs)
        except StepFailed:
            return None

    def _rb_agg_parts(self, answer: str, reference: str, passages: list[str]) -> dict[str, float]:
        """RB_agg's parts R, L, E (kept per question, so a report can recompute RB_agg with another part)."""
        if self.similarity == "lexical":
            return rb_agg_lexical_parts(answer, reference, passages)
        vectors = self.embedder.embed([answer, reference, *passages])
        sims = [float(s) for s in vectors[2:] @ vectors[0]]
        return {"R": (float(vectors[1] @ vectors[0]) + 1) / 2, "L": rouge_l_f(answer, reference), "E": (max(sims) + 1) / 2 if sims else 0.0}

    def forward(self, *, turns: list[dict], answer: str, answerability: str, reference: str, passages: list[str]) -> dspy.Prediction:
        conv = conversation_text(turns)
        out = self._call(self.idk, "judge_idk", inquiry=conv, response=answer)  # the whole conversation, as MTRAGEval's
        idk = IDK_SCORE[out.verdict] if out else 0.5
        clarification = None
        if answerability == "UNDERSPECIFIED":
            out = self._call(self.clarification, "judge_clarification", response=answer)  # MTRAGEval's judge reads the reply alone
            clarification = (1.0 if out.decision == "yes" else 0.0) if out else 0.5
        raw: dict[str, float | None] = dict.fromkeys(METRICS)
        parts: dict[str, float] | None = None
        # The judged metrics only matter where a conditioning keeps them (UNDERSPECIFIED: the 2026-01 version);
        # skipping the rest saves most judge calls.
        if answerability not in ("UNANSWERABLE", "CONVERSATIONAL") and idk != 1:
            docs = "\n\n".join(passages)
            out = self._call(self.faithfulness, "judge_faithfulness", conversation=conv, contexts=docs, answer=answer)
            raw["RL_F"] = (sum(v == "supported" for v in out.verdicts) / len(out.verdicts) if out.verdicts else 0.0) if out else 0.0
            out = self._call(self.quality, "judge_quality", conversation=conv, documents=docs, reference=reference, answer=answer)
            raw["RB_llm"] = out.rating / 10 if out and 1 <= out.rating <= 10 else 0.5
            parts = self._rb_agg_parts(answer, reference, passages)
            raw["RB_agg"] = harmonic3(**parts)
        by_version = {v: {m: condition(raw[m] or 0.0, answerability=answerability, idk=idk, clarification=clarification, version=v)
                          for m in METRICS} for v in CONDITIONINGS}
        conditioned = by_version["current"]
        return dspy.Prediction(idk=idk, clarification=clarification, raw=raw, conditioned=conditioned,
                               conditioned_2026_01=by_version["2026-01"], hm=harmonic_mean([conditioned[m] for m in METRICS]),
                               similarity=self.similarity, rb_agg_parts=parts)


def judge_reply(judges: MTRAGJudges, example, answer: str, passages: list[str]) -> dspy.Prediction:
    """Judge one reply to ``example``; the reference is its reference answer, else its gold short answers."""
    reference = example.get("reference") or " ".join(example.get("gold_answers") or [])
    return judges(turns=example.conversation, answer=answer, answerability=example.answerability, reference=reference, passages=passages)


def aggregate_hm(rows: list[dspy.Prediction]) -> dict:
    """Means of the conditioned scores and their harmonic mean (the leaderboard's HM) under the current
    conditioning, ``HM_2026_01`` under the January 2026 one, the IDK rate (replies the IDK judge called "I don't know",
    the only verdict the conditioning counts as one), the share it called partial, and the RB_agg similarity used."""
    means = {m: sum(r.conditioned[m] for r in rows) / len(rows) for m in METRICS}
    early = {m: sum((r.get("conditioned_2026_01") or r.conditioned)[m] for r in rows) / len(rows) for m in METRICS}
    return {**{f"{m}_cond": v for m, v in means.items()}, "HM": harmonic_mean(list(means.values())),
            **{f"{m}_cond_2026_01": v for m, v in early.items()}, "HM_2026_01": harmonic_mean(list(early.values())),
            "idk_rate": sum(r.idk == 1 for r in rows) / len(rows),
            "idk_partial_rate": sum(r.idk == IDK_SCORE["partial"] for r in rows) / len(rows),
            "rb_agg_similarity": ",".join(sorted({r.get("similarity") or "minilm" for r in rows}))}
