"""Paired bootstrap confidence intervals for differences between two systems on the same questions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def paired_bootstrap(a: Sequence[float], b: Sequence[float], *, samples: int = 2000, seed: int = 0, level: float = 0.95) -> tuple[float, float, float]:
    """Mean of ``a - b`` and its percentile bootstrap interval, resampling questions (pairs kept together).

    Returns:
        ``(difference, low, high)``.
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.size == 0:
        raise ValueError("paired bootstrap needs two non-empty score lists of equal length")
    diff = x - y
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, diff.size, size=(samples, diff.size))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    return float(diff.mean()), float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))
