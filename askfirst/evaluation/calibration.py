"""How well a program's probability of answerability matches the questions' answerability labels.

The askfirst and notes programs record ``P(answerable)`` (``extras.p_answerable``): the label distribution's mass on
ANSWERABLE and PARTIAL where llama.cpp gives log-probabilities, else a generated confidence. A question counts as
answerable when its expected route answers (ANSWERABLE or PARTIAL). Three figures, each over the questions whose
assessment gave a probability (a gated question, forced to 0 with no assessment, is left out):

- AUC: how well the probability ranks answerable above other questions (what a threshold can use);
- Brier score: the mean squared gap between probability and label;
- ECE: the expected calibration error over equal-width bins (what the probability's scale is worth).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from askfirst.programs.common.routes import ANSWERING_ROUTES


def expected_calibration_error(p: Sequence[float], y: Sequence[bool], *, bins: int = 10) -> float:
    """The bin-size-weighted mean of |mean probability - share answerable| over ``bins`` equal-width bins of [0, 1]."""
    p, y = np.asarray(p, dtype=float), np.asarray(y, dtype=float)
    if p.size == 0:
        raise ValueError("calibration needs at least one probability")
    # The top edge belongs to the last bin, so P = 1.0 is not a bin of its own.
    which = np.minimum((p * bins).astype(int), bins - 1)
    gap = sum(abs(p[which == b].mean() - y[which == b].mean()) * np.sum(which == b) for b in np.unique(which))
    return float(gap / p.size)


def answerability_calibration(rows: Sequence[dict], *, bins: int = 10) -> dict:
    """Calibration of ``P(answerable)`` over scored rows.

    Args:
        rows: Per-question scores with ``p_answerable`` (``None`` where there was no assessment) and ``expected_route``.
        bins: Equal-width bins for the ECE.

    Returns:
        ``answerability_n`` (questions with a probability), ``answerability_share`` (of them answerable),
        ``mean_p_answerable``, ``answerability_auc`` (``None`` unless both kinds are present), ``answerability_brier``
        and ``answerability_ece``; an empty dict when no row has a probability.
    """
    from sklearn.metrics import brier_score_loss, roc_auc_score

    pairs = [(float(r["p_answerable"]), r["expected_route"] in ANSWERING_ROUTES) for r in rows if r.get("p_answerable") is not None]
    if not pairs:
        return {}
    p, y = np.array([q for q, _ in pairs]), np.array([a for _, a in pairs])
    both = 0 < y.sum() < y.size
    return {"answerability_n": int(y.size), "answerability_share": float(y.mean()), "mean_p_answerable": float(p.mean()),
            "answerability_auc": float(roc_auc_score(y, p)) if both else None,
            "answerability_brier": float(brier_score_loss(y, p, pos_label=True)),
            "answerability_ece": expected_calibration_error(p, y, bins=bins)}
