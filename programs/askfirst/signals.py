"""The signals the askfirst program's stages record about a question, as named numbers a route policy reads.

Each is computed for every question (``policy: fitted``), recorded in the reply's ``signals`` (so ``predictions.jsonl``
holds them, readable without an LM) and documented here with its range. A new idea for the decision is a new entry.
"""

from __future__ import annotations

from askfirst.programs.askfirst.question_form import question_form
from askfirst.programs.common.answerability import LABELS

FEATURES: dict[str, str] = {
    "follow_up": "1 when the question has earlier turns, else 0.",
    "turn_index": "How many user turns came before it (0-10).",
    "rewrite_refused": "1 when the standalone rewrite was refused and the user's turn searched, else 0.",
    "top_cosine": "The best dense cosine of the searched query over the collection (-1 to 1; 0 without a dense index).",
    "top_cosine_percentile": "The share of the collection's probe cosines (a passage's first sentence searched, to another document's passage) at or below the top cosine (0-1; 0 without a dense index).",
    "cosine_margin": "The best dense cosine minus the mean of the next nine (0 to 2): how far the top passage stands out.",
    "dangling": "1 when the question points at something it never names (a pronoun or demonstrative with nothing to stand for).",
    "topic_similarity": "A follow-up's best cosine to an earlier user turn when it names a thing by its kind only (1 otherwise).",
    "referent_cue": "How many words the question names only by a definite 'the' that no earlier turn has (0-5).",
    "cue_documents": "How many retrieved documents have such a word (0-10).",
    "parts": "How many parts the question is cut into (1-5).",
    "uncovered_share": "The share of its parts with two or more content words no retrieved passage or the collection has (0-1).",
    "unknown_words": "The most such words in one part (0-10).",
    **{f"p_{label.lower()}": f"The assessment's probability of {label} (0-1)." for label in LABELS},
    "key_terms_missing": "How many words of what the assessment says is asked about no retrieved passage has (0-10).",
    "divergence_asked": "1 when the per-passage answers were asked for (a first question asking for a fact), else 0.",
    "diverges": "1 when passages of different documents gave different answers, else 0.",
    "divergence_options": "How many readings divergence named (0-8).",
    "p_referent": "P(UNDERSPECIFIED) of the unnamed-referent check (0 when it is off).",
    "form_why": "1 when the question asks why, else 0.",
    "form_how_to": "1 when the question asks how to do something, else 0.",
    "form_yes_no": "1 when the question is a yes/no question, else 0.",
    "no_evidence": "1 when nothing was retrieved, else 0.",
    **{f"rules_{route}": f"1 when the hand-set rules, over these signals, route to {route}, else 0."
       for route in ("answer", "partial", "clarify", "idk")},
}
SIGNAL_SETS = {  # the feature sets a fit chooses between (on training folds)
    "signals": tuple(f for f in FEATURES if not f.startswith("rules_")),
    "signals+rules": tuple(FEATURES),
    "rules": tuple(f for f in FEATURES if f.startswith("rules_")),  # the rules' route, re-mapped where the labels say so
}


def with_rules(signals: dict[str, float], rules_route: str) -> dict[str, float]:
    """``signals`` with the rules' route as four indicators (``rules_<route>``)."""
    return signals | {f"rules_{route}": float(route == rules_route) for route in ("answer", "partial", "clarify", "idk")}


def _clip(value: float, low: float, high: float) -> float:
    return float(min(max(value, low), high))


def record_signals(extras: dict, *, question: str, turn_index: int, evidence: int, rules_route: str) -> dict[str, float]:
    """The signals of one question from what its stages recorded in ``extras`` (the reply's extras) and the rules' route."""
    switch, absent, ambiguity = extras.get("topic_switch") or {}, extras.get("absent_terms") or {}, extras.get("ambiguity") or {}
    parts = absent.get("parts") or []
    dist = extras.get("label_distribution") or {}
    divergence = ambiguity.get("divergence") or {}
    form = question_form(question)
    cue = extras.get("referent_cue") or []
    signals = {
        "follow_up": float(turn_index > 0),
        "turn_index": _clip(turn_index, 0, 10),
        "rewrite_refused": float(bool(extras.get("rewrite_refused"))),
        "top_cosine": _clip(extras.get("top_cosine") or 0.0, -1, 1),
        "top_cosine_percentile": _clip(extras.get("top_cosine_percentile") or 0.0, 0, 1),
        "cosine_margin": _clip(extras.get("cosine_margin") or 0.0, 0, 2),
        "dangling": float(bool(extras.get("dangling"))),
        "topic_similarity": _clip(1.0 if switch.get("similarity") is None else switch["similarity"], -1, 1),
        "referent_cue": _clip(len(cue), 0, 5),
        "cue_documents": _clip(extras.get("cue_documents") or 0, 0, 10),
        "parts": _clip(len(parts) or 1, 1, 5),
        "uncovered_share": (absent.get("uncovered", 0) / len(parts)) if parts else 0.0,
        "unknown_words": _clip(max((len(p["unknown"]) for p in parts), default=0), 0, 10),
        **{f"p_{label.lower()}": _clip(dist.get(label, 0.0), 0, 1) for label in LABELS},
        "key_terms_missing": _clip(len((extras.get("key_terms") or {}).get("missing") or []), 0, 10),
        "divergence_asked": float("candidates" in divergence),
        "diverges": float(bool(divergence.get("diverges"))),
        "divergence_options": _clip(len(ambiguity.get("options") or []), 0, 8),
        "p_referent": _clip((extras.get("referent") or {}).get("p_underspecified") or 0.0, 0, 1),
        "form_why": float(form == "why"),
        "form_how_to": float(form == "how-to"),
        "form_yes_no": float(form == "yes/no"),
        "no_evidence": float(evidence == 0),
    }
    signals = with_rules(signals, rules_route)
    assert set(signals) == set(FEATURES), "signals.FEATURES and record_signals must name the same signals"
    return signals
