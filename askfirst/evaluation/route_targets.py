"""The route rates a careful advisor is held to: how often a program says "I don't know" or asks on ANSWERABLE tasks,
says "I don't know" on UNANSWERABLE ones and asks on UNDERSPECIFIED ones, from scored questions' expected and taken
routes."""

from __future__ import annotations

from collections import Counter

from askfirst.evaluation.stats import proportion_ci

ROUTE_TARGETS = (  # (label, expected route, route taken, whether the share must stay below the bound, bound)
    ('"I don\'t know" on ANSWERABLE (target < 15%)', "answer", "idk", True, 0.15),
    ("clarifying on ANSWERABLE (target < 15%)", "answer", "clarify", True, 0.15),
    ('"I don\'t know" on UNANSWERABLE (target >= 50%)', "idk", "idk", False, 0.50),
    ("clarifying on UNDERSPECIFIED (target >= 33%)", "clarify", "clarify", False, 0.33),
)


def _routes_taken(scores: list[dict]) -> dict[str, Counter]:
    """Per expected route, how many questions took each route (``expected_route`` and ``route`` of each score row)."""
    taken: dict[str, Counter] = {}
    for row in scores:
        taken.setdefault(row["expected_route"], Counter())[row["route"]] += 1
    return taken


def route_rates(scores: list[dict]) -> dict[str, dict]:
    """Each target's share of its expected route's questions, by label: ``n``, ``hits``, ``share``, its Wilson ``ci95``
    and whether the share meets the target (``met``); a target whose expected route no question has is left out."""
    taken, rates = _routes_taken(scores), {}
    for label, expected, route, below, bound in ROUTE_TARGETS:
        n = sum(taken.get(expected, Counter()).values())
        if n:
            hits = taken[expected][route]
            share = hits / n
            rates[label] = {"n": n, "hits": hits, "share": share, "ci95": list(proportion_ci(hits, n)),
                            "met": share < bound if below else share >= bound}
    return rates
