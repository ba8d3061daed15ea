"""How well each recorded signal separates each route from the others, before any policy is fitted on it.

A route policy is only as good as the signals it reads. For every signal and every expected route, the one-vs-rest ROC
AUC says how often a question of that route has a higher value of the signal than a question of another route (1.0:
always, 0.0: always lower, 0.5: no better than chance), with a bootstrap interval over questions. Computed on the
questions given, so on training questions it is what a researcher may look at when choosing signals, and on a transfer
set it shows whether a signal's separation carries over.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

from askfirst.evaluation.stats import bootstrap_interval
from askfirst.programs.askfirst.policy import ROUTES

RESAMPLES = 1000  # bootstrap resamples for each interval


def _auc(positive: np.ndarray, values: np.ndarray) -> np.ndarray:
    """ROC AUC of ``values`` for the ``positive`` questions along the last axis, ties counting one half.

    The Mann-Whitney identity, equal to scikit-learn's ``roc_auc_score`` (a test checks it), written over stacked
    resamples because ``roc_auc_score`` takes one at a time: 1,000 resamples of each of some 100 signal-route pairs
    would take minutes. NaN for a resample holding only one of the two sides.
    """
    ranks = rankdata(values, axis=-1)
    n_pos = positive.sum(axis=-1)
    n_neg = positive.shape[-1] - n_pos
    with np.errstate(divide="ignore", invalid="ignore"):
        return ((ranks * positive).sum(axis=-1) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def separation(rows: list[dict], *, seed: int = 0, resamples: int = RESAMPLES) -> dict:
    """Each signal's one-vs-rest AUC per expected route over ``rows`` (``policy_questions`` rows), strongest first.

    Returns:
        ``{"n", "expected": {route: n}, "signals": [{"signal", "strongest", "auc": {route: {"auc", "ci95"}}}]}``;
        ``ci95`` is the BCa bootstrap interval over questions, or ``None`` for a route so rare that some resamples hold
        none of its questions (the AUC is undefined there, so no interval is). A route is left out where every question, or none,
        expects it, and ``strongest`` is the largest ``|auc - 0.5|``. A signal a question did not record counts as 0
        there, as the policy reads it.
    """
    expected = np.array([row["expected"] for row in rows])
    names = sorted({name for row in rows for name in row["signals"]})
    matrix = np.array([[float(row["signals"].get(name, 0.0)) for name in names] for row in rows]).reshape(len(rows), len(names))
    routes = [route for route in ROUTES if 0 < (expected == route).sum() < len(rows)]
    table = []
    for j, name in enumerate(names):
        per_route = {}
        for route in routes:
            positive = expected == route
            low, high = bootstrap_interval((positive, matrix[:, j]), _auc, samples=resamples, seed=seed, vectorized=True)
            interval = [low, high] if np.isfinite(low) and np.isfinite(high) else None
            per_route[route] = {"auc": float(_auc(positive, matrix[:, j])), "ci95": interval}
        strongest = max((abs(v["auc"] - 0.5) for v in per_route.values()), default=0.0)
        table.append({"signal": name, "strongest": strongest, "auc": per_route})
    table.sort(key=lambda row: -row["strongest"])
    return {"n": len(rows), "expected": {route: int((expected == route).sum()) for route in routes}, "signals": table}
