"""Reciprocal rank fusion (Cormack, Clarke and Buettcher, SIGIR 2009)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def reciprocal_rank_fusion(rankings: Iterable[Sequence[str]], *, k: int = 60) -> list[tuple[str, float]]:
    """Fuse ranked id lists: ``score(d) = sum over lists of 1 / (k + rank(d))``, ranks from 1.

    Ties are broken by first appearance so the result is deterministic.

    Returns:
        ``(id, score)`` pairs, best first.
    """
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))
