"""Tune the probabilistic abstention threshold against MTRAGEval's IDK-conditioned HM on a validation set.

The SemEval-2026 system's classifier abstained far too often; its authors proposed routing on the
classifier's confidence with a threshold tuned on HM. For each validation question the program runs once;
the two replies a threshold can choose between (the answer-side reply and "I don't know") are each judged
once; every candidate threshold is then scored without further LM calls.
"""

from __future__ import annotations

from pathlib import Path

import dspy

from askfirst.datasets.jsonl import each_resumably

from askfirst.programs.common.answerability import p_answerable
from askfirst.evaluation.mtrag_judges import aggregate_hm, judge_reply
from askfirst.programs.common.routes import ANSWERING_ROUTES, IDK_MESSAGE

DEFAULT_CANDIDATES = tuple(round(i * 0.05, 2) for i in range(21))
JUDGED = ("fixed", "answer", "idk")


def _question_row(program, example, judges) -> dict:
    """The judged replies a threshold chooses between for one question."""
    pred = program(conversation=example.conversation)
    passages = [p.text for p in pred.get("evidence") or []]
    if pred.label is None or pred.label == "UNDERSPECIFIED" or pred.route == "error":
        return {"fixed": judge_reply(judges, example, pred.answer, passages)}
    if pred.route in ANSWERING_ROUTES:
        answer_reply = pred.answer
    else:  # the classifier abstained: write the reply a low threshold would give instead
        route = "partial" if pred.label == "PARTIAL" else "answer"
        answer_reply = program.respond(example.conversation, route=route, evidence=pred.evidence).answer
    p = pred.get("p_answerable")  # measured from the labels' log-probabilities, or derived from the written confidence
    return {"p": p_answerable(pred.label, pred.confidence) if p is None else p, "answer": judge_reply(judges, example, answer_reply, passages),
            "idk": judge_reply(judges, example, IDK_MESSAGE, passages)}


def tune_threshold(program, valset: list[dspy.Example], judges, *, candidates=DEFAULT_CANDIDATES, checkpoint: Path | None = None) -> dict:
    """Return ``{"threshold", "HM", "table": [{"threshold", "HM", "idk_rate", ...}], "n_failed"}`` for ``program``
    (routing by label).

    Questions the classifier calls UNDERSPECIFIED, or where the router is off or a step failed, keep their
    reply at every threshold. With ``checkpoint`` (a JSONL file) each question's judged replies are appended as
    they are done, a rerun judges only the rest, and a question that fails is recorded with its error, left
    out of the table and tried again on the next run.
    """
    def judged(example) -> dict:
        row = _question_row(program, example, judges)
        return {k: (dict(v.items()) if k in JUDGED else v) for k, v in row.items()}

    done = each_resumably(valset, judged, checkpoint=checkpoint, what="tuning")
    rows = [{k: (dspy.Prediction(**v) if k in JUDGED else v) for k, v in done[e.id].items() if k != "id"}
            for e in valset if e.id in done and "error" not in done[e.id]]
    if not rows:
        raise RuntimeError("no validation question could be judged; see the warnings above")
    table = []
    for t in candidates:
        chosen = [r["fixed"] if "fixed" in r else (r["answer"] if r["p"] >= t else r["idk"]) for r in rows]
        table.append({"threshold": t, **aggregate_hm(chosen)})
    best = max(table, key=lambda r: (r["HM"], -abs(r["threshold"] - 0.5)))  # ties: the threshold nearest 0.5
    return {"threshold": best["threshold"], "HM": best["HM"], "table": table, "n_failed": len(valset) - len(rows)}
