"""Answer-level checks: SQuAD-style normalisation, containment of a gold answer, token F1."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)
# Hyphens, dashes and slashes join words ("a 500-word limit", "June/July"); the other punctuation sits inside a token
# ("4,200", "3.5") and is dropped, as SQuAD drops it.
_JOINERS = re.compile(r"[-\u2010-\u2015/]")


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation and articles, fold white space (the SQuAD evaluation's normalisation)."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCT)).split())


def contains_any(answer: str, golds: Sequence[str]) -> bool:
    """True when some gold answer, normalised, occurs in the normalised answer as whole tokens; a hyphen, dash or slash
    separates tokens here, so "a 500-word limit" contains "500" (SQuAD's EM and F1 keep its normalisation)."""
    padded = f" {normalize_answer(_JOINERS.sub(' ', answer))} "
    return any(f" {g} " in padded for g in (normalize_answer(_JOINERS.sub(" ", g)) for g in golds) if g)


def token_f1(answer: str, gold: str) -> float:
    """SQuAD v2's F1: token overlap; when either side normalises to nothing, 1 if both do, else 0."""
    pred, ref = normalize_answer(answer).split(), normalize_answer(gold).split()
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def squad_golds(golds: Sequence[str]) -> list[str]:
    """The gold answers as SQuAD v2's script takes them: those that normalise to something, else ``[""]``."""
    return [g for g in golds if normalize_answer(g)] or [""]


def best_token_f1(answer: str, golds: Sequence[str]) -> float:
    return max(token_f1(answer, g) for g in squad_golds(golds))


def exact_match(answer: str, golds: Sequence[str]) -> bool:
    """SQuAD exact match: the normalised answer equals some normalised gold answer (an empty answer matches a gold set
    that normalises to nothing, as in SQuAD v2's script)."""
    norm = normalize_answer(answer)
    return any(norm == normalize_answer(g) for g in squad_golds(golds))
