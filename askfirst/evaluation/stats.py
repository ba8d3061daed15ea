"""Confidence intervals: bootstrap intervals for a statistic of a set of questions (one system's, or the difference
between two systems on the same questions), and Wilson intervals for one system's share of questions (a route accuracy).

The bootstrap ones use ``scipy.stats.bootstrap`` with ``paired=True`` (questions are resampled, a question's values
stay together) and the bias-corrected and accelerated (BCa) interval.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats


def _interval(data: tuple[np.ndarray, ...], statistic: Callable, *, samples: int, seed: int, level: float,
              vectorized: bool = False) -> tuple[float, float]:
    """BCa, or the percentile interval where BCa is undefined (its acceleration needs varied jackknife values)."""
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", stats.DegenerateDataWarning)
            warnings.simplefilter("ignore", RuntimeWarning)  # BCa's acceleration on constant jackknife values: NaN, then percentile
            ci = stats.bootstrap(data, statistic, paired=True, vectorized=vectorized, n_resamples=samples, confidence_level=level,
                                 method=method, random_state=np.random.default_rng(seed)).confidence_interval
        if np.isfinite(ci.low) and np.isfinite(ci.high):
            break
    return float(ci.low), float(ci.high)


def _check(x: np.ndarray, y: np.ndarray) -> None:
    if x.shape != y.shape or x.shape[0] == 0:
        raise ValueError("paired bootstrap needs two non-empty score lists of equal length")


def paired_bootstrap(a: Sequence[float], b: Sequence[float], *, samples: int = 2000, seed: int = 0, level: float = 0.95) -> tuple[float, float, float]:
    """Mean of ``a - b`` and its BCa bootstrap interval.

    Returns:
        ``(difference, low, high)``; when every question has the same difference the interval is that value.
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    _check(x, y)
    diff = x - y
    if np.all(diff == diff[0]) or diff.size < 2:  # BCa is undefined on constant data; the interval is the value itself
        return float(diff.mean()), float(diff[0]), float(diff[0])
    low, high = _interval((x, y), lambda p, q: float(np.mean(p - q)), samples=samples, seed=seed, level=level)
    return float(diff.mean()), low, high


def paired_bootstrap_statistic(a: np.ndarray, b: np.ndarray, statistic: Callable[[np.ndarray], float], *, samples: int = 2000,
                               seed: int = 0, level: float = 0.95) -> tuple[float, float, float]:
    """``statistic(a) - statistic(b)`` for a statistic of a whole set of per-question rows (HM is a harmonic mean
    of per-metric means, not a mean of per-question values), with its BCa interval from resampled questions.

    Args:
        a, b: ``(questions, ...)`` arrays, row ``i`` of each being question ``i``.
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    _check(x, y)
    value = statistic(x) - statistic(y)
    if x.shape[0] < 2 or np.allclose(x, y):
        return float(value), float(value), float(value)
    low, high = bootstrap_interval((x, y), lambda p, q: statistic(p) - statistic(q), samples=samples, seed=seed, level=level)
    return float(value), low, high


def bootstrap_interval(arrays: Sequence[np.ndarray], statistic: Callable[..., float], *, samples: int = 2000, seed: int = 0,
                       level: float = 0.95, vectorized: bool = False) -> tuple[float, float]:
    """BCa interval of ``statistic(*arrays)`` over resampled questions, for a statistic of a whole set (an AUC, HM).

    Args:
        arrays: arrays whose row ``i`` is question ``i``; a resample takes the same rows of each.
        statistic: called with the resampled arrays, in order; it may return NaN for a resample it is undefined on,
            and then the interval is NaN where BCa and the percentile interval both need that resample.
        vectorized: ``statistic`` takes 1-D ``arrays`` stacked into ``(resamples, questions)`` and returns one value
            per row (scipy's ``vectorized``), which is much faster than one call per resample.
    """
    data = [np.asarray(a) for a in arrays]
    index = np.arange(data[0].shape[0])

    def resampled(i, axis=-1):  # scipy passes ``axis`` to a vectorized statistic; the resamples are on the last one
        return statistic(*(a[i.astype(int)] for a in data))

    return _interval((index,), resampled, samples=samples, seed=seed, level=level, vectorized=vectorized)


def proportion_ci(successes: int, n: int, *, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of ``successes / n`` (``scipy.stats.binomtest``): unlike the normal approximation it
    stays inside [0, 1] and is usable for the handful of questions a route class often has."""
    if n <= 0:
        raise ValueError("a proportion needs at least one question")
    ci = stats.binomtest(successes, n).proportion_ci(confidence_level=level, method="wilson")
    return float(ci.low), float(ci.high)
