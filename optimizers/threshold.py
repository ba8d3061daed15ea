"""Tune the probabilistic abstention threshold against MTRAGEval's IDK-conditioned HM on a validation set.

The SemEval-2026 system's classifier abstained far too often; its authors proposed routing on the
classifier's confidence with a threshold tuned on HM. For each validation question the program runs once;
the two replies a threshold can choose between (the answer-side reply and "I don't know") are each judged
once; every candidate threshold is then scored without further LM calls.
"""

from __future__ import annotations

import dspy

from askfirst.programs.common.answerability import p_answerable
from askfirst.programs.mtrag_judges import aggregate_hm, judge_reply
from askfirst.programs.common.routes import IDK_MESSAGE

DEFAULT_CANDIDATES = tuple(round(i * 0.05, 2) for i in range(21))


def tune_threshold(program, valset: list[dspy.Example], judges, *, candidates=DEFAULT_CANDIDATES) -> dict:
    """Return ``{"threshold", "HM", "table": [{"threshold", "HM", "idk_rate", ...}]}`` for ``program`` (routing by label).

    Questions the classifier calls UNDERSPECIFIED, or where the router is off or a step failed, keep their
    reply at every threshold.
    """
    rows = []
    for example in valset:
        pred = program(conversation=example.conversation)
        passages = [p.text for p in pred.get("evidence") or []]
        fixed = pred.label is None or pred.label == "UNDERSPECIFIED" or pred.route == "error"
        if fixed:
            rows.append({"fixed": judge_reply(judges, example, pred.answer, passages)})
            continue
        if pred.route in ("answer", "partial"):
            answer_reply = pred.answer
        else:  # the classifier abstained: write the reply a low threshold would give instead
            route = "partial" if pred.label == "PARTIAL" else "answer"
            answer_reply = program.respond(example.conversation, route=route, evidence=pred.evidence).answer
        rows.append({"p": p_answerable(pred.label, pred.confidence), "answer": judge_reply(judges, example, answer_reply, passages),
                     "idk": judge_reply(judges, example, IDK_MESSAGE, passages)})
    table = []
    for t in candidates:
        chosen = [r["fixed"] if "fixed" in r else (r["answer"] if r["p"] >= t else r["idk"]) for r in rows]
        table.append({"threshold": t, **aggregate_hm(chosen)})
    best = max(table, key=lambda r: (r["HM"], -abs(r["threshold"] - 0.5)))  # ties: the threshold nearest 0.5
    return {"threshold": best["threshold"], "HM": best["HM"], "table": table}
